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
#include "api/crd/crd_manifests.h"
#include "api/errors/errors.h"
#include "api/json/yaml_to_json.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "api/selector/label_selector.h"
#include "api/types/event.h"
#include "api/types/field.h"
#include "api/types/owner_reference.h"
#include "api/types/pod.h"
#include "base/status_macros.h"
#include "controllers/loadtest/loadtest_types.h"
#include "controllers/loadtest/run_result.h"
#include "glog/logging.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "runtime/cache/lister.h"
#include "runtime/client/options.h"
#include "runtime/client/rest_client.h"
#include "runtime/controller/builder.h"
#include "runtime/controller/controllerutil/finalizer.h"
#include "runtime/controller/controllerutil/owner.h"
#include "runtime/controller/controllerutil/status.h"
#include "runtime/controller/reconciler.h"
#include "runtime/events/event_recorder.h"

namespace kcr::loadtest {
namespace {

using controller::Result;
namespace controllerutil = controller::controllerutil;

const client::Resource kLoadTests =
    client::Resource::Namespaced({"example.org", "v1", "loadtests"});
const client::Resource kPods = client::Resource::Namespaced({"", "v1", "pods"});
const client::Resource kServices =
    client::Resource::Namespaced({"", "v1", "services"});

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

std::string StringAt(const api::Object& o, std::string_view pointer) {
  const rapidjson::Value* v = o.Find(pointer);
  return v != nullptr && v->IsString() ? std::string(v->GetString()) : "";
}

// state.<which> ("terminated", "waiting") of a containerStatuses entry,
// or null.
const rapidjson::Value* StateOf(const rapidjson::Value& status,
                                std::string_view which) {
  return api::field::Object(api::field::Object(&status, "state"), which);
}

// The runner's container's termination (state.terminated), or the first
// terminated container's when it is named otherwise.
const rapidjson::Value* Terminated(const api::Object& pod) {
  const rapidjson::Value* statuses = pod.Find("/status/containerStatuses");
  if (statuses == nullptr || !statuses->IsArray()) return nullptr;
  const rapidjson::Value* first = nullptr;
  for (const rapidjson::Value& s : statuses->GetArray()) {
    const rapidjson::Value* t = StateOf(s, "terminated");
    if (t == nullptr) continue;
    if (api::field::String(&s, "name") == kContainerName) return t;
    if (first == nullptr) first = t;
  }
  return first;
}

std::string MemberString(const rapidjson::Value* obj, const char* key) {
  return std::string(api::field::String(obj, key));
}

// What a finished pod left: its summary, or a PodResult with only the
// name when its termination message is absent or not a summary.
LoadTest::PodResult PodResultOf(const api::Object& pod) {
  const std::string message = MemberString(Terminated(pod), "message");
  if (!message.empty()) {
    absl::StatusOr<LoadTest::PodResult> r = ParseSummary(pod.name(), message);
    if (r.ok()) return *std::move(r);
    LOG(WARNING) << "loadtest pod left no summary namespace=" << pod.ns()
                 << " pod=" << pod.name() << " error=\"" << r.status().message()
                 << "\"";
  }
  LoadTest::PodResult r;
  r.pod = std::string(pod.name());
  return r;
}

// "pod web-r1-0 failed (Error, exit code 1): 3 of 10 requests failed".
std::string FailureMessage(const api::Object& pod,
                           const LoadTest::PodResult& result) {
  const rapidjson::Value* t = Terminated(pod);
  std::vector<std::string> why;
  std::string reason = MemberString(t, "reason");
  if (reason.empty()) reason = StringAt(pod, "/status/reason");
  if (!reason.empty()) why.push_back(reason);
  if (std::optional<int32_t> code = api::field::Int32(t, "exitCode")) {
    why.push_back(absl::StrCat("exit code ", *code));
  }
  std::string msg = absl::StrCat("pod ", std::string(pod.name()), " failed");
  if (!why.empty()) absl::StrAppend(&msg, " (", absl::StrJoin(why, ", "), ")");
  if (result.requests) {
    absl::StrAppend(&msg, ": ", result.failures.value_or(0), " of ",
                    *result.requests, " requests failed");
  } else {
    std::string detail = MemberString(t, "message");
    if (detail.empty()) detail = StringAt(pod, "/status/message");
    if (!detail.empty()) absl::StrAppend(&msg, ": ", Excerpt(detail));
  }
  return msg;
}

// Why a pod that has not ended cannot start, as the kubelet says
// (ImagePullBackOff, ErrImagePull, CreateContainerConfigError...): it
// waits, and the run with it, as a Job's would. Nullopt while it is on
// its way (no waiting reason, or ContainerCreating / PodInitializing).
std::optional<std::string> WaitingMessage(const api::Object& pod) {
  const rapidjson::Value* statuses = pod.Find("/status/containerStatuses");
  if (statuses == nullptr || !statuses->IsArray()) return std::nullopt;
  for (const rapidjson::Value& s : statuses->GetArray()) {
    const rapidjson::Value* w = StateOf(s, "waiting");
    if (w == nullptr) continue;
    const std::string reason = MemberString(w, "reason");
    if (reason.empty() || reason == "ContainerCreating" ||
        reason == "PodInitializing") {
      continue;
    }
    std::string msg =
        absl::StrCat("pod ", std::string(pod.name()), " is waiting: ", reason);
    const std::string detail = MemberString(w, "message");
    if (!detail.empty()) absl::StrAppend(&msg, ": ", Excerpt(detail));
    return msg;
  }
  return std::nullopt;
}

std::string StatusJson(const LoadTest& lt) {
  rapidjson::Document doc = lt.ToJson();
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> writer(out);
  auto it = doc.FindMember("status");
  if (it == doc.MemberEnd()) return "{}";
  it->value.Accept(writer);
  return std::string(out.GetString(), out.GetSize());
}

class LoadTestReconciler final : public controller::Reconciler {
 public:
  LoadTestReconciler(controller::Manager& mgr, const LoadTestOptions& options,
                     cache::SharedIndexInformer* pods)
      : options_(options),
        client_(mgr.GetClient()),
        loadtests_(
            mgr.GetInformerFactory()->InformerFor(kLoadTests)->GetIndexer(),
            {"example.org", "loadtests"}),
        pods_(pods->GetIndexer(), {"", "pods"}),
        recorder_(mgr.GetEventRecorderFor("loadtest-controller")) {}

