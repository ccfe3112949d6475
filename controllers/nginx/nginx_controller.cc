#include "controllers/nginx/nginx_controller.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/crd/crd_manifests.h"
#include "api/errors/errors.h"
#include "api/json/yaml_to_json.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "api/types/condition.h"
#include "api/types/event.h"
#include "api/types/owner_reference.h"
#include "base/clock.h"
#include "base/status_macros.h"
#include "controllers/nginx/nginx_deployment.h"
#include "controllers/nginx/nginx_types.h"
#include "glog/logging.h"
#include "rapidjson/document.h"
#include "runtime/cache/lister.h"
#include "runtime/controller/builder.h"
#include "runtime/controller/controllerutil/conditions.h"
#include "runtime/controller/reconciler.h"
#include "runtime/events/event_recorder.h"

namespace kcr::nginx {
namespace {

using controller::ReconcileContext;
using controller::Request;
using controller::Result;

// What the status should say beyond the Ready condition.
struct StatusUpdate {
  api::Condition ready;
  int64_t ready_replicas = 0;
};

class NginxReconciler final : public controller::Reconciler {
 public:
  explicit NginxReconciler(controller::Manager& mgr)
      : client_(mgr.GetClient()),
        clock_(mgr.clock()),
        recorder_(mgr.GetEventRecorderFor(kNginxEventComponent)),
        nginxes_(mgr.GetInformerFactory()
                     ->InformerFor(NginxResource())
                     ->GetIndexer(),
                 {Nginx::kGroup, Nginx::kPlural}),
        deployments_(mgr.GetInformerFactory()
                         ->InformerFor(DeploymentResource())
                         ->GetIndexer(),
                     {"apps", "deployments"}) {}

  absl::StatusOr<Result> Reconcile(const Request& request,
                                   ReconcileContext& ctx) override {
    absl::StatusOr<api::ObjectPtr> nginx =
        nginxes_.Get(request.namespace_, request.name);
    // Gone: the garbage collector deletes its Deployment.
    if (api::IsNotFound(nginx.status())) return Result::Done();
    KCR_RETURN_IF_ERROR(nginx.status());
    // Being deleted (e.g. in the foreground): nothing to keep in step.
    if ((*nginx)->being_deleted()) return Result::Done();

    const std::string deploy_name = DeploymentName(request.name);
    absl::StatusOr<api::ObjectPtr> deploy =
        deployments_.Get(request.namespace_, deploy_name);
    if (!deploy.ok() && !api::IsNotFound(deploy.status())) {
      return deploy.status();
    }
    const api::ObjectPtr have = deploy.ok() ? *deploy : nullptr;
    const bool ours = have != nullptr && api::IsControlledBy(*have, **nginx);

    // The spec, with the schema's defaults, and whether it can be run.
    absl::StatusOr<Nginx> parsed = Nginx::FromObject(**nginx);
    std::vector<std::string> problems;
    if (parsed.ok()) {
      parsed->ApplyDefaults();
      problems = ValidateNginx(*parsed);
    } else {
      problems.push_back(std::string(parsed.status().message()));
    }
    if (!problems.empty()) {
      const std::string message = absl::StrJoin(problems, "; ");
      LOG(WARNING) << ctx.log_prefix() << " invalid spec, Deployment left as "
                   << "it is: " << message;
      return Report(ctx, **nginx, Refusal(**nginx, kReasonInvalidSpec, message),
                    ours ? have : nullptr, kEventInvalidSpec);
    }
    const DesiredDeployment desired = DesiredFor(*parsed);

    if (have != nullptr && !ours) {
      const std::string message = absl::StrCat(
          "Deployment ", deploy_name,
          " exists and is not controlled by this Nginx; it is left alone");
      LOG(WARNING) << ctx.log_prefix() << " " << message;
      absl::StatusOr<Result> reported =
          Report(ctx, **nginx, Refusal(**nginx, kReasonNotOwned, message),
                 nullptr, kEventFailed);
      if (!reported.ok()) return reported;
      // Retried with backoff: nothing wakes this Nginx when a Deployment it
      // does not own goes away.
      return absl::FailedPreconditionError(message);
    }
    if (have != nullptr && have->being_deleted()) {
      // Its delete event wakes this Nginx, which then creates it anew.
      VLOG(2) << ctx.log_prefix() << " deployment=" << deploy_name
              << " is being deleted; waiting";
      return Result::Done();
    }

    api::ObjectPtr current = have;
    if (have == nullptr) {
      absl::StatusOr<api::ObjectPtr> built = NewDeployment(**nginx, desired);
      KCR_RETURN_IF_ERROR(built.status());
      absl::StatusOr<api::ObjectPtr> created =
          client_->Create(ctx.ctx(), DeploymentResource(), **built);
      // The cache was behind: the watch brings the Deployment, and with it
      // another reconcile.
      if (api::IsAlreadyExists(created.status())) return Result::Requeue();
      if (!created.ok()) return WriteFailed(ctx, **nginx, "create", created);
      LOG(INFO) << ctx.log_prefix() << " created deployment=" << deploy_name
                << " replicas=" << desired.replicas
                << " image=" << desired.image << " port=" << desired.port;
      recorder_->Eventf(**nginx, api::kEventTypeNormal, kEventCreated,
                        "Created Deployment %s: %d replicas of %s on port %d",
                        deploy_name, desired.replicas, desired.image,
                        desired.port);
      current = *created;
    } else if (const std::vector<std::string> drift =
                   DeploymentDrift(*have, desired);
               !drift.empty()) {
      absl::StatusOr<api::ObjectPtr> repaired =
          RepairDeployment(*have, desired);
      KCR_RETURN_IF_ERROR(repaired.status());
      absl::StatusOr<api::ObjectPtr> updated =
          client_->Update(ctx.ctx(), DeploymentResource(), **repaired);
      if (api::IsConflict(updated.status()) ||
          api::IsNotFound(updated.status())) {
        return Result::Requeue();
      }
      if (!updated.ok()) return WriteFailed(ctx, **nginx, "update", updated);
      const std::string changes = absl::StrJoin(drift, ", ");
      // A spec the controller has not acted on yet explains the
      // difference; otherwise someone changed the Deployment by hand.
      const bool spec_changed =
          ObservedGeneration(**nginx) != (*nginx)->generation();
      LOG(INFO) << ctx.log_prefix()
                << (spec_changed ? " updated" : " repaired drift of")
                << " deployment=" << deploy_name << " changes=" << changes;
      if (spec_changed) {
        recorder_->Eventf(**nginx, api::kEventTypeNormal, kEventUpdated,
                          "Updated Deployment %s: %s", deploy_name, changes);
      } else {
        recorder_->Eventf(**nginx, api::kEventTypeNormal, kEventDriftRepaired,
                          "Put Deployment %s back after a change made "
                          "outside this Nginx: %s",
                          deploy_name, changes);
      }
      current = *updated;
    }

    StatusUpdate status;
    status.ready =
        ReadyConditionFor(*current, desired.replicas, (*nginx)->generation());
    status.ready_replicas = ReadyReplicas(*current);
    return WriteStatus(ctx, **nginx, status);
  }

