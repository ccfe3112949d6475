#include "apiserver/registry/workload_strategy.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "api/json/json_util.h"
#include "api/object_builder.h"
#include "apiserver/internal/object_fields.h"
#include "apiserver/registry/core_strategy.h"
#include "apiserver/registry/workload_validation.h"
#include "rapidjson/pointer.h"

namespace kcr {
namespace apiserver {
namespace {

using api::FieldError;
using rapidjson::Value;

void IntIfAbsent(api::ObjectBuilder* b, const char* pointer, int64_t v) {
  if (b->Find(pointer) == nullptr) (void)b->SetInt(pointer, v);
}

void BoolIfAbsent(api::ObjectBuilder* b, const char* pointer, bool v) {
  if (b->Find(pointer) == nullptr) (void)b->SetBool(pointer, v);
}

void JsonIfAbsent(api::ObjectBuilder* b, const char* pointer,
                  const char* json) {
  if (b->Find(pointer) == nullptr) (void)b->SetJson(pointer, json);
}

bool HasSpec(const api::ObjectBuilder& b) { return b.Find("/spec") != nullptr; }

// `field` of `object` differs from `live`'s: "field is immutable".
void Immutable(const Value& live, const Value& object, const char* pointer,
               const char* field, std::vector<FieldError>* errors) {
  const Value* before = rapidjson::Pointer(pointer).Get(live);
  const Value* after = rapidjson::Pointer(pointer).Get(object);
  const bool same = (before == nullptr) == (after == nullptr) &&
                    (before == nullptr || *before == *after);
  if (!same) {
    // The value as JSON: kube prints the Go struct.
    auto text = after == nullptr ? absl::StatusOr<std::string>("null")
                                 : json::JsonToString(*after);
    errors->push_back(FieldErr(FieldError::Type::kInvalid, field,
                               text.ok() ? *text : "", "field is immutable"));
  }
}

// A kind whose status starts as `initial_status`, defaulted by `defaults`
// and validated by `validate` (and `validate_update` on updates, after
// `validate`).
class KindStrategy : public Strategy {
 public:
  using Defaults = void (*)(api::ObjectBuilder*);
  using Validator = void (*)(const Value&, std::vector<FieldError>*);
  using UpdateValidator = void (*)(const Value&, const Value&,
                                   std::vector<FieldError>*);

  KindStrategy(const char* initial_status, Defaults defaults,
               Validator validate, UpdateValidator validate_update = nullptr)
      : initial_status_(initial_status),
        defaults_(defaults),
        validate_(validate),
        validate_update_(validate_update) {}

  void Default(api::ObjectBuilder* b) const override {
    if (defaults_ != nullptr) defaults_(b);
  }
  void PrepareForCreate(const ResourceInfo&, api::ObjectBuilder* b,
                        const std::string&) const override {
    if (initial_status_ != nullptr)
      (void)b->SetJson("/status", initial_status_);
  }
  void Validate(const ResourceInfo&, api::ObjectBuilder* b,
                std::vector<FieldError>* errors) const override {
    if (validate_ != nullptr) validate_(b->json(), errors);
  }
  void ValidateUpdate(const ResourceInfo&, const Value& live,
                      api::ObjectBuilder* b, const std::string&,
                      std::vector<FieldError>* errors) const override {
    if (validate_ != nullptr) validate_(b->json(), errors);
    if (validate_update_ != nullptr) validate_update_(live, b->json(), errors);
  }

