#include "apiserver/registry/workload_validation.h"

#include <cctype>
#include <cstdint>
#include <map>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/selector/label_selector.h"
#include "apiserver/internal/cron_schedule.h"
#include "apiserver/internal/object_fields.h"
#include "apiserver/registry/builtin_validation.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace {

using api::FieldError;
using rapidjson::Value;

const Value* Get(const Value* v, const char* key) {
  if (v == nullptr || !v->IsObject()) return nullptr;
  const Value* m = Member(*v, key);
  return m == nullptr || m->IsNull() ? nullptr : m;
}

std::string_view Str(const Value* v) {
  if (v == nullptr || !v->IsString()) return {};
  return std::string_view(v->GetString(), v->GetStringLength());
}

std::string NumberText(const Value& v) {
  if (v.IsInt64()) return Cat(v.GetInt64());
  if (v.IsUint64()) return Cat(v.GetUint64());
  return "0";
}

// Go's %#v of a map[string]string, keys sorted.
std::string GoStringMap(const Value* map) {
  if (map == nullptr || !map->IsObject()) return "map[string]string(nil)";
  std::map<std::string, std::string> sorted;
  for (const auto& m : map->GetObject()) {
    sorted[m.name.GetString()] = std::string(Str(&m.value));
  }
  std::vector<std::string> parts;
  for (const auto& [k, v] : sorted) parts.push_back(Quote(k) + ":" + Quote(v));
  return "map[string]string{" + absl::StrJoin(parts, ", ") + "}";
}

void NonNegative(const Value* spec, const std::string& path, const char* key,
                 std::vector<FieldError>* errors) {
  const Value* v = Get(spec, key);
  if (v != nullptr && v->IsInt64() && v->GetInt64() < 0) {
    errors->push_back(FieldErr(FieldError::Type::kInvalid, Cat(path, ".", key),
                               NumberText(*v),
                               "must be greater than or equal to 0"));
  }
}

void OneOf(const Value* v, const std::string& field,
           std::initializer_list<const char*> allowed,
           std::vector<FieldError>* errors) {
  if (v == nullptr) return;
  std::string_view s = Str(v);
  for (const char* a : allowed) {
    if (s == a) return;
  }
  std::vector<std::string> quoted;
  for (const char* a : allowed) quoted.push_back(Quote(a));
  errors->push_back(
      FieldErr(FieldError::Type::kNotSupported, field, Quote(s),
               "supported values: " + absl::StrJoin(quoted, ", ")));
}

// A metav1.LabelSelector at `field` that must select something and match
// the labels of the template at `template_path` (apps' and batch's
// ValidatePodTemplateSpecFor*). `kind` words the empty-selector message.
void SelectorMatchesTemplate(const Value* selector, const Value* tmpl,
                             const std::string& field,
                             const std::string& template_path, const char* kind,
                             std::vector<FieldError>* errors) {
  if (selector == nullptr) {
    errors->push_back(FieldErr(FieldError::Type::kRequired, field, "", ""));
    return;
  }
  size_t terms = 0;
  for (const char* key : {"matchLabels", "matchExpressions"}) {
    const Value* v = Get(selector, key);
    if (v != nullptr && v->IsObject()) terms += v->MemberCount();
    if (v != nullptr && v->IsArray()) terms += v->Size();
  }
  auto parsed = api::LabelSelector::FromLabelSelector(*selector);
  if (!parsed.ok()) {
    errors->push_back(FieldErr(FieldError::Type::kInvalid, field,
                               GoStringMap(Get(selector, "matchLabels")),
                               std::string(parsed.status().message())));
    return;
  }
  if (terms == 0) {
    errors->push_back(FieldErr(FieldError::Type::kInvalid, field,
                               "v1.LabelSelector{}",
                               Cat("empty selector is invalid for ", kind)));
    return;
  }
  const Value* labels = Get(Get(tmpl, "metadata"), "labels");
  if (!parsed->Matches(labels)) {
    errors->push_back(FieldErr(
        FieldError::Type::kInvalid, template_path + ".metadata.labels",
        GoStringMap(labels), "`selector` does not match template `labels`"));
  }
}

// The template of a controller whose pods always restart.
void AlwaysRestartingTemplate(const Value* spec,
                              std::vector<FieldError>* errors) {
  const Value* pod_spec = Get(Get(spec, "template"), "spec");
  ValidatePodSpec(pod_spec, "spec.template.spec", errors);
  OneOf(Get(pod_spec, "restartPolicy"), "spec.template.spec.restartPolicy",
        {"Always"}, errors);
}