 private:
  static int64_t ObservedGeneration(const api::Object& nginx) {
    const rapidjson::Value* v = nginx.Find("/status/observedGeneration");
    return v != nullptr && v->IsInt64() ? v->GetInt64() : 0;
  }

  static int64_t ReadyReplicas(const api::Object& deployment) {
    const rapidjson::Value* v = deployment.Find("/status/readyReplicas");
    return v != nullptr && v->IsInt64() ? v->GetInt64() : 0;
  }

  static api::Condition Refusal(const api::Object& nginx, const char* reason,
                                std::string message) {
    api::Condition c;
    c.type = kReadyCondition;
    c.status = api::kConditionFalse;
    c.reason = reason;
    c.message = std::move(message);
    c.observed_generation = nginx.generation();
    return c;
  }

  // The Deployment was not written: says so in the status (keeping
  // readyReplicas from `deployment`, ours or null) and, when the Ready
  // condition changes, in a Warning Event.
  absl::StatusOr<Result> Report(ReconcileContext& ctx, const api::Object& nginx,
                                const api::Condition& ready,
                                const api::ObjectPtr& deployment,
                                const char* event_reason) {
    const std::vector<api::Condition> conditions = api::ConditionsOf(nginx);
    const api::Condition* before =
        api::FindStatusCondition(conditions, kReadyCondition);
    if (before == nullptr || before->status != ready.status ||
        before->reason != ready.reason || before->message != ready.message) {
      recorder_->Event(nginx, api::kEventTypeWarning, event_reason,
                       ready.message);
    }
    StatusUpdate status;
    status.ready = ready;
    status.ready_replicas =
        deployment != nullptr ? ReadyReplicas(*deployment) : 0;
    return WriteStatus(ctx, nginx, status);
  }