  absl::StatusOr<Result> Reconcile(const controller::Request& request,
                                   controller::ReconcileContext& ctx) override {
    absl::StatusOr<api::ObjectPtr> got =
        loadtests_.Get(request.namespace_, request.name);
    if (api::IsNotFound(got.status())) return Result::Done();
    KCR_RETURN_IF_ERROR(got.status());
    api::ObjectPtr obj = *std::move(got);
    if (obj->being_deleted()) return Finalize(ctx, obj);

    absl::StatusOr<LoadTest> parsed = LoadTest::FromObject(*obj);
    if (!parsed.ok()) {
      // Bad data from the server: report it, wait for a change.
      LOG(WARNING) << ctx.log_prefix() << " unreadable loadtest error=\""
                   << parsed.status().message() << "\"";
      recorder_->Event(*obj, api::kEventTypeWarning, "InvalidLoadTest",
                       std::string(parsed.status().message()));
      return Result::Done();
    }
    LoadTest lt = *std::move(parsed);
    lt.ApplyDefaults();

    absl::StatusOr<api::ObjectPtr> with_finalizer =
        controllerutil::AddFinalizer(ctx.ctx(), client_,
                                     kLoadTests.InNamespace(request.namespace_),
                                     obj, kFinalizer);
    if (api::IsNotFound(with_finalizer.status())) return Result::Done();
    KCR_RETURN_IF_ERROR(with_finalizer.status());
    obj = *std::move(with_finalizer);

    const int64_t generation = obj->generation();
    std::vector<api::ObjectPtr> current;  // this generation's pods
    std::vector<api::ObjectPtr> stale;    // earlier runs'
    for (api::ObjectPtr& pod : OwnedPods(*obj)) {
      if (pod->Label(kGenerationLabel) == absl::StrCat(generation)) {
        current.push_back(std::move(pod));
      } else {
        stale.push_back(std::move(pod));
      }
    }
    LoadTest::Status status = lt.status.value_or(LoadTest::Status{});

    if (status.observed_generation != generation) {
      // A new run: the spec changed (or this is the first).
      LoadTest::Status pending;
      pending.state = LoadTest::kPending;
      pending.observed_generation = generation;
      pending.conditions = status.conditions;
      KCR_ASSIGN_OR_RETURN(std::optional<std::string> written,
                           WriteStatus(ctx, *obj, lt, status, pending,
                                       /*starts_run=*/true));
      if (!written) return Result::Requeue();
      if (status.observed_generation) {
        recorder_->Eventf(*obj, api::kEventTypeNormal, "Restarting",
                          "spec changed (generation %d): deleting %d pods of "
                          "the previous run and starting again",
                          generation, static_cast<int>(stale.size()));
      }
      LOG(INFO) << ctx.log_prefix() << " run starts generation=" << generation
                << " stale_pods=" << stale.size();
      status = std::move(pending);
      lt.status = status;
    }
    KCR_RETURN_IF_ERROR(DeletePods(ctx, stale));

    if (status.state == LoadTest::kFinished ||
        status.state == LoadTest::kFailed) {
      return Result::Done();  // this run is over
    }

    std::vector<std::string> problems = lt.Validate();
    if (!problems.empty()) {
      // The API server checks the same schema; a cluster with an older CRD
      // may not have.
      LoadTest::Status failed = status;
      failed.state = LoadTest::kFailed;
      failed.message = absl::StrCat("invalid spec: ", problems.front());
      recorder_->Event(*obj, api::kEventTypeWarning, "InvalidSpec",
                       *failed.message);
      KCR_ASSIGN_OR_RETURN(std::optional<std::string> written,
                           WriteStatus(ctx, *obj, lt, status, failed));
      return written ? Result::Done() : Result::Requeue();
    }

    const int64_t replicas = lt.spec.replicas.value_or(1);
    std::vector<std::string> children;
    std::vector<std::string> missing;
    std::map<std::string, api::ObjectPtr> by_name;
    for (const api::ObjectPtr& pod : current) {
      by_name[std::string(pod->name())] = pod;
    }
    for (int64_t i = 0; i < replicas; ++i) {
      children.push_back(PodName(lt.name(), generation, i));
      if (by_name.count(children.back()) == 0)
        missing.push_back(children.back());
    }
    std::vector<std::string> created;
    if (!missing.empty()) {
      absl::StatusOr<int64_t> port = ResolvePort(ctx, lt);
      if (!port.ok()) {
        if (!absl::IsFailedPrecondition(port.status())) return port.status();
        LoadTest::Status waiting = status;
        waiting.message = std::string(port.status().message());
        if (waiting.message != status.message) {
          recorder_->Event(*obj, api::kEventTypeWarning,
                           "ServicePortUnresolved", *waiting.message);
        }
        KCR_ASSIGN_OR_RETURN(std::optional<std::string> written,
                             WriteStatus(ctx, *obj, lt, status, waiting));
        return written ? Result::RequeueAfter(options_.retry_wait)
                       : Result::Requeue();
      }
      for (const std::string& name : missing) {
        absl::StatusOr<bool> made = CreatePod(ctx, *obj, lt, name, *port);
        if (!made.ok()) {
          recorder_->Eventf(*obj, api::kEventTypeWarning, "FailedCreate",
                            "pod %s: %s", name, made.status().message());
          return made.status();
        }
        if (*made) created.push_back(name);
      }
    }
    if (!created.empty()) {
      LOG(INFO) << ctx.log_prefix() << " created pods=" << created.size()
                << " generation=" << generation;
      recorder_->Eventf(*obj, api::kEventTypeNormal, "CreatedPods",
                        "created %d load pods: %s",
                        static_cast<int>(created.size()),
                        absl::StrJoin(created, ", "));
    }

    // The run as the cache shows it. Pods just created are not in it yet:
    // they count as running.
    LoadTest::Status next = status;
    next.children = children;
    std::vector<LoadTest::PodResult> results;
    int succeeded = 0;
    std::optional<std::string> failure;
    std::optional<std::string> stuck;
    for (const std::string& name : children) {
      auto it = by_name.find(name);
      if (it == by_name.end()) continue;
      const api::Object& pod = *it->second;
      const std::string phase = StringAt(pod, "/status/phase");
      if (phase != "Succeeded" && phase != "Failed") {
        if (!stuck) stuck = WaitingMessage(pod);
        continue;
      }
      results.push_back(PodResultOf(pod));
      if (phase == "Succeeded") {
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
      // The pods that ended so far.
      next.result.reset();
      if (!results.empty()) next.result = Aggregate(std::move(results));
    }
    KCR_ASSIGN_OR_RETURN(std::optional<std::string> before,
                         WriteStatus(ctx, *obj, lt, status, next));
    if (!before) return Result::Requeue();
    if (*before != *next.state) {
      LOG(INFO) << ctx.log_prefix() << " state=" << *before << "->"
                << *next.state << " generation=" << generation;
      if (next.state == LoadTest::kFailed) {
        recorder_->Event(*obj, api::kEventTypeWarning, "Failed", *next.message);
      } else if (next.state == LoadTest::kFinished) {
        recorder_->Event(*obj, api::kEventTypeNormal, "Finished",
                         *next.message);
      } else {
        recorder_->Eventf(*obj, api::kEventTypeNormal, "Executing",
                          "executing with %d load pods",
                          static_cast<int>(replicas));
      }
    }
    return Result::Done();
  }

 private:
  static std::string FinishedMessage(const LoadTest::Result& result,
                                     int64_t replicas) {
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

  // The pods `lt` controls, from the cache.
  std::vector<api::ObjectPtr> OwnedPods(const api::Object& lt) const {
    std::vector<api::ObjectPtr> out;
    absl::StatusOr<api::LabelSelector> selector = api::LabelSelector::Parse(
        absl::StrCat(kLoadTestLabel, "=", LabelValue(lt.name())));
    if (!selector.ok()) return out;
    for (api::ObjectPtr& pod :
         pods_.Namespace(std::string(lt.ns())).List(*selector)) {
      if (api::IsControlledBy(*pod, lt)) out.push_back(std::move(pod));
    }
    return out;
  }

  // Deletes `pods` (those not being deleted already), each only if it is
  // still the pod that was read (uid precondition).
  absl::Status DeletePods(controller::ReconcileContext& ctx,
                          const std::vector<api::ObjectPtr>& pods) {
    for (const api::ObjectPtr& pod : pods) {
      if (pod->being_deleted()) continue;
      client::DeleteOptions options;
      options.preconditions.uid = std::string(pod->uid());
      absl::Status s =
          client_->Delete(ctx.ctx(), kPods.InNamespace(std::string(pod->ns())),
                          pod->name(), options);
      if (api::IsNotFound(s) || api::IsConflict(s)) continue;  // gone
      KCR_RETURN_IF_ERROR(s);
      LOG(INFO) << ctx.log_prefix() << " deleted pod=" << pod->name();
    }
    return absl::OkStatus();
  }

  // Removes the pods, then the finalizer once none is left.
  absl::StatusOr<Result> Finalize(controller::ReconcileContext& ctx,
                                  api::ObjectPtr obj) {
    if (!obj->HasFinalizer(kFinalizer)) return Result::Done();
    std::vector<api::ObjectPtr> pods = OwnedPods(*obj);
    if (pods.empty()) {
      // The cache may not have seen a pod created just before: ask the
      // server once before letting the LoadTest go.
      client::ListOptions list;
      list.label_selector =
          absl::StrCat(kLoadTestLabel, "=", LabelValue(obj->name()));
      KCR_ASSIGN_OR_RETURN(
          client::ObjectList live,
          client_->List(ctx.ctx(), kPods.InNamespace(std::string(obj->ns())),
                        list));
      for (const api::ObjectPtr& pod : live.items) {
        if (api::IsControlledBy(*pod, *obj)) {
          // Seen by the server, not yet by the cache: wait for the watch.
          return Result::RequeueAfter(absl::Seconds(1));
        }
      }
      absl::StatusOr<api::ObjectPtr> removed = controllerutil::RemoveFinalizer(
          ctx.ctx(), client_, kLoadTests.InNamespace(std::string(obj->ns())),
          obj, kFinalizer);
      if (api::IsNotFound(removed.status())) return Result::Done();
      KCR_RETURN_IF_ERROR(removed.status());
      LOG(INFO) << ctx.log_prefix() << " pods gone, finalizer removed";
      return Result::Done();
    }
    int deleting = 0;
    for (const api::ObjectPtr& pod : pods) deleting += !pod->being_deleted();
    if (deleting > 0) {
      recorder_->Eventf(*obj, api::kEventTypeNormal, "DeletingPods",
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
  absl::StatusOr<int64_t> ResolvePort(controller::ReconcileContext& ctx,
                                      const LoadTest& lt) {
    const LoadTest::Test& test = *lt.spec.test;
    const api::crd::IntOrString port =
        test.service_port.value_or(api::crd::IntOrString::Int(80));
    if (port.is_int) return port.int_value;
    const std::string service = test.service_name.value_or("");
    absl::StatusOr<api::ObjectPtr> svc = client_->Get(
        ctx.ctx(), kServices.InNamespace(lt.namespace_()), service);
    if (api::IsNotFound(svc.status())) {
      return absl::FailedPreconditionError(
          absl::StrCat("waiting for service ", service, " to resolve port \"",
                       port.str_value, "\": service not found"));
    }
    KCR_RETURN_IF_ERROR(svc.status());
    const rapidjson::Value* ports = (*svc)->Find("/spec/ports");
    if (ports != nullptr && ports->IsArray()) {
      for (const rapidjson::Value& p : ports->GetArray()) {
        if (!p.IsObject() || MemberString(&p, "name") != port.str_value) {
          continue;
        }
        if (std::optional<int32_t> number = api::field::Int32(&p, "port")) {
          return *number;
        }
      }
    }
    return absl::FailedPreconditionError(
        absl::StrCat("waiting for service ", service,
                     " to have a port named \"", port.str_value, "\""));
  }

  // Creates pod `name` of the run; false when it exists already (made by
  // an earlier reconcile the cache has not caught up with).
  absl::StatusOr<bool> CreatePod(controller::ReconcileContext& ctx,
                                 const api::Object& obj, const LoadTest& lt,
                                 const std::string& name, int64_t port) {
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
    api::PodBuilder pod(obj.ns(), name);
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
    absl::StatusOr<api::ObjectPtr> made = client_->Create(
        ctx.ctx(), kPods.InNamespace(std::string(obj.ns())), *built);
    if (api::IsAlreadyExists(made.status())) {
      KCR_ASSIGN_OR_RETURN(
          api::ObjectPtr existing,
          client_->Get(ctx.ctx(), kPods.InNamespace(std::string(obj.ns())),
                       name));
      if (!api::IsControlledBy(*existing, obj)) {
        return absl::AlreadyExistsError(
            absl::StrCat("pod ", name, " exists and is not this LoadTest's"));
      }
      return false;
    }
    KCR_RETURN_IF_ERROR(made.status());
    return true;
  }

  // Writes `next` as the status when it differs from `have` (what the
  // cache showed). Returns the state the server had before (what the
  // write changed, when the cache was behind), or nullopt, having written
  // nothing, when the spec changed meanwhile (a newer generation: the next
  // reconcile starts its run), the LoadTest is gone, or the server shows
  // that the cache is behind: `starts_run` and the run has started, or the
  // run has ended.
  absl::StatusOr<std::optional<std::string>> WriteStatus(
      controller::ReconcileContext& ctx, const api::Object& obj,
      const LoadTest& lt, const LoadTest::Status& have,
      const LoadTest::Status& next, bool starts_run = false) {
    if (lt.status && have == next) return have.state.value_or("");
    LoadTest with = lt;
    with.status = next;
    const std::string json = StatusJson(with);
    const int64_t generation = obj.generation();
    std::string before;
    absl::StatusOr<api::ObjectPtr> written = controllerutil::UpdateStatus(
        ctx.ctx(), client_, kLoadTests.InNamespace(std::string(obj.ns())),
        obj.name(), [&](api::ObjectBuilder& o) -> absl::Status {
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
          return o.SetJson("/status", json);
        });
    if (absl::IsAborted(written.status()) ||
        api::IsNotFound(written.status())) {
      return std::nullopt;
    }
    KCR_RETURN_IF_ERROR(written.status());
    return before;
  }

  const LoadTestOptions options_;
  client::RestClient* const client_;
  const cache::Lister loadtests_;
  const cache::Lister pods_;
  const std::unique_ptr<events::EventRecorder> recorder_;
};

}  // namespace

absl::Status AddLoadTestController(controller::Manager& mgr,
                                   const LoadTestOptions& options) {
  KCR_ASSIGN_OR_RETURN(std::unique_ptr<rapidjson::Document> crd,
                       json::YamlToJson(api::crd::kLoadTestCrdYaml));
  KCR_RETURN_IF_ERROR(mgr.GetRESTMapper()->AddFromCRD(*crd));
  cache::ListWatchOptions load_pods;
  load_pods.label_selector = kLoadTestLabel;
  cache::SharedIndexInformer* pods =
      mgr.GetInformerFactory()->InformerFor(kPods, load_pods);
  controller::ControllerOptions controller_options;
  controller_options.max_concurrent_reconciles = options.workers;
  return controller::ControllerBuilder(mgr)
      .For(kLoadTests)
      .Owns(kPods)
      .WithListWatchOptions(load_pods)
      .Named(kControllerName)
      .WithOptions(std::move(controller_options))
      .Complete(std::make_shared<LoadTestReconciler>(mgr, options, pods));
}

}  // namespace kcr::loadtest