void ValidateIntOrPercent(const Value* v, const std::string& field,
                          std::vector<FieldError>* errors) {
  if (v == nullptr) return;
  if (v->IsInt64()) {
    if (v->GetInt64() < 0) {
      errors->push_back(FieldErr(FieldError::Type::kInvalid, field,
                                 NumberText(*v),
                                 "must be greater than or equal to 0"));
    }
    return;
  }
  std::string_view s = Str(v);
  int64_t pct = 0;
  if (s.empty() || s.back() != '%' ||
      !absl::SimpleAtoi(std::string(s.substr(0, s.size() - 1)), &pct)) {
    errors->push_back(FieldErr(
        FieldError::Type::kInvalid, field, Quote(s),
        "a valid percent string must be a numeric string followed by an "
        "ending '%' (e.g. '1%',  or '93%', regex used for validation is "
        "'[0-9]+%')"));
    return;
  }
  if (pct < 0) {
    errors->push_back(FieldErr(FieldError::Type::kInvalid, field, Quote(s),
                               "must be greater than or equal to 0"));
  } else if (pct > 100) {
    errors->push_back(FieldErr(FieldError::Type::kInvalid, field, Quote(s),
                               "must not be greater than 100%"));
  }
}

void ValidateAccessModes(const Value* spec, const std::string& path,
                         std::vector<FieldError>* errors) {
  const Value* modes = Get(spec, "accessModes");
  if (modes == nullptr || !modes->IsArray() || modes->Empty()) {
    errors->push_back(FieldErr(FieldError::Type::kRequired,
                               path + ".accessModes", "",
                               "at least 1 access mode is required"));
    return;
  }
  for (const auto& m : modes->GetArray()) {
    OneOf(
        &m, path + ".accessModes",
        {"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"},
        errors);
  }
}

}  // namespace

void ValidateStatefulSet(const Value& set, std::vector<FieldError>* errors) {
  const Value* spec = Get(&set, "spec");
  OneOf(Get(spec, "podManagementPolicy"), "spec.podManagementPolicy",
        {"OrderedReady", "Parallel"}, errors);
  OneOf(Get(Get(spec, "updateStrategy"), "type"), "spec.updateStrategy.type",
        {"RollingUpdate", "OnDelete"}, errors);
  NonNegative(spec, "spec", "replicas", errors);
  NonNegative(spec, "spec", "minReadySeconds", errors);
  SelectorMatchesTemplate(Get(spec, "selector"), Get(spec, "template"),
                          "spec.selector", "spec.template", "statefulset",
                          errors);
  AlwaysRestartingTemplate(spec, errors);
}

void ValidateDaemonSet(const Value& set, std::vector<FieldError>* errors) {
  const Value* spec = Get(&set, "spec");
  SelectorMatchesTemplate(Get(spec, "selector"), Get(spec, "template"),
                          "spec.selector", "spec.template", "daemonset",
                          errors);
  AlwaysRestartingTemplate(spec, errors);
  NonNegative(spec, "spec", "minReadySeconds", errors);
  NonNegative(spec, "spec", "revisionHistoryLimit", errors);
  OneOf(Get(Get(spec, "updateStrategy"), "type"), "spec.updateStrategy.type",
        {"RollingUpdate", "OnDelete"}, errors);
}

void ValidateReplicationController(const Value& rc,
                                   std::vector<FieldError>* errors) {
  const Value* spec = Get(&rc, "spec");
  NonNegative(spec, "spec", "replicas", errors);
  NonNegative(spec, "spec", "minReadySeconds", errors);
  const Value* selector = Get(spec, "selector");
  if (selector == nullptr || !selector->IsObject() ||
      selector->MemberCount() == 0) {
    errors->push_back(
        FieldErr(FieldError::Type::kRequired, "spec.selector", "", ""));
  }
  const Value* tmpl = Get(spec, "template");
  if (tmpl == nullptr) {
    errors->push_back(
        FieldErr(FieldError::Type::kRequired, "spec.template", "", ""));
    return;
  }
  if (selector != nullptr && selector->IsObject() &&
      selector->MemberCount() > 0) {
    const Value* labels = Get(Get(tmpl, "metadata"), "labels");
    for (const auto& m : selector->GetObject()) {
      const Value* have =
          labels != nullptr ? Get(labels, m.name.GetString()) : nullptr;
      if (have == nullptr || Str(have) != Str(&m.value)) {
        errors->push_back(
            FieldErr(FieldError::Type::kInvalid,
                     "spec.template.metadata.labels", GoStringMap(labels),
                     "`selector` does not match template `labels`"));
        break;
      }
    }
  }
  AlwaysRestartingTemplate(spec, errors);
}

