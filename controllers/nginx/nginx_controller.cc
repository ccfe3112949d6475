#include "controllers/nginx/nginx_controller.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/errors/errors.h"
#include "api/json/yaml_to_json.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "api/types/condition.h"
#include "api/types/deployment.h"
#include "api/types/event.h"
#include "api/types/owner_reference.h"
#include "base/clock.h"
#include "base/status_macros.h"
#include "controllers/nginx/nginx_deployment.h"
#include "controllers/nginx/nginx_types.h"
#include "glog/logging.h"
#include "rapidjson/document.h"
#include "runtime/cache/lister.h"
#include "runtime/cache/typed_lister.h"
#include "runtime/controller/builder.h"
#include "runtime/controller/controllerutil/conditions.h"
#include "runtime/controller/controllerutil/status.h"
#include "runtime/controller/reconciler.h"
#include "runtime/events/event_recorder.h"

namespace kcr::nginx {
namespace {

using controller::ReconcileContext;
using controller::Request;
using controller::Result;
namespace controllerutil = controller::controllerutil;

// What the status says: status.readyReplicas and the Ready condition
// (status.observedGeneration is always the Nginx's generation).
struct NginxStatus {
  api::Condition ready;
  int64_t ready_replicas = 0;
};

api::Condition NotReady(const api::Object& nginx, const char* reason,
                        std::string message) {
  api::Condition c;
  c.type = kReadyCondition;
  c.status = api::kConditionFalse;
  c.reason = reason;
  c.message = std::move(message);
  c.observed_generation = nginx.generation();
  return c;
}

// The status as the cache has it; empty when there is none.
Nginx::Status StatusOf(const api::Object& nginx) {
  absl::StatusOr<Nginx> parsed = Nginx::FromObject(nginx);
  return parsed.ok() && parsed->status.has_value() ? *parsed->status
                                                   : Nginx::Status{};
}

int64_t ReadyReplicas(const api::ObjectPtr& deployment) {
  absl::StatusOr<api::DeploymentView> d =
      api::DeploymentView::Create(deployment);
  return d.ok() ? d->ready_replicas() : 0;
}

// Whether `nginx`'s status already reads as WriteStatus would leave it
// (readyReplicas, observedGeneration `generation`, and a Ready condition
// that SetStatusCondition would not change): then there is nothing to
// copy, compare or send. Most reconciles end here.
bool StatusAlreadySays(const api::Object& nginx, const NginxStatus& status,
                       int64_t generation) {
  const rapidjson::Value& root = nginx.json();
  if (!root.IsObject()) return false;
  const auto s = root.FindMember("status");
  if (s == root.MemberEnd() || !s->value.IsObject()) return false;
  const rapidjson::Value& st = s->value;
  auto int_is = [&st](const char* key, int64_t want) {
    const auto m = st.FindMember(key);
    return m != st.MemberEnd() && m->value.IsInt64() &&
           m->value.GetInt64() == want;
  };
  if (!int_is("readyReplicas", status.ready_replicas) ||
      !int_is("observedGeneration", generation)) {
    return false;
  }
  const auto conditions = st.FindMember("conditions");
  if (conditions == st.MemberEnd() || !conditions->value.IsArray()) {
    return false;
  }
  for (const rapidjson::Value& c : conditions->value.GetArray()) {
    if (!c.IsObject()) continue;
    const api::Condition have = api::ConditionFromJson(c);
    if (have.type != status.ready.type) continue;
    // The first of its type, as SetStatusCondition finds it.
    return have.status == status.ready.status &&
           have.reason == status.ready.reason &&
           have.message == status.ready.message &&
           have.observed_generation == status.ready.observed_generation;
  }
  return false;
}

// The Deployment `nginx` asks for, with the schema's defaults;
// InvalidArgument with the reasons when it cannot be run.
absl::StatusOr<DesiredDeployment> Desired(const api::Object& nginx) {
  KCR_ASSIGN_OR_RETURN(Nginx parsed, Nginx::FromObject(nginx));
  parsed.ApplyDefaults();
  const std::vector<std::string> problems = ValidateNginx(parsed);
  if (!problems.empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(problems, "; "));
  }
  return DesiredFor(parsed);
}

class NginxReconciler final : public controller::Reconciler {
 public:
  explicit NginxReconciler(controller::Manager& mgr)
      : client_(mgr.GetClient()),
        clock_(mgr.clock()),
        recorder_(mgr.GetEventRecorderFor(kNginxEventComponent)),
        nginxes_(mgr.ListerFor<Nginx>()),
        deployments_(mgr.ListerFor<api::DeploymentView>()) {}

