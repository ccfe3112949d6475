#include "controllers/loadtest/loadtest_controller.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "api/errors/errors.h"
#include "api/json/yaml_to_json.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "api/selector/label_selector.h"
#include "api/types/event.h"
#include "api/types/owner_reference.h"
#include "api/types/pod.h"
#include "api/types/service.h"
#include "base/status_macros.h"
#include "controllers/loadtest/loadtest_types.h"
#include "controllers/loadtest/run_result.h"
#include "glog/logging.h"
#include "rapidjson/document.h"
#include "runtime/cache/lister.h"
#include "runtime/cache/typed_lister.h"
#include "runtime/client/options.h"
#include "runtime/client/rest_client.h"
#include "runtime/client/typed_client.h"
#include "runtime/controller/builder.h"
#include "runtime/controller/controllerutil/finalizer.h"
#include "runtime/controller/controllerutil/owner.h"
#include "runtime/controller/controllerutil/status.h"
#include "runtime/controller/reconciler.h"
#include "runtime/events/event_recorder.h"

namespace kcr::loadtest {
namespace {

using controller::ReconcileContext;
using controller::Result;
namespace controllerutil = controller::controllerutil;

// The most of a termination message that goes into status.message.
constexpr size_t kMessageExcerpt = 200;

// Label values are at most 63 characters and end alphanumeric; a
// LoadTest's name (a DNS subdomain) is cut to fit.
std::string LabelValue(std::string_view name) {
  std::string v(name.substr(0, 63));
  while (!v.empty() && !absl::ascii_isalnum(v.back())) v.pop_back();
  return v;
}

std::string PodName(std::string_view loadtest, int64_t generation,
                    int64_t index) {
  const std::string suffix = absl::StrCat("-r", generation, "-", index);
  std::string prefix(loadtest.substr(0, 253 - suffix.size()));
  while (!prefix.empty() && !absl::ascii_isalnum(prefix.back())) {
    prefix.pop_back();
  }
  return prefix + suffix;
}

std::string Excerpt(std::string_view s) {
  const std::string_view first = s.substr(0, s.find('\n'));
  std::string line(absl::StripAsciiWhitespace(
      absl::string_view(first.data(), first.size())));
  if (line.size() > kMessageExcerpt) {
    line = absl::StrCat(line.substr(0, kMessageExcerpt), "...");
  }
  return line;
}

// How the runner's container ended (or the first container that ended,
// when it is named otherwise).
std::optional<api::ContainerStatus> Termination(const api::PodView& pod) {
  return pod.terminated_container(kContainerName);
}

// What a finished pod left: its summary, or a PodResult with only the
// name when its termination message is absent or not a summary.
LoadTest::PodResult PodResultOf(const api::PodView& pod) {
  const std::optional<api::ContainerStatus> t = Termination(pod);
  const std::string_view message = t ? t->state_message : "";
  const std::string_view name = pod.object().name();
  if (!message.empty()) {
    absl::StatusOr<LoadTest::PodResult> r = ParseSummary(name, message);
    if (r.ok()) return *std::move(r);
    LOG(WARNING) << "loadtest pod left no summary namespace="
                 << pod.object().namespace_() << " pod=" << name << " error=\""
                 << r.status().message() << "\"";
  }
  LoadTest::PodResult r;
  r.pod = std::string(name);
  return r;
}

// "pod web-r1-0 failed (Error, exit code 1): 3 of 10 requests failed".
std::string FailureMessage(const api::PodView& pod,
                           const LoadTest::PodResult& result) {
  const std::optional<api::ContainerStatus> t = Termination(pod);
  std::vector<std::string> why;
  std::string reason(t ? t->state_reason : "");
  if (reason.empty()) reason = std::string(pod.reason());
  if (!reason.empty()) why.push_back(reason);
  if (t && t->exit_code)
    why.push_back(absl::StrCat("exit code ", *t->exit_code));
  std::string msg =
      absl::StrCat("pod ", std::string(pod.object().name()), " failed");
  if (!why.empty()) absl::StrAppend(&msg, " (", absl::StrJoin(why, ", "), ")");
  if (result.requests) {
    absl::StrAppend(&msg, ": ", result.failures.value_or(0), " of ",
                    *result.requests, " requests failed");
  } else {
    std::string detail(t ? t->state_message : "");
    if (detail.empty()) detail = std::string(pod.message());
    if (!detail.empty()) absl::StrAppend(&msg, ": ", Excerpt(detail));
  }
  return msg;
}

// Why a pod that has not ended cannot start, as the kubelet says
// (ImagePullBackOff, ErrImagePull, CreateContainerConfigError...): it
// waits, and the run with it, as a Job's would. Nullopt while it is on
// its way (no waiting reason, or ContainerCreating / PodInitializing).
std::optional<std::string> WaitingMessage(const api::PodView& pod) {
  for (const api::ContainerStatus& s : pod.container_statuses()) {
    if (s.state != "waiting") continue;
    const std::string reason(s.state_reason);
    if (reason.empty() || reason == "ContainerCreating" ||
        reason == "PodInitializing") {
      continue;
    }
    std::string msg = absl::StrCat("pod ", std::string(pod.object().name()),
                                   " is waiting: ", reason);
    if (!s.state_message.empty()) {
      absl::StrAppend(&msg, ": ", Excerpt(s.state_message));
    }
    return msg;
  }
  return std::nullopt;
}

std::string FinishedMessage(const LoadTest::Result& result, int64_t replicas) {
  std::string msg = absl::StrCat(replicas, " pods succeeded");
  if (result.requests) {
    absl::StrAppend(&msg, ": ", *result.requests, " requests, ",
                    result.failures.value_or(0), " failed");
  }
  std::vector<std::string> without;
  for (const LoadTest::PodResult& pod : result.pods) {
    if (!pod.requests) without.push_back(pod.pod);
  }
  if (!without.empty()) {
    absl::StrAppend(&msg, "; ", without.size(), " of ", result.pods.size(),
                    " pods left no summary (", absl::StrJoin(without, ", "),
                    "), not counted");
  }
  return msg;
}

// The run as `pods` (this run's, from the cache) show it: failed as soon
// as one pod failed, finished once all succeeded, else executing (with
// the pods that ended so far). Pods not in the cache yet count as running.
LoadTest::Status Observe(const LoadTest::Status& status,
                         const std::vector<std::string>& children,
                         const std::map<std::string, api::PodView>& pods,
                         int64_t replicas) {
  LoadTest::Status next = status;
  next.children = children;
  std::vector<LoadTest::PodResult> results;
  int succeeded = 0;
  std::optional<std::string> failure;
  std::optional<std::string> stuck;
  for (const std::string& name : children) {
    auto it = pods.find(name);
    if (it == pods.end()) continue;
    const api::PodView& pod = it->second;
    if (!pod.finished()) {
      if (!stuck) stuck = WaitingMessage(pod);
      continue;
    }
    results.push_back(PodResultOf(pod));
    if (pod.phase() == "Succeeded") {
      ++succeeded;
    } else if (!failure) {
      failure = FailureMessage(pod, results.back());
    }
  }
  if (failure) {
    next.state = LoadTest::kFailed;
    next.message = failure;
    next.result = Aggregate(std::move(results));
  } else if (succeeded == replicas) {
    next.state = LoadTest::kFinished;
    next.result = Aggregate(std::move(results));
    next.message = FinishedMessage(*next.result, replicas);
  } else {
    next.state = LoadTest::kExecuting;
    next.message = stuck;
    next.result.reset();
    if (!results.empty()) next.result = Aggregate(std::move(results));
  }
  return next;
}

bool Ended(const LoadTest::Status& status) {
  return status.state == LoadTest::kFinished ||
         status.state == LoadTest::kFailed;
}

// A LoadTest as one reconcile sees it: the object (the latest this
// reconcile wrote or read) and its fields with the schema's defaults.
struct Run {
  api::ObjectPtr object;
  LoadTest lt;
  // status, as the reconcile last wrote or read it.
  LoadTest::Status status;
  int64_t generation() const { return object->generation(); }
};

// The LoadTest's pods: this run's by name, and earlier runs'.
struct RunPods {
  std::map<std::string, api::PodView> current;
  std::vector<api::PodView> stale;
};

class LoadTestReconciler final : public controller::Reconciler {
 public:
  LoadTestReconciler(controller::Manager& mgr, const LoadTestOptions& options,
                     const cache::ListWatchOptions& load_pods)
      : options_(options),
        client_(mgr.GetClient()),
        loadtests_(mgr.ListerFor<LoadTest>()),
        pods_(mgr.ListerFor<api::PodView>(load_pods)),
        recorder_(mgr.GetEventRecorderFor(kLoadTestEventComponent)) {}