void ValidateAppsSelectorUnchanged(const Value& live, const Value& object,
                                   std::vector<FieldError>* errors) {
  const Value* before = Get(Get(&live, "spec"), "selector");
  const Value* after = Get(Get(&object, "spec"), "selector");
  const bool same =
      (before == nullptr && after == nullptr) ||
      (before != nullptr && after != nullptr && *before == *after);
  if (!same) {
    errors->push_back(FieldErr(FieldError::Type::kInvalid, "spec.selector",
                               GoStringMap(Get(after, "matchLabels")),
                               "field is immutable"));
  }
}

void ValidateJobSpec(const Value* spec, const std::string& path,
                     bool check_selector, std::vector<FieldError>* errors) {
  for (const char* key : {"parallelism", "completions", "backoffLimit",
                          "ttlSecondsAfterFinished"}) {
    NonNegative(spec, path, key, errors);
  }
  const Value* deadline = Get(spec, "activeDeadlineSeconds");
  if (deadline != nullptr && deadline->IsInt64() && deadline->GetInt64() <= 0) {
    errors->push_back(
        FieldErr(FieldError::Type::kInvalid, path + ".activeDeadlineSeconds",
                 NumberText(*deadline), "must be greater than 0"));
  }
  OneOf(Get(spec, "completionMode"), path + ".completionMode",
        {"NonIndexed", "Indexed"}, errors);
  if (Str(Get(spec, "completionMode")) == "Indexed" &&
      Get(spec, "completions") == nullptr) {
    errors->push_back(FieldErr(FieldError::Type::kRequired,
                               path + ".completions", "",
                               "when completion mode is Indexed"));
  }
  const Value* tmpl = Get(spec, "template");
  if (check_selector) {
    SelectorMatchesTemplate(Get(spec, "selector"), tmpl, path + ".selector",
                            path + ".template", "job", errors);
  }
  const Value* pod_spec = Get(tmpl, "spec");
  ValidatePodSpec(pod_spec, path + ".template.spec", errors);
  const Value* restart = Get(pod_spec, "restartPolicy");
  if (restart != nullptr) {
    std::string_view r = Str(restart);
    if (r != "OnFailure" && r != "Never") {
      errors->push_back(FieldErr(FieldError::Type::kNotSupported,
                                 path + ".template.spec.restartPolicy",
                                 Quote(r),
                                 "supported values: \"OnFailure\", \"Never\""));
    }
  }
}

std::string CronScheduleError(std::string_view schedule) {
  absl::StatusOr<CronSchedule> parsed = CronSchedule::Parse(schedule);
  return parsed.ok() ? "" : std::string(parsed.status().message());
}