  absl::StatusOr<Result> Reconcile(const Request& request,
                                   ReconcileContext& ctx) override {
    // 1. The Nginx. Gone: the garbage collector deletes its Deployment.
    // Being deleted (e.g. in the foreground): nothing to keep in step.
    absl::StatusOr<api::ObjectPtr> nginx =
        nginxes_.Get(request.namespace_, request.name);
    if (api::IsNotFound(nginx.status())) return Result::Done();
    KCR_RETURN_IF_ERROR(nginx.status());
    if ((*nginx)->being_deleted()) return Result::Done();

    // 2. Its Deployment, if the cache has one, and whether it is ours.
    absl::StatusOr<api::DeploymentView> have =
        deployments_.Get(request.namespace_, DeploymentName(request.name));
    if (!have.ok() && !api::IsNotFound(have.status())) return have.status();
    const api::ObjectPtr deployment = have.ok() ? have->ptr() : nullptr;
    const bool ours =
        deployment != nullptr && api::IsControlledBy(*deployment, **nginx);

    // 3. What the Nginx asks for: an invalid spec changes nothing.
    absl::StatusOr<DesiredDeployment> desired = Desired(**nginx);
    if (!desired.ok()) {
      return RefuseInvalidSpec(ctx, *nginx, desired.status(),
                               ours ? deployment : nullptr);
    }
    // 4. A Deployment of that name someone else controls is left alone.
    if (deployment != nullptr && !ours) return RefuseForeign(ctx, *nginx);
    if (deployment != nullptr && deployment->being_deleted()) {
      // Its delete event wakes this Nginx, which then creates it anew.
      VLOG(2) << ctx.log_prefix() << " deployment=" << deployment->name()
              << " is being deleted; waiting";
      return Result::Done();
    }

    // 5. Create the Deployment, or put it back in step.
    absl::StatusOr<api::ObjectPtr> current =
        deployment == nullptr ? Create(ctx, *nginx, *desired)
                              : Repair(ctx, *nginx, deployment, *desired);
    KCR_RETURN_IF_ERROR(current.status());
    // The cache was behind: the watch brings the change, and with it
    // another reconcile.
    if (*current == nullptr) return Result::Requeue();

    // 6. Report how ready it is.
    KCR_ASSIGN_OR_RETURN(api::DeploymentView live,
                         api::DeploymentView::Create(*current));
    return WriteStatus(
        ctx, *nginx,
        {ReadyConditionFor(live, desired->replicas, (*nginx)->generation()),
         live.ready_replicas()});
  }

 private:
  // Creates the Deployment; null when one exists already.
  absl::StatusOr<api::ObjectPtr> Create(ReconcileContext& ctx,
                                        const api::ObjectPtr& nginx,
                                        const DesiredDeployment& desired) {
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr built, NewDeployment(*nginx, desired));
    absl::StatusOr<api::ObjectPtr> created = client_->Create(
        ctx.ctx(), client::ResourceFor<api::DeploymentView>(), *built);
    if (api::IsAlreadyExists(created.status())) return nullptr;
    if (!created.ok()) return WriteFailed(ctx, nginx, "create", created);
    LOG(INFO) << ctx.log_prefix() << " created deployment=" << desired.name
              << " replicas=" << desired.replicas << " image=" << desired.image
              << " port=" << desired.port;
    recorder_->Eventf(*nginx, api::kEventTypeNormal, kEventCreated,
                      "Created Deployment %s: %d replicas of %s on port %d",
                      desired.name, desired.replicas, desired.image,
                      desired.port);
    return created;
  }