  absl::StatusOr<Result> Reconcile(const controller::Request& request,
                                   ReconcileContext& ctx) override {
    // 1. The LoadTest; one being deleted waits for its pods to go.
    absl::StatusOr<api::ObjectPtr> got =
        loadtests_.Get(request.namespace_, request.name);
    if (api::IsNotFound(got.status())) return Result::Done();
    KCR_RETURN_IF_ERROR(got.status());
    if ((*got)->being_deleted()) return Finalize(ctx, *got);

    // 2. Its fields, with the schema's defaults. Bad data from the
    // server is reported and waits for a change.
    absl::StatusOr<LoadTest> parsed = LoadTest::FromObject(**got);
    if (!parsed.ok()) return ReportUnreadable(ctx, **got, parsed.status());
    Run run{*got, *std::move(parsed), {}};
    run.lt.ApplyDefaults();
    run.status = run.lt.status.value_or(LoadTest::Status{});

    // 3. The finalizer, so that a delete waits for the pods.
    absl::StatusOr<api::ObjectPtr> held = controllerutil::AddFinalizer(
        ctx.ctx(), client_, client::ResourceFor<LoadTest>(request.namespace_),
        run.object, kFinalizer);
    if (api::IsNotFound(held.status())) return Result::Done();
    KCR_RETURN_IF_ERROR(held.status());
    if (*held != run.object) {
      // The write returned the server's object, which may be newer than
      // the cache's (the spec changed meanwhile): the run goes by it, so
      // that its spec and generation are those of one version.
      parsed = LoadTest::FromObject(**held);
      if (!parsed.ok()) return ReportUnreadable(ctx, **held, parsed.status());
      run = Run{*held, *std::move(parsed), {}};
      run.lt.ApplyDefaults();
      run.status = run.lt.status.value_or(LoadTest::Status{});
    }

    // 4. A new generation starts a new run; earlier runs' pods go.
    const RunPods pods = PodsOf(*run.object);
    if (run.status.observed_generation != run.generation()) {
      KCR_ASSIGN_OR_RETURN(bool started, StartRun(ctx, run, pods.stale.size()));
      if (!started) return Result::Requeue();
    }
    KCR_RETURN_IF_ERROR(DeletePods(ctx, pods.stale));

    // 5. A run that ended stays as it ended until the spec changes.
    if (Ended(run.status)) return Result::Done();

    // 6. The API server checks the same schema; a cluster with an older
    // CRD may not have.
    if (std::vector<std::string> problems = run.lt.Validate();
        !problems.empty()) {
      return FailInvalidSpec(ctx, run, problems.front());
    }

    // 7. The pods the run still lacks.
    KCR_ASSIGN_OR_RETURN(std::optional<Result> waiting,
                         StartPods(ctx, run, pods.current));
    if (waiting) return *waiting;

    // 8. Where the run stands.
    return ReportRun(ctx, run, pods.current);
  }