 private:
  const char* initial_status_;
  Defaults defaults_;
  Validator validate_;
  UpdateValidator validate_update_;
};

// ---------------------------------------------------------------------------
// Defaults (SetDefaults_<Kind> of the served version).

void DefaultStatefulSet(api::ObjectBuilder* b) {
  if (!HasSpec(*b)) return;
  IntIfAbsent(b, "/spec/replicas", 1);
  SetIfAbsent(b, "/spec/podManagementPolicy", "OrderedReady");
  SetIfAbsent(b, "/spec/updateStrategy/type", "RollingUpdate");
  const Value* type = b->Find("/spec/updateStrategy/type");
  if (type != nullptr && type->IsString() &&
      std::string_view(type->GetString()) == "RollingUpdate") {
    IntIfAbsent(b, "/spec/updateStrategy/rollingUpdate/partition", 0);
  }
  IntIfAbsent(b, "/spec/revisionHistoryLimit", 10);
  SetIfAbsent(b, "/spec/persistentVolumeClaimRetentionPolicy/whenDeleted",
              "Retain");
  SetIfAbsent(b, "/spec/persistentVolumeClaimRetentionPolicy/whenScaled",
              "Retain");
  DefaultPodSpec(b, "/spec/template/spec");
}

void DefaultDaemonSet(api::ObjectBuilder* b) {
  if (!HasSpec(*b)) return;
  SetIfAbsent(b, "/spec/updateStrategy/type", "RollingUpdate");
  const Value* type = b->Find("/spec/updateStrategy/type");
  if (type != nullptr && type->IsString() &&
      std::string_view(type->GetString()) == "RollingUpdate") {
    IntIfAbsent(b, "/spec/updateStrategy/rollingUpdate/maxUnavailable", 1);
    IntIfAbsent(b, "/spec/updateStrategy/rollingUpdate/maxSurge", 0);
  }
  IntIfAbsent(b, "/spec/revisionHistoryLimit", 10);
  DefaultPodSpec(b, "/spec/template/spec");
}

// SetDefaults_ReplicationController: the selector and the labels come from
// the template's labels when absent.
void DefaultReplicationController(api::ObjectBuilder* b) {
  if (!HasSpec(*b)) return;
  const Value* labels = b->Find("/spec/template/metadata/labels");
  if (labels != nullptr && labels->IsObject() && labels->MemberCount() > 0) {
    const Value* selector = b->Find("/spec/selector");
    if (selector == nullptr || !selector->IsObject() ||
        selector->MemberCount() == 0) {
      Value copy(*labels, b->allocator());
      (void)b->Set("/spec/selector", copy);
    }
    const Value* own = b->Find("/metadata/labels");
    if (own == nullptr || !own->IsObject() || own->MemberCount() == 0) {
      Value copy(*b->Find("/spec/template/metadata/labels"), b->allocator());
      (void)b->Set("/metadata/labels", copy);
    }
  }
  IntIfAbsent(b, "/spec/replicas", 1);
  DefaultPodSpec(b, "/spec/template/spec");
}

void DefaultJobSpec(api::ObjectBuilder* b, const std::string& spec) {
  const std::string completions = spec + "/completions";
  const std::string parallelism = spec + "/parallelism";
  if (b->Find(completions) == nullptr && b->Find(parallelism) == nullptr) {
    (void)b->SetInt(completions, 1);
    (void)b->SetInt(parallelism, 1);
  }
  if (b->Find(parallelism) == nullptr) (void)b->SetInt(parallelism, 1);
  if (b->Find(spec + "/backoffLimit") == nullptr &&
      b->Find(spec + "/backoffLimitPerIndex") == nullptr) {
    (void)b->SetInt(spec + "/backoffLimit", 6);
  }
  SetIfAbsent(b, spec + "/completionMode", "NonIndexed");
  if (b->Find(spec + "/suspend") == nullptr) {
    (void)b->SetBool(spec + "/suspend", false);
  }
  if (b->Find(spec + "/podFailurePolicy") == nullptr) {
    SetIfAbsent(b, spec + "/podReplacementPolicy", "TerminatingOrFailed");
  }
  DefaultPodSpec(b, spec + "/template/spec");
}

void DefaultJob(api::ObjectBuilder* b) {
  if (HasSpec(*b)) DefaultJobSpec(b, "/spec");
}

void DefaultCronJob(api::ObjectBuilder* b) {
  if (!HasSpec(*b)) return;
  SetIfAbsent(b, "/spec/concurrencyPolicy", "Allow");
  BoolIfAbsent(b, "/spec/suspend", false);
  IntIfAbsent(b, "/spec/successfulJobsHistoryLimit", 3);
  IntIfAbsent(b, "/spec/failedJobsHistoryLimit", 1);
  DefaultPodSpec(b, "/spec/jobTemplate/spec/template/spec");
}

// autoscaling/v2: one CPU target of 80% when no metric is given.
void DefaultHorizontalPodAutoscaler(api::ObjectBuilder* b) {
  if (!HasSpec(*b)) return;
  IntIfAbsent(b, "/spec/minReplicas", 1);
  const Value* metrics = b->Find("/spec/metrics");
  if (metrics == nullptr || !metrics->IsArray() || metrics->Empty()) {
    (void)b->SetJson("/spec/metrics",
                     R"([{"type":"Resource","resource":{"name":"cpu",)"
                     R"("target":{"type":"Utilization",)"
                     R"("averageUtilization":80}}}])");
  }
}

void DefaultPersistentVolumeClaim(api::ObjectBuilder* b) {
  if (HasSpec(*b)) SetIfAbsent(b, "/spec/volumeMode", "Filesystem");
}

void DefaultPersistentVolume(api::ObjectBuilder* b) {
  if (!HasSpec(*b)) return;
  SetIfAbsent(b, "/spec/persistentVolumeReclaimPolicy", "Retain");
  SetIfAbsent(b, "/spec/volumeMode", "Filesystem");
}

void DefaultNetworkPolicy(api::ObjectBuilder* b) {
  if (!HasSpec(*b) || b->Find("/spec/policyTypes") != nullptr) return;
  const Value* egress = b->Find("/spec/egress");
  const bool has_egress =
      egress != nullptr && egress->IsArray() && !egress->Empty();
  (void)b->SetJson("/spec/policyTypes",
                   has_egress ? R"(["Ingress","Egress"])" : R"(["Ingress"])");
}

void DefaultStorageClass(api::ObjectBuilder* b) {
  SetIfAbsent(b, "/reclaimPolicy", "Delete");
  SetIfAbsent(b, "/volumeBindingMode", "Immediate");
}

void DefaultCSIDriver(api::ObjectBuilder* b) {
  if (!HasSpec(*b)) return;
  BoolIfAbsent(b, "/spec/attachRequired", true);
  BoolIfAbsent(b, "/spec/podInfoOnMount", false);
  BoolIfAbsent(b, "/spec/storageCapacity", false);
  BoolIfAbsent(b, "/spec/requiresRepublish", false);
  BoolIfAbsent(b, "/spec/seLinuxMount", false);
  SetIfAbsent(b, "/spec/fsGroupPolicy", "ReadWriteOnceWithFSType");
  JsonIfAbsent(b, "/spec/volumeLifecycleModes", R"(["Persistent"])");
}

void DefaultPriorityClass(api::ObjectBuilder* b) {
  SetIfAbsent(b, "/preemptionPolicy", "PreemptLowerPriority");
}

// admissionregistration/v1 SetDefaults_{Validating,Mutating}Webhook and
// SetDefaults_Rule on every webhook.
void DefaultWebhooks(api::ObjectBuilder* b, bool mutating) {
  const Value* hooks = b->Find("/webhooks");
  if (hooks == nullptr || !hooks->IsArray()) return;
  for (rapidjson::SizeType i = 0; i < hooks->Size(); ++i) {
    const std::string at = "/webhooks/" + std::to_string(i);
    SetIfAbsent(b, at + "/failurePolicy", "Fail");
    SetIfAbsent(b, at + "/matchPolicy", "Equivalent");
    if (b->Find(at + "/namespaceSelector") == nullptr) {
      (void)b->SetJson(at + "/namespaceSelector", "{}");
    }
    if (b->Find(at + "/objectSelector") == nullptr) {
      (void)b->SetJson(at + "/objectSelector", "{}");
    }
    if (b->Find(at + "/timeoutSeconds") == nullptr) {
      (void)b->SetInt(at + "/timeoutSeconds", 10);
    }
    if (mutating) SetIfAbsent(b, at + "/reinvocationPolicy", "Never");
    const Value* rules = b->Find(at + "/rules");
    if (rules != nullptr && rules->IsArray()) {
      for (rapidjson::SizeType j = 0; j < rules->Size(); ++j) {
        SetIfAbsent(b, at + "/rules/" + std::to_string(j) + "/scope", "*");
      }
    }
  }
}

void DefaultValidatingWebhooks(api::ObjectBuilder* b) {
  DefaultWebhooks(b, false);
}
void DefaultMutatingWebhooks(api::ObjectBuilder* b) {
  DefaultWebhooks(b, true);
}

void DefaultValidatingAdmissionPolicy(api::ObjectBuilder* b) {
  if (!HasSpec(*b)) return;
  SetIfAbsent(b, "/spec/failurePolicy", "Fail");
  if (b->Find("/spec/matchConstraints") != nullptr) {
    SetIfAbsent(b, "/spec/matchConstraints/matchPolicy", "Equivalent");
    JsonIfAbsent(b, "/spec/matchConstraints/namespaceSelector", "{}");
    JsonIfAbsent(b, "/spec/matchConstraints/objectSelector", "{}");
  }
}

// ---------------------------------------------------------------------------
// Update rules.

void StatefulSetUpdate(const Value& live, const Value& set,
                       std::vector<FieldError>* errors) {
  ValidateAppsSelectorUnchanged(live, set, errors);
}

void JobUpdate(const Value& live, const Value& job,
               std::vector<FieldError>* errors) {
  Immutable(live, job, "/spec/selector", "spec.selector", errors);
  Immutable(live, job, "/spec/completionMode", "spec.completionMode", errors);
  const Value* suspend = rapidjson::Pointer("/spec/suspend").Get(job);
  const bool suspended =
      suspend != nullptr && suspend->IsBool() && suspend->GetBool();
  // A suspended Job's template may change (kube lets a queue set
  // scheduling directives before it starts).
  if (!suspended) {
    Immutable(live, job, "/spec/template", "spec.template", errors);
  }
}

void ValidateJob(const Value& job, std::vector<FieldError>* errors) {
  ValidateJobSpec(rapidjson::Pointer("/spec").Get(job), "spec", true, errors);
}

void PriorityClassUpdate(const Value& live, const Value& pc,
                         std::vector<FieldError>* errors) {
  const Value* before = rapidjson::Pointer("/value").Get(live);
  const Value* after = rapidjson::Pointer("/value").Get(pc);
  if (before != nullptr && after != nullptr && *before != *after) {
    errors->push_back(FieldErr(FieldError::Type::kForbidden, "value", "",
                               "may not be changed in an update."));
  }
}

void ValidateCertificateSigningRequest(const Value& csr,
                                       std::vector<FieldError>* errors) {
  const Value* spec = rapidjson::Pointer("/spec").Get(csr);
  for (const char* key : {"request", "signerName"}) {
    const Value* v =
        spec != nullptr && spec->IsObject() ? Member(*spec, key) : nullptr;
    if (v == nullptr || !v->IsString() || v->GetStringLength() == 0) {
      errors->push_back(FieldErr(FieldError::Type::kRequired,
                                 std::string("spec.") + key, "", ""));
    }
  }
}

void ValidateAPIService(const Value& api_service,
                        std::vector<FieldError>* errors) {
  const Value* spec = rapidjson::Pointer("/spec").Get(api_service);
  const Value* name = rapidjson::Pointer("/metadata/name").Get(api_service);
  const auto str = [](const Value* v) {
    return v != nullptr && v->IsString()
               ? std::string(v->GetString(), v->GetStringLength())
               : std::string();
  };
  const std::string group =
      str(spec != nullptr ? rapidjson::Pointer("/group").Get(*spec) : nullptr);
  const std::string version = str(
      spec != nullptr ? rapidjson::Pointer("/version").Get(*spec) : nullptr);
  if (str(name) != version + "." + group) {
    errors->push_back(FieldErr(FieldError::Type::kInvalid, "metadata.name",
                               Quote(str(name)),
                               "must be `spec.version+\".\"+spec.group`"));
  }
}

// Jobs select their pods by a label holding their uid, added to the
// template unless spec.manualSelector (kube's generateSelector).
class JobStrategyImpl : public KindStrategy {
 public:
  JobStrategyImpl() : KindStrategy("{}", DefaultJob, ValidateJob, JobUpdate) {}