  // Puts the fields the controller owns back as `desired` says, when they
  // drifted; null when the cache was behind. The cached Deployment is
  // trimmed (TrimDeploymentForCache): the update is built from the
  // Deployment as the API server has it, read afresh, so that nothing the
  // cache leaves out is cleared.
  absl::StatusOr<api::ObjectPtr> Repair(ReconcileContext& ctx,
                                        const api::ObjectPtr& nginx,
                                        const api::ObjectPtr& deployment,
                                        const DesiredDeployment& desired) {
    KCR_ASSIGN_OR_RETURN(api::DeploymentView cached,
                         api::DeploymentView::Create(deployment));
    if (DeploymentDrift(cached, desired).empty()) return deployment;
    absl::StatusOr<api::ObjectPtr> fresh =
        client_->Get(ctx.ctx(),
                     client::ResourceFor<api::DeploymentView>().InNamespace(
                         std::string(deployment->namespace_())),
                     deployment->name());
    if (api::IsNotFound(fresh.status())) return nullptr;
    KCR_RETURN_IF_ERROR(fresh.status());
    // Changed since the cache saw it (deleted and made anew, taken over,
    // being deleted, or already repaired): the watch brings the change.
    if (!api::IsControlledBy(**fresh, *nginx) || (*fresh)->being_deleted()) {
      return nullptr;
    }
    KCR_ASSIGN_OR_RETURN(api::DeploymentView have,
                         api::DeploymentView::Create(*fresh));
    const std::vector<std::string> drift = DeploymentDrift(have, desired);
    if (drift.empty()) return nullptr;
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr repaired,
                         RepairDeployment(**fresh, desired));
    absl::StatusOr<api::ObjectPtr> updated = client_->Update(
        ctx.ctx(), client::ResourceFor<api::DeploymentView>(), *repaired);
    if (api::IsConflict(updated.status()) ||
        api::IsNotFound(updated.status())) {
      return nullptr;
    }
    if (!updated.ok()) return WriteFailed(ctx, nginx, "update", updated);
    const std::string changes = absl::StrJoin(drift, ", ");
    // A spec the controller has not acted on yet explains the difference;
    // otherwise someone changed the Deployment by hand.
    const bool spec_changed =
        StatusOf(*nginx).observed_generation.value_or(0) != nginx->generation();
    LOG(INFO) << ctx.log_prefix()
              << (spec_changed ? " updated" : " repaired drift of")
              << " deployment=" << desired.name << " changes=" << changes;
    if (spec_changed) {
      recorder_->Eventf(*nginx, api::kEventTypeNormal, kEventUpdated,
                        "Updated Deployment %s: %s", desired.name, changes);
    } else {
      recorder_->Eventf(*nginx, api::kEventTypeNormal, kEventDriftRepaired,
                        "Put Deployment %s back after a change made outside "
                        "this Nginx: %s",
                        desired.name, changes);
    }
    return updated;
  }

  absl::StatusOr<Result> RefuseInvalidSpec(ReconcileContext& ctx,
                                           const api::ObjectPtr& nginx,
                                           const absl::Status& invalid,
                                           const api::ObjectPtr& ours) {
    const std::string message(invalid.message());
    LOG(WARNING) << ctx.log_prefix()
                 << " invalid spec, Deployment left as it is: " << message;
    return Report(ctx, nginx, NotReady(*nginx, kReasonInvalidSpec, message),
                  ours, kEventInvalidSpec);
  }

  absl::StatusOr<Result> RefuseForeign(ReconcileContext& ctx,
                                       const api::ObjectPtr& nginx) {
    const std::string message = absl::StrCat(
        "Deployment ", DeploymentName(nginx->name()),
        " exists and is not controlled by this Nginx; it is left alone");
    LOG(WARNING) << ctx.log_prefix() << " " << message;
    KCR_RETURN_IF_ERROR(Report(ctx, nginx,
                               NotReady(*nginx, kReasonNotOwned, message),
                               nullptr, kEventFailed)
                            .status());
    // Retried with backoff: nothing wakes this Nginx when a Deployment it
    // does not own goes away.
    return absl::FailedPreconditionError(message);
  }

  // The Deployment was not written: says so in the status (keeping
  // readyReplicas from `deployment`, ours or null) and, when the Ready
  // condition changes, in a Warning Event.
  absl::StatusOr<Result> Report(ReconcileContext& ctx,
                                const api::ObjectPtr& nginx,
                                const api::Condition& ready,
                                const api::ObjectPtr& deployment,
                                const char* event_reason) {
    const std::vector<api::Condition> conditions = api::ConditionsOf(*nginx);
    const api::Condition* before =
        api::FindStatusCondition(conditions, kReadyCondition);
    if (before == nullptr || before->status != ready.status ||
        before->reason != ready.reason || before->message != ready.message) {
      recorder_->Event(*nginx, api::kEventTypeWarning, event_reason,
                       ready.message);
    }
    return WriteStatus(
        ctx, nginx,
        {ready, deployment != nullptr ? ReadyReplicas(deployment) : 0});
  }

  // A create or update of the Deployment failed (not a conflict): a
  // Warning Event, Ready=False, and the error (retried with backoff).
  absl::Status WriteFailed(ReconcileContext& ctx, const api::ObjectPtr& nginx,
                           const char* verb,
                           const absl::StatusOr<api::ObjectPtr>& written) {
    const std::string message = absl::StrCat("Failed to ", verb, " Deployment ",
                                             DeploymentName(nginx->name()),
                                             ": ", written.status().message());
    LOG(WARNING) << ctx.log_prefix() << " " << message;
    recorder_->Event(*nginx, api::kEventTypeWarning, kEventFailed, message);
    // readyReplicas unchanged; the write's error matters more than the
    // status's.
    (void)WriteStatus(ctx, nginx,
                      {NotReady(*nginx, kReasonFailed, message),
                       StatusOf(*nginx).ready_replicas.value_or(0)});
    return written.status();
  }

  // Writes status.readyReplicas, status.observedGeneration and the Ready
  // condition when they differ from what the cached `nginx` has.
  absl::StatusOr<Result> WriteStatus(ReconcileContext& ctx,
                                     const api::ObjectPtr& nginx,
                                     const NginxStatus& status) {
    const int64_t generation = nginx->generation();
    if (StatusAlreadySays(*nginx, status, generation)) return Result::Done();
    const absl::Time now = clock_->Now();
    absl::StatusOr<api::ObjectPtr> written = controllerutil::UpdateStatus(
        ctx.ctx(), client_, client::ResourceFor<Nginx>(), nginx,
        [&](api::ObjectBuilder& b) -> absl::Status {
          if (const rapidjson::Value* s = b.Find("/status");
              s == nullptr || !s->IsObject()) {
            KCR_RETURN_IF_ERROR(b.SetJson("/status", "{}"));
          }
          KCR_RETURN_IF_ERROR(
              b.SetInt("/status/readyReplicas", status.ready_replicas));
          KCR_RETURN_IF_ERROR(
              b.SetInt("/status/observedGeneration", generation));
          return controllerutil::SetStatusCondition(b, status.ready, now)
              .status();
        });
    // A newer Nginx is on its way through the watch: start again from it.
    if (api::IsConflict(written.status())) return Result::Requeue();
    // Deleted meanwhile: nothing to report on.
    if (api::IsNotFound(written.status())) return Result::Done();
    KCR_RETURN_IF_ERROR(written.status());
    if (*written != nginx) {
      VLOG(2) << ctx.log_prefix()
              << " status readyReplicas=" << status.ready_replicas
              << " ready=" << status.ready.status
              << " reason=" << status.ready.reason;
    }
    return Result::Done();
  }

  client::RestClient* const client_;
  const Clock* const clock_;
  const std::unique_ptr<events::EventRecorder> recorder_;
  const cache::Lister nginxes_;
  const cache::DeploymentLister deployments_;
};