void ValidateCronJob(const Value& cron_job, std::vector<FieldError>* errors) {
  std::string_view name = Str(Get(Get(&cron_job, "metadata"), "name"));
  if (name.size() > 52) {
    errors->push_back(FieldErr(FieldError::Type::kInvalid, "metadata.name",
                               Quote(name),
                               "must be no more than 52 characters"));
  }
  const Value* spec = Get(&cron_job, "spec");
  const Value* schedule = Get(spec, "schedule");
  if (Str(schedule).empty()) {
    errors->push_back(
        FieldErr(FieldError::Type::kRequired, "spec.schedule", "", ""));
  } else if (std::string error = CronScheduleError(Str(schedule));
             !error.empty()) {
    errors->push_back(FieldErr(FieldError::Type::kInvalid, "spec.schedule",
                               Quote(Str(schedule)), error));
  } else if (Str(schedule).find("TZ") != std::string_view::npos) {
    errors->push_back(FieldErr(
        FieldError::Type::kInvalid, "spec.schedule", Quote(Str(schedule)),
        "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"));
  }
  // kube's validateTimeZone: an explicit zone of the tz database.
  if (const Value* tz = Get(spec, "timeZone"); tz != nullptr) {
    if (absl::EqualsIgnoreCase(std::string(Str(tz)), "Local")) {
      errors->push_back(FieldErr(FieldError::Type::kInvalid, "spec.timeZone",
                                 Quote(Str(tz)),
                                 "timeZone must be an explicit time zone as "
                                 "defined in https://www.iana.org/time-zones"));
    } else if (absl::StatusOr<absl::TimeZone> zone = LoadCronTimeZone(Str(tz));
               !zone.ok()) {
      errors->push_back(FieldErr(FieldError::Type::kInvalid, "spec.timeZone",
                                 Quote(Str(tz)),
                                 std::string(zone.status().message())));
    }
  }
  OneOf(Get(spec, "concurrencyPolicy"), "spec.concurrencyPolicy",
        {"Allow", "Forbid", "Replace"}, errors);
  NonNegative(spec, "spec", "startingDeadlineSeconds", errors);
  NonNegative(spec, "spec", "successfulJobsHistoryLimit", errors);
  NonNegative(spec, "spec", "failedJobsHistoryLimit", errors);
  ValidateJobSpec(Get(Get(spec, "jobTemplate"), "spec"),
                  "spec.jobTemplate.spec", false, errors);
}

void ValidatePodDisruptionBudget(const Value& pdb,
                                 std::vector<FieldError>* errors) {
  const Value* spec = Get(&pdb, "spec");
  const Value* min_available = Get(spec, "minAvailable");
  const Value* max_unavailable = Get(spec, "maxUnavailable");
  if (min_available != nullptr && max_unavailable != nullptr) {
    errors->push_back(
        FieldErr(FieldError::Type::kInvalid, "spec",
                 "policy.PodDisruptionBudgetSpec{...}",
                 "minAvailable and maxUnavailable cannot be both set"));
  }
  ValidateIntOrPercent(min_available, "spec.minAvailable", errors);
  ValidateIntOrPercent(max_unavailable, "spec.maxUnavailable", errors);
  OneOf(Get(spec, "unhealthyPodEvictionPolicy"),
        "spec.unhealthyPodEvictionPolicy", {"AlwaysAllow", "IfHealthyBudget"},
        errors);
  const Value* selector = Get(spec, "selector");
  if (selector != nullptr) {
    auto parsed = api::LabelSelector::FromLabelSelector(*selector);
    if (!parsed.ok()) {
      errors->push_back(FieldErr(FieldError::Type::kInvalid, "spec.selector",
                                 GoStringMap(Get(selector, "matchLabels")),
                                 std::string(parsed.status().message())));
    }
  }
}

void ValidateHorizontalPodAutoscaler(const Value& hpa,
                                     std::vector<FieldError>* errors) {
  const Value* spec = Get(&hpa, "spec");
  const Value* ref = Get(spec, "scaleTargetRef");
  if (Str(Get(ref, "kind")).empty()) {
    errors->push_back(FieldErr(FieldError::Type::kRequired,
                               "spec.scaleTargetRef.kind", "", ""));
  }
  if (Str(Get(ref, "name")).empty()) {
    errors->push_back(FieldErr(FieldError::Type::kRequired,
                               "spec.scaleTargetRef.name", "", ""));
  }
  const Value* min = Get(spec, "minReplicas");
  const Value* max = Get(spec, "maxReplicas");
  int64_t min_replicas = min != nullptr && min->IsInt64() ? min->GetInt64() : 1;
  if (min != nullptr && min_replicas < 1) {
    errors->push_back(FieldErr(FieldError::Type::kInvalid, "spec.minReplicas",
                               NumberText(*min),
                               "must be greater than or equal to 1"));
  }
  if (max == nullptr || !max->IsInt64() || max->GetInt64() < 1) {
    errors->push_back(FieldErr(FieldError::Type::kInvalid, "spec.maxReplicas",
                               max == nullptr ? "0" : NumberText(*max),
                               "must be greater than or equal to 1"));
  } else if (max->GetInt64() < min_replicas) {
    errors->push_back(FieldErr(FieldError::Type::kInvalid, "spec.maxReplicas",
                               NumberText(*max),
                               "must be greater than or equal to "
                               "`minReplicas`"));
  }
}