  void PrepareForCreate(const ResourceInfo& r, api::ObjectBuilder* b,
                        const std::string& now) const override {
    KindStrategy::PrepareForCreate(r, b, now);
    const Value* manual = b->Find("/spec/manualSelector");
    if (!HasSpec(*b) ||
        (manual != nullptr && manual->IsBool() && manual->GetBool())) {
      return;
    }
    const std::string uid = StringAt(*b, "/metadata/uid");
    const std::string name = StringAt(*b, "/metadata/name");
    const std::string labels = "/spec/template/metadata/labels/";
    const std::string uid_key = "batch.kubernetes.io~1controller-uid";
    SetIfAbsent(b, labels + "controller-uid", uid);
    SetIfAbsent(b, labels + "batch.kubernetes.io~1job-name", name);
    SetIfAbsent(b, labels + uid_key, uid);
    SetIfAbsent(b, labels + "job-name", name);
    SetIfAbsent(b, "/spec/selector/matchLabels/" + uid_key, uid);
  }

  void NameGenerated(std::string_view name,
                     api::ObjectBuilder* b) const override {
    const Value* manual = b->Find("/spec/manualSelector");
    if (manual != nullptr && manual->IsBool() && manual->GetBool()) return;
    // The template's job-name labels follow a generated name.
    for (const char* key : {"/spec/template/metadata/labels/job-name",
                            "/spec/template/metadata/labels/"
                            "batch.kubernetes.io~1job-name"}) {
      if (b->Find(key) != nullptr) (void)b->SetString(key, name);
    }
  }
};

// DaemonSets carry their template's generation in an annotation (the
// internal spec.templateGeneration of kube's daemonset strategy, as
// apps/v1 shows it): 1 on create, one more on each update that changes
// spec.template. The daemonset controller labels pods with it.
constexpr char kTemplateGenerationAnnotation[] =
    "/metadata/annotations/deprecated.daemonset.template.generation";

class DaemonSetStrategyImpl : public KindStrategy {
 public:
  DaemonSetStrategyImpl()
      : KindStrategy(R"({"currentNumberScheduled":0,"numberMisscheduled":0,)"
                     R"("desiredNumberScheduled":0,"numberReady":0})",
                     DefaultDaemonSet, ValidateDaemonSet, StatefulSetUpdate) {}