 private:
  absl::StatusOr<Result> ReportUnreadable(ReconcileContext& ctx,
                                          const api::Object& obj,
                                          const absl::Status& error) {
    LOG(WARNING) << ctx.log_prefix() << " unreadable loadtest error=\""
                 << error.message() << "\"";
    recorder_->Event(obj, api::kEventTypeWarning, kEventInvalidLoadTest,
                     std::string(error.message()));
    return Result::Done();
  }

  // Writes the `pending` status of a new run. False, having written
  // nothing, when the cache was behind (see WriteStatus).
  absl::StatusOr<bool> StartRun(ReconcileContext& ctx, Run& run,
                                size_t stale_pods) {
    LoadTest::Status pending;
    pending.state = LoadTest::kPending;
    pending.observed_generation = run.generation();
    pending.conditions = run.status.conditions;
    const bool restart = run.status.observed_generation.has_value();
    KCR_ASSIGN_OR_RETURN(std::optional<std::string> written,
                         WriteStatus(ctx, run, pending, /*starts_run=*/true));
    if (!written) return false;
    if (restart) {
      recorder_->Eventf(*run.object, api::kEventTypeNormal, kEventRestarting,
                        "spec changed (generation %d): deleting %d pods of "
                        "the previous run and starting again",
                        run.generation(), static_cast<int>(stale_pods));
    }
    LOG(INFO) << ctx.log_prefix()
              << " run starts generation=" << run.generation()
              << " stale_pods=" << stale_pods;
    return true;
  }