// The Nginx kind for the Manager's RESTMapper (Owns maps an owned
// Deployment's ownerReference to its Nginx through it), from the CRD
// manifest compiled into the binary.
absl::Status AddNginxMapping(api::RESTMapper& mapper) {
  KCR_ASSIGN_OR_RETURN(std::unique_ptr<rapidjson::Document> crd,
                       json::YamlToJson(Nginx::kCrdManifest));
  return mapper.AddFromCRD(*crd);
}

}  // namespace

client::Resource NginxResource() { return client::ResourceFor<Nginx>(); }

client::Resource DeploymentResource() {
  return client::ResourceFor<api::DeploymentView>();
}

absl::Status AddNginxController(controller::Manager& mgr,
                                const NginxOptions& options) {
  if (mgr.HasController(kNginxControllerName)) {
    return absl::AlreadyExistsError(
        "the nginx controller was already added to this Manager");
  }
  KCR_RETURN_IF_ERROR(AddNginxMapping(*mgr.GetRESTMapper()));
  if (options.trim_cached_deployments) {
    absl::Status trimmed = mgr.GetInformerFactory()
                               ->InformerFor(DeploymentResource())
                               ->SetTransform(DeploymentCacheTransform());
    if (!trimmed.ok()) {
      LOG(WARNING) << "nginx: Deployments are cached whole: " << trimmed;
    }
  }
  controller::ControllerOptions controller_options;
  controller_options.max_concurrent_reconciles = options.workers;
  return controller::ControllerBuilder(mgr)
      .For<Nginx>()
      .Owns<api::DeploymentView>()
      .Named(kNginxControllerName)
      .WithOptions(std::move(controller_options))
      .Complete(std::make_shared<NginxReconciler>(mgr));
}

}  // namespace kcr::nginx