  void PrepareForCreate(const ResourceInfo& r, api::ObjectBuilder* b,
                        const std::string& now) const override {
    KindStrategy::PrepareForCreate(r, b, now);
    if (HasSpec(*b)) (void)b->SetString(kTemplateGenerationAnnotation, "1");
  }

  // After the defaults, so that templates compare as stored.
  void ValidateUpdate(const ResourceInfo& r, const Value& live,
                      api::ObjectBuilder* b, const std::string& now,
                      std::vector<FieldError>* errors) const override {
    KindStrategy::ValidateUpdate(r, live, b, now, errors);
    if (!HasSpec(*b)) return;
    const Value* old_gen =
        rapidjson::Pointer(kTemplateGenerationAnnotation).Get(live);
    int64_t gen = 1;
    if (old_gen != nullptr && old_gen->IsString()) {
      gen = std::max<int64_t>(1, std::atoll(old_gen->GetString()));
    }
    const Value* old_template = rapidjson::Pointer("/spec/template").Get(live);
    const Value* new_template = b->Find("/spec/template");
    if (old_template != nullptr && new_template != nullptr &&
        !json::JsonDeepEqual(*old_template, *new_template)) {
      ++gen;
    }
    (void)b->SetString(kTemplateGenerationAnnotation, std::to_string(gen));
  }
};

// APIServices served by this server itself (no spec.service) are
// Available at once, as kube-aggregator's availability controller marks
// local ones.
class APIServiceStrategyImpl : public KindStrategy {
 public:
  APIServiceStrategyImpl() : KindStrategy("{}", nullptr, ValidateAPIService) {}