  absl::StatusOr<Result> FailInvalidSpec(ReconcileContext& ctx, Run& run,
                                         const std::string& problem) {
    LoadTest::Status failed = run.status;
    failed.state = LoadTest::kFailed;
    failed.message = absl::StrCat("invalid spec: ", problem);
    recorder_->Event(*run.object, api::kEventTypeWarning, kEventInvalidSpec,
                     *failed.message);
    KCR_ASSIGN_OR_RETURN(std::optional<std::string> written,
                         WriteStatus(ctx, run, failed));
    return written ? Result::Done() : Result::Requeue();
  }

  // Creates the pods of this run that do not exist. A result when the
  // reconcile ends here: the Service's named port cannot be resolved yet.
  absl::StatusOr<std::optional<Result>> StartPods(
      ReconcileContext& ctx, Run& run,
      const std::map<std::string, api::PodView>& current) {
    std::vector<std::string> missing;
    for (const std::string& name : Children(run)) {
      if (current.count(name) == 0) missing.push_back(name);
    }
    if (missing.empty()) return std::nullopt;
    absl::StatusOr<int64_t> port = ResolvePort(ctx, run.lt);
    if (!port.ok()) {
      if (!absl::IsFailedPrecondition(port.status())) return port.status();
      LoadTest::Status waiting = run.status;
      waiting.message = std::string(port.status().message());
      if (waiting.message != run.status.message) {
        recorder_->Event(*run.object, api::kEventTypeWarning,
                         kEventServicePortUnresolved, *waiting.message);
      }
      KCR_ASSIGN_OR_RETURN(std::optional<std::string> written,
                           WriteStatus(ctx, run, waiting));
      return written ? Result::RequeueAfter(options_.retry_wait)
                     : Result::Requeue();
    }
    std::vector<std::string> created;
    for (const std::string& name : missing) {
      absl::StatusOr<bool> made =
          CreatePod(ctx, *run.object, run.lt, name, *port);
      if (!made.ok()) {
        recorder_->Eventf(*run.object, api::kEventTypeWarning,
                          kEventFailedCreate, "pod %s: %s", name,
                          made.status().message());
        return made.status();
      }
      if (*made) created.push_back(name);
    }
    if (!created.empty()) {
      LOG(INFO) << ctx.log_prefix() << " created pods=" << created.size()
                << " generation=" << run.generation();
      recorder_->Eventf(*run.object, api::kEventTypeNormal, kEventCreatedPods,
                        "created %d load pods: %s",
                        static_cast<int>(created.size()),
                        absl::StrJoin(created, ", "));
    }
    return std::nullopt;
  }

  // Writes where the run stands and, when its state changed, says so.
  absl::StatusOr<Result> ReportRun(
      ReconcileContext& ctx, Run& run,
      const std::map<std::string, api::PodView>& current) {
    const int64_t replicas = run.lt.spec.replicas.value_or(1);
    const LoadTest::Status next =
        Observe(run.status, Children(run), current, replicas);
    KCR_ASSIGN_OR_RETURN(std::optional<std::string> before,
                         WriteStatus(ctx, run, next));
    if (!before) return Result::Requeue();
    if (*before == *next.state) return Result::Done();
    LOG(INFO) << ctx.log_prefix() << " state=" << *before << "->" << *next.state
              << " generation=" << run.generation();
    if (next.state == LoadTest::kFailed) {
      recorder_->Event(*run.object, api::kEventTypeWarning, kEventFailed,
                       *next.message);
    } else if (next.state == LoadTest::kFinished) {
      recorder_->Event(*run.object, api::kEventTypeNormal, kEventFinished,
                       *next.message);
    } else {
      recorder_->Eventf(*run.object, api::kEventTypeNormal, kEventExecuting,
                        "executing with %d load pods",
                        static_cast<int>(replicas));
    }
    return Result::Done();
  }