  // A create or update of the Deployment failed (not a conflict): a
  // Warning Event, Ready=False, and the error (retried with backoff).
  absl::StatusOr<Result> WriteFailed(
      ReconcileContext& ctx, const api::Object& nginx, const char* verb,
      const absl::StatusOr<api::ObjectPtr>& written) {
    const std::string message = absl::StrCat("Failed to ", verb, " Deployment ",
                                             DeploymentName(nginx.name()), ": ",
                                             written.status().message());
    LOG(WARNING) << ctx.log_prefix() << " " << message;
    recorder_->Event(nginx, api::kEventTypeWarning, kEventFailed, message);
    StatusUpdate status;
    status.ready = Refusal(nginx, kReasonFailed, message);
    status.ready_replicas = ReadyReplicas(nginx);  // unchanged
    // The write's error matters more than the status's.
    (void)WriteStatus(ctx, nginx, status);
    return written.status();
  }

  // Writes status.readyReplicas, status.observedGeneration and the Ready
  // condition when they differ from what `nginx` (as cached) has: nothing
  // is written on a reconcile that changes nothing, so the status write's
  // own watch event ends the loop.
  absl::StatusOr<Result> WriteStatus(ReconcileContext& ctx,
                                     const api::Object& nginx,
                                     const StatusUpdate& update) {
    api::ObjectBuilder b(nginx);
    if (const rapidjson::Value* s = b.Find("/status");
        s == nullptr || !s->IsObject()) {
      KCR_RETURN_IF_ERROR(b.SetJson("/status", "{}"));
    }
    KCR_RETURN_IF_ERROR(
        b.SetInt("/status/readyReplicas", update.ready_replicas));
    KCR_RETURN_IF_ERROR(
        b.SetInt("/status/observedGeneration", nginx.generation()));
    KCR_RETURN_IF_ERROR(controller::controllerutil::SetStatusCondition(
                            b, update.ready, clock_->Now())
                            .status());
    const rapidjson::Value* before = nginx.Find("/status");
    const rapidjson::Value* after = b.Find("/status");
    if (before != nullptr && after != nullptr && *before == *after) {
      return Result::Done();
    }
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr object, b.Build());
    absl::StatusOr<api::ObjectPtr> written =
        client_->UpdateStatus(ctx.ctx(), NginxResource(), *object);
    // A newer Nginx is on its way through the watch: start again from it.
    if (api::IsConflict(written.status())) return Result::Requeue();
    // Deleted meanwhile: nothing to report on.
    if (api::IsNotFound(written.status())) return Result::Done();
    KCR_RETURN_IF_ERROR(written.status());
    VLOG(2) << ctx.log_prefix()
            << " status readyReplicas=" << update.ready_replicas
            << " ready=" << update.ready.status
            << " reason=" << update.ready.reason;
    return Result::Done();
  }

  client::RestClient* const client_;
  const Clock* const clock_;
  const std::unique_ptr<events::EventRecorder> recorder_;
  const cache::Lister nginxes_;
  const cache::Lister deployments_;
};

// The Nginx kind for the Manager's RESTMapper (Owns maps an owned
// Deployment's ownerReference to its Nginx through it), from the CRD
// manifest compiled into the binary.
absl::Status AddNginxMapping(api::RESTMapper& mapper) {
  KCR_ASSIGN_OR_RETURN(std::unique_ptr<rapidjson::Document> crd,
                       json::YamlToJson(api::crd::kNginxCrdYaml));
  return mapper.AddFromCRD(*crd);
}

}  // namespace

client::Resource NginxResource() {
  return client::Resource::Namespaced(
      {Nginx::kGroup, Nginx::kVersion, Nginx::kPlural});
}

client::Resource DeploymentResource() {
  return client::Resource::Namespaced({"apps", "v1", "deployments"});
}

absl::Status AddNginxController(controller::Manager& mgr,
                                const NginxOptions& options) {
  if (mgr.HasController(kNginxControllerName)) {
    return absl::AlreadyExistsError(
        "the nginx controller was already added to this Manager");
  }
  KCR_RETURN_IF_ERROR(AddNginxMapping(*mgr.GetRESTMapper()));
  controller::ControllerOptions controller_options;
  controller_options.max_concurrent_reconciles = options.workers;
  return controller::ControllerBuilder(mgr)
      .For(NginxResource())
      .Owns(DeploymentResource())
      .Named(kNginxControllerName)
      .WithOptions(std::move(controller_options))
      .Complete(std::make_shared<NginxReconciler>(mgr));
}

}  // namespace kcr::nginx