  // The core group's APIService is "v1.": the name rule is
  // ValidateAPIService's (version "." group), not a DNS subdomain.
  void ValidateName(std::string_view, std::vector<FieldError>*) const override {
  }

  void PrepareForCreate(const ResourceInfo& r, api::ObjectBuilder* b,
                        const std::string& now) const override {
    KindStrategy::PrepareForCreate(r, b, now);
    const Value* service = b->Find("/spec/service");
    if (service != nullptr && !service->IsNull()) return;
    (void)b->SetJson(
        "/status",
        "{\"conditions\":[{\"type\":\"Available\",\"status\":\"True\","
        "\"lastTransitionTime\":\"" +
            now +
            "\",\"reason\":\"Local\",\"message\":\"Local APIServices are "
            "always available\"}]}");
  }
};

}  // namespace

const Strategy* WorkloadStrategyFor(const ResourceInfo& r) {
  static const auto* const stateful_set = new KindStrategy(
      R"({"replicas":0,"availableReplicas":0})", DefaultStatefulSet,
      ValidateStatefulSet, StatefulSetUpdate);
  static const auto* const daemon_set = new DaemonSetStrategyImpl();
  static const auto* const replication_controller =
      new KindStrategy(R"({"replicas":0})", DefaultReplicationController,
                       ValidateReplicationController);
  static const auto* const job = new JobStrategyImpl();
  static const auto* const cron_job =
      new KindStrategy("{}", DefaultCronJob, ValidateCronJob);
  static const auto* const hpa = new KindStrategy(
      R"({"desiredReplicas":0})", DefaultHorizontalPodAutoscaler,
      ValidateHorizontalPodAutoscaler);
  static const auto* const pdb = new KindStrategy(
      R"({"disruptionsAllowed":0,"currentHealthy":0,"desiredHealthy":0,)"
      R"("expectedPods":0})",
      nullptr, ValidatePodDisruptionBudget);
  static const auto* const pvc =
      new KindStrategy(R"({"phase":"Pending"})", DefaultPersistentVolumeClaim,
                       ValidatePersistentVolumeClaim);
  static const auto* const pv =
      new KindStrategy(R"({"phase":"Pending"})", DefaultPersistentVolume,
                       ValidatePersistentVolume);
  static const auto* const ingress =
      new KindStrategy(R"({"loadBalancer":{}})", nullptr, ValidateIngress);
  static const auto* const network_policy =
      new KindStrategy(nullptr, DefaultNetworkPolicy, nullptr);
  static const auto* const storage_class =
      new KindStrategy(nullptr, DefaultStorageClass, nullptr);
  static const auto* const csi_driver =
      new KindStrategy(nullptr, DefaultCSIDriver, nullptr);
  static const auto* const volume_attachment =
      new KindStrategy(R"({"attached":false})", nullptr, nullptr);
  static const auto* const priority_class =
      new KindStrategy(nullptr, DefaultPriorityClass, ValidatePriorityClass,
                       PriorityClassUpdate);
  static const auto* const validating_webhooks =
      new KindStrategy(nullptr, DefaultValidatingWebhooks, nullptr);
  static const auto* const mutating_webhooks =
      new KindStrategy(nullptr, DefaultMutatingWebhooks, nullptr);
  static const auto* const admission_policy =
      new KindStrategy("{}", DefaultValidatingAdmissionPolicy, nullptr);
  static const auto* const api_service = new APIServiceStrategyImpl();
  static const auto* const csr =
      new KindStrategy("{}", nullptr, ValidateCertificateSigningRequest);
  static const auto* const quota = new KindStrategy("{}", nullptr, nullptr);

  const std::string& g = r.group();
  const std::string& res = r.resource();
  if (g.empty()) {
    if (res == "replicationcontrollers") return replication_controller;
    if (res == "persistentvolumeclaims") return pvc;
    if (res == "persistentvolumes") return pv;
    if (res == "resourcequotas") return quota;
  } else if (g == "apps") {
    if (res == "statefulsets") return stateful_set;
    if (res == "daemonsets") return daemon_set;
  } else if (g == "batch") {
    if (res == "jobs") return job;
    if (res == "cronjobs") return cron_job;
  } else if (g == "autoscaling") {
    if (res == "horizontalpodautoscalers") return hpa;
  } else if (g == "policy") {
    if (res == "poddisruptionbudgets") return pdb;
  } else if (g == "networking.k8s.io") {
    if (res == "ingresses") return ingress;
    if (res == "networkpolicies") return network_policy;
  } else if (g == "storage.k8s.io") {
    if (res == "storageclasses") return storage_class;
    if (res == "csidrivers") return csi_driver;
    if (res == "volumeattachments") return volume_attachment;
  } else if (g == "scheduling.k8s.io") {
    if (res == "priorityclasses") return priority_class;
  } else if (g == "admissionregistration.k8s.io") {
    if (res == "validatingwebhookconfigurations") return validating_webhooks;
    if (res == "mutatingwebhookconfigurations") return mutating_webhooks;
    if (res == "validatingadmissionpolicies") return admission_policy;
  } else if (g == "apiregistration.k8s.io") {
    if (res == "apiservices") return api_service;
  } else if (g == "certificates.k8s.io") {
    if (res == "certificatesigningrequests") return csr;
  }
  return nullptr;
}

}  // namespace apiserver
}  // namespace kcr