  // The names of this run's pods.
  static std::vector<std::string> Children(const Run& run) {
    std::vector<std::string> children;
    const int64_t replicas = run.lt.spec.replicas.value_or(1);
    for (int64_t i = 0; i < replicas; ++i) {
      children.push_back(PodName(run.lt.name(), run.generation(), i));
    }
    return children;
  }

  // The pods `lt` controls, from the cache.
  std::vector<api::PodView> OwnedPods(const api::Object& lt) const {
    std::vector<api::PodView> out;
    absl::StatusOr<api::LabelSelector> selector = api::LabelSelector::Parse(
        absl::StrCat(kLoadTestLabel, "=", LabelValue(lt.name())));
    if (!selector.ok()) return out;
    for (api::PodView& pod :
         pods_.Namespace(std::string(lt.namespace_())).List(*selector)) {
      if (api::IsControlledBy(pod.object(), lt)) out.push_back(std::move(pod));
    }
    return out;
  }

  RunPods PodsOf(const api::Object& lt) const {
    RunPods pods;
    const std::string generation = absl::StrCat(lt.generation());
    for (api::PodView& pod : OwnedPods(lt)) {
      if (pod.object().Label(kGenerationLabel) == generation) {
        pods.current.emplace(std::string(pod.object().name()), std::move(pod));
      } else {
        pods.stale.push_back(std::move(pod));
      }
    }
    return pods;
  }

  // Deletes `pods` (those not being deleted already), each only if it is
  // still the pod that was read (uid precondition).
  absl::Status DeletePods(ReconcileContext& ctx,
                          const std::vector<api::PodView>& pods) {
    for (const api::PodView& view : pods) {
      const api::Object& pod = view.object();
      if (pod.being_deleted()) continue;
      client::DeleteOptions options;
      options.preconditions.uid = std::string(pod.uid());
      absl::Status s = client_->Delete(
          ctx.ctx(),
          client::ResourceFor<api::PodView>(std::string(pod.namespace_())),
          pod.name(), options);
      if (api::IsNotFound(s) || api::IsConflict(s)) continue;  // gone
      KCR_RETURN_IF_ERROR(s);
      LOG(INFO) << ctx.log_prefix() << " deleted pod=" << pod.name();
    }
    return absl::OkStatus();
  }

  // Removes the pods, then the finalizer once none is left.
  absl::StatusOr<Result> Finalize(ReconcileContext& ctx,
                                  const api::ObjectPtr& obj) {
    if (!obj->HasFinalizer(kFinalizer)) return Result::Done();
    const client::Resource pods_here =
        client::ResourceFor<api::PodView>(std::string(obj->namespace_()));
    std::vector<api::PodView> pods = OwnedPods(*obj);
    if (pods.empty()) {
      // The cache may not have seen a pod created just before: ask the
      // server once before letting the LoadTest go.
      client::ListOptions list;
      list.label_selector =
          absl::StrCat(kLoadTestLabel, "=", LabelValue(obj->name()));
      KCR_ASSIGN_OR_RETURN(client::ObjectList live,
                           client_->List(ctx.ctx(), pods_here, list));
      for (const api::ObjectPtr& pod : live.items) {
        if (api::IsControlledBy(*pod, *obj)) {
          // Seen by the server, not yet by the cache: wait for the watch.
          return Result::RequeueAfter(absl::Seconds(1));
        }
      }
      absl::StatusOr<api::ObjectPtr> removed = controllerutil::RemoveFinalizer(
          ctx.ctx(), client_,
          client::ResourceFor<LoadTest>(std::string(obj->namespace_())), obj,
          kFinalizer);
      if (api::IsNotFound(removed.status())) return Result::Done();
      KCR_RETURN_IF_ERROR(removed.status());
      LOG(INFO) << ctx.log_prefix() << " pods gone, finalizer removed";
      return Result::Done();
    }
    int deleting = 0;
    for (const api::PodView& pod : pods) {
      deleting += !pod.object().being_deleted();
    }
    if (deleting > 0) {
      recorder_->Eventf(*obj, api::kEventTypeNormal, kEventDeletingPods,
                        "deleting %d load pods", deleting);
    }
    KCR_RETURN_IF_ERROR(DeletePods(ctx, pods));
    // Each pod's deletion wakes this LoadTest (it owns them); the retry
    // covers a pod whose deletion waits on someone else's finalizer.
    return Result::RequeueAfter(options_.retry_wait);
  }