void ValidatePersistentVolumeClaim(const Value& pvc,
                                   std::vector<FieldError>* errors) {
  const Value* spec = Get(&pvc, "spec");
  ValidateAccessModes(spec, "spec", errors);
  if (Get(Get(Get(spec, "resources"), "requests"), "storage") == nullptr) {
    errors->push_back(FieldErr(FieldError::Type::kRequired,
                               "spec.resources[storage]", "", ""));
  }
  OneOf(Get(spec, "volumeMode"), "spec.volumeMode", {"Block", "Filesystem"},
        errors);
}

void ValidatePersistentVolume(const Value& pv,
                              std::vector<FieldError>* errors) {
  const Value* spec = Get(&pv, "spec");
  ValidateAccessModes(spec, "spec", errors);
  if (Get(Get(spec, "capacity"), "storage") == nullptr) {
    errors->push_back(
        FieldErr(FieldError::Type::kRequired, "spec.capacity", "", ""));
  }
  static const char* const kSources[] = {"hostPath",
                                         "nfs",
                                         "local",
                                         "csi",
                                         "iscsi",
                                         "fc",
                                         "rbd",
                                         "cephfs",
                                         "cinder",
                                         "flexVolume",
                                         "azureFile",
                                         "azureDisk",
                                         "gcePersistentDisk",
                                         "awsElasticBlockStore",
                                         "glusterfs",
                                         "flocker",
                                         "vsphereVolume",
                                         "quobyte",
                                         "portworxVolume",
                                         "scaleIO",
                                         "storageos",
                                         "photonPersistentDisk"};
  int sources = 0;
  for (const char* s : kSources) sources += Get(spec, s) != nullptr ? 1 : 0;
  if (sources == 0) {
    errors->push_back(FieldErr(FieldError::Type::kRequired, "spec", "",
                               "must specify a volume type"));
  } else if (sources > 1) {
    errors->push_back(FieldErr(FieldError::Type::kForbidden, "spec", "",
                               "may not specify more than 1 volume type"));
  }
  OneOf(Get(spec, "persistentVolumeReclaimPolicy"),
        "spec.persistentVolumeReclaimPolicy", {"Delete", "Recycle", "Retain"},
        errors);
}

void ValidateIngress(const Value& ingress, std::vector<FieldError>* errors) {
  const Value* rules = Get(Get(&ingress, "spec"), "rules");
  if (rules == nullptr || !rules->IsArray()) return;
  for (rapidjson::SizeType i = 0; i < rules->Size(); ++i) {
    const Value* paths = Get(Get(&(*rules)[i], "http"), "paths");
    if (paths == nullptr || !paths->IsArray()) continue;
    for (rapidjson::SizeType j = 0; j < paths->Size(); ++j) {
      const std::string at = Cat("spec.rules[", i, "].http.paths[", j, "]");
      const Value& p = (*paths)[j];
      const Value* type = Get(&p, "pathType");
      if (type == nullptr) {
        errors->push_back(FieldErr(FieldError::Type::kRequired,
                                   at + ".pathType", "",
                                   "pathType must be specified"));
      } else {
        OneOf(type, at + ".pathType",
              {"Exact", "ImplementationSpecific", "Prefix"}, errors);
      }
      const Value* backend = Get(&p, "backend");
      if (Get(backend, "service") == nullptr &&
          Get(backend, "resource") == nullptr) {
        errors->push_back(FieldErr(FieldError::Type::kInvalid, at + ".backend",
                                   "", "must specify a backend"));
      }
    }
  }
}

void ValidatePriorityClass(const Value& pc, std::vector<FieldError>* errors) {
  std::string_view name = Str(Get(Get(&pc, "metadata"), "name"));
  const Value* value = Get(&pc, "value");
  const bool system =
      name == "system-node-critical" || name == "system-cluster-critical";
  if (!system && name.substr(0, 7) == "system-") {
    errors->push_back(
        FieldErr(FieldError::Type::kForbidden, "metadata.name", "",
                 "priority class names with 'system-' prefix are reserved"));
  }
  if (!system && value != nullptr && value->IsInt64() &&
      value->GetInt64() > 1000000000) {
    errors->push_back(FieldErr(
        FieldError::Type::kForbidden, "value", "",
        "maximum allowed value of a user defined priority is 1000000000"));
  }
  OneOf(Get(&pc, "preemptionPolicy"), "preemptionPolicy",
        {"Never", "PreemptLowerPriority"}, errors);
}

}  // namespace apiserver
}  // namespace kcr