  // The port to send to: spec.test.servicePort, or the port of the
  // Service that has that name. FailedPrecondition (the message for
  // status) when a name cannot be resolved.
  absl::StatusOr<int64_t> ResolvePort(ReconcileContext& ctx,
                                      const LoadTest& lt) {
    const LoadTest::Test& test = *lt.spec.test;
    const api::crd::IntOrString port =
        test.service_port.value_or(api::crd::IntOrString::Int(80));
    if (port.is_int) return port.int_value;
    const std::string service = test.service_name.value_or("");
    absl::StatusOr<api::ObjectPtr> svc = client_->Get(
        ctx.ctx(), client::ResourceFor<api::ServiceView>(lt.namespace_()),
        service);
    if (api::IsNotFound(svc.status())) {
      return absl::FailedPreconditionError(
          absl::StrCat("waiting for service ", service, " to resolve port \"",
                       port.str_value, "\": service not found"));
    }
    KCR_RETURN_IF_ERROR(svc.status());
    KCR_ASSIGN_OR_RETURN(api::ServiceView view,
                         api::ServiceView::Create(*std::move(svc)));
    if (std::optional<int32_t> number = view.PortNamed(port.str_value)) {
      return *number;
    }
    return absl::FailedPreconditionError(
        absl::StrCat("waiting for service ", service,
                     " to have a port named \"", port.str_value, "\""));
  }

  // Creates pod `name` of the run; false when it exists already (made by
  // an earlier reconcile the cache has not caught up with).
  absl::StatusOr<bool> CreatePod(ReconcileContext& ctx, const api::Object& obj,
                                 const LoadTest& lt, const std::string& name,
                                 int64_t port) {
    const LoadTest::Test& test = *lt.spec.test;
    api::PodContainer c;
    c.name = kContainerName;
    c.image = options_.image;
    c.command = {kRunnerPath};
    c.args = {absl::StrCat("--method=", test.method.value_or("GET")),
              absl::StrCat("--service-name=", test.service_name.value_or("")),
              absl::StrCat("--service-port=", port),
              absl::StrCat("--path=", test.path.value_or("/"))};
    if (test.repeat) c.args.push_back(absl::StrCat("--repeat=", *test.repeat));
    api::PodBuilder pod(obj.namespace_(), name);
    pod.SetLabels({{kLoadTestLabel, LabelValue(obj.name())},
                   {kGenerationLabel, absl::StrCat(obj.generation())}})
        .SetContainer(c)
        .SetRestartPolicy("Never");
    for (const auto& [key, value] : obj.annotations().ToMap()) {
      if (absl::StartsWith(key, kSimAnnotationPrefix)) {
        pod.object().SetAnnotation(key, value);
      }
    }
    // The runner never talks to the API server, needs no privilege and
    // writes only its termination message (a file the kubelet mounts):
    // the pods pass the "restricted" Pod Security Standard.
    KCR_RETURN_IF_ERROR(
        pod.object().SetBool("/spec/automountServiceAccountToken", false));
    KCR_RETURN_IF_ERROR(pod.object().SetJson(
        "/spec/securityContext",
        R"({"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}})"));
    KCR_RETURN_IF_ERROR(pod.object().SetJson(
        "/spec/containers/0/securityContext",
        R"({"allowPrivilegeEscalation":false,"readOnlyRootFilesystem":true,)"
        R"("capabilities":{"drop":["ALL"]}})"));
    KCR_RETURN_IF_ERROR(
        controllerutil::SetControllerReference(obj, pod.object()));
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr built, pod.Build());
    const client::Resource pods_here =
        client::ResourceFor<api::PodView>(std::string(obj.namespace_()));
    absl::StatusOr<api::ObjectPtr> made =
        client_->Create(ctx.ctx(), pods_here, *built);
    if (api::IsAlreadyExists(made.status())) {
      KCR_ASSIGN_OR_RETURN(api::ObjectPtr existing,
                           client_->Get(ctx.ctx(), pods_here, name));
      if (!api::IsControlledBy(*existing, obj)) {
        return absl::AlreadyExistsError(
            absl::StrCat("pod ", name, " exists and is not this LoadTest's"));
      }
      return false;
    }
    KCR_RETURN_IF_ERROR(made.status());
    return true;
  }

  // Writes `next` as the status when it differs from run.status, and
  // then makes it the run's. Returns the state the server had before
  // (what the write changed, when the cache was behind), or nullopt,
  // having written nothing, when the spec changed meanwhile (a newer
  // generation: the next reconcile starts its run), the LoadTest is gone,
  // or the server shows that the cache is behind: `starts_run` and the
  // run has started, or the run has ended.
  absl::StatusOr<std::optional<std::string>> WriteStatus(
      ReconcileContext& ctx, Run& run, const LoadTest::Status& next,
      bool starts_run = false) {
    if (run.lt.status && run.status == next) {
      return run.status.state.value_or("");
    }
    LoadTest with = run.lt;
    with.status = next;
    const rapidjson::Document json = with.ToJson();
    const int64_t generation = run.generation();
    std::string before;
    absl::StatusOr<api::ObjectPtr> written = controllerutil::UpdateStatus(
        ctx.ctx(), client_, client::ResourceFor<LoadTest>(), run.object,
        [&](api::ObjectBuilder& o) -> absl::Status {
          const rapidjson::Value* g = o.Find("/metadata/generation");
          if (g == nullptr || !g->IsInt64() || g->GetInt64() != generation) {
            return absl::AbortedError("the spec changed");
          }
          const rapidjson::Value* state = o.Find("/status/state");
          before =
              state != nullptr && state->IsString() ? state->GetString() : "";
          // The cache may be behind this controller's own writes: never
          // restart a run that started, nor change one that ended.
          const rapidjson::Value* og = o.Find("/status/observedGeneration");
          if (og != nullptr && og->IsInt64() && og->GetInt64() == generation &&
              (starts_run || before == LoadTest::kFinished ||
               before == LoadTest::kFailed)) {
            return absl::AbortedError("the cache is behind");
          }
          return o.Set("/status", json["status"]);
        });
    if (absl::IsAborted(written.status()) ||
        api::IsNotFound(written.status())) {
      return std::nullopt;
    }
    KCR_RETURN_IF_ERROR(written.status());
    run.object = *std::move(written);
    run.status = next;
    run.lt.status = next;
    return before;
  }

  const LoadTestOptions options_;
  client::RestClient* const client_;
  const cache::Lister loadtests_;
  const cache::PodLister pods_;
  const std::unique_ptr<events::EventRecorder> recorder_;
};

}  // namespace

absl::Status AddLoadTestController(controller::Manager& mgr,
                                   const LoadTestOptions& options) {
  KCR_ASSIGN_OR_RETURN(std::unique_ptr<rapidjson::Document> crd,
                       json::YamlToJson(LoadTest::kCrdManifest));
  KCR_RETURN_IF_ERROR(mgr.GetRESTMapper()->AddFromCRD(*crd));
  // The pod informer holds only load pods.
  cache::ListWatchOptions load_pods;
  load_pods.label_selector = kLoadTestLabel;
  controller::ControllerOptions controller_options;
  controller_options.max_concurrent_reconciles = options.workers;
  return controller::ControllerBuilder(mgr)
      .For<LoadTest>()
      .Owns<api::PodView>()
      .WithListWatchOptions(load_pods)
      .Named(kLoadTestControllerName)
      .WithOptions(std::move(controller_options))
      .Complete(std::make_shared<LoadTestReconciler>(mgr, options, load_pods));
}

}  // namespace kcr::loadtest
