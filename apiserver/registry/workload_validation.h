// kube-apiserver's semantic validation of the workload, policy,
// autoscaling, storage and scheduling kinds beyond their schema
// (pkg/apis/{apps,batch,core,policy,autoscaling,scheduling}/validation):
// the rules a user typically gets wrong — a selector that does not match
// its template, a missing required field, a cron schedule that does not
// parse, minAvailable and maxUnavailable both set — worded as kube words
// them. Like builtin_validation.h, each function appends field errors that
// the store answers as one 422 Invalid; the object has decoded and been
// defaulted.
//
// Stateless free functions; thread-safe.
#ifndef KCR_APISERVER_REGISTRY_WORKLOAD_VALIDATION_H_
#define KCR_APISERVER_REGISTRY_WORKLOAD_VALIDATION_H_

#include <string>
#include <string_view>
#include <vector>

#include "api/errors/errors.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

// StatefulSet: replicas, a non-empty selector matching the template's
// labels, restartPolicy Always, podManagementPolicy, updateStrategy.
void ValidateStatefulSet(const rapidjson::Value& set,
                         std::vector<api::FieldError>* errors);
// DaemonSet: the selector and template rules, updateStrategy.
void ValidateDaemonSet(const rapidjson::Value& set,
                       std::vector<api::FieldError>* errors);
// ReplicationController: a selector (a map), a template whose labels it
// matches, replicas.
void ValidateReplicationController(const rapidjson::Value& rc,
                                   std::vector<api::FieldError>* errors);
// spec.selector of the apps/v1 kinds never changes.
void ValidateAppsSelectorUnchanged(const rapidjson::Value& live,
                                   const rapidjson::Value& object,
                                   std::vector<api::FieldError>* errors);

// The spec of a Job at `path` ("spec", "spec.jobTemplate.spec"):
// parallelism, completions, backoffLimit, activeDeadlineSeconds, the
// template's restartPolicy (OnFailure or Never) and pod spec, and, when
// `check_selector`, a selector matching the template.
void ValidateJobSpec(const rapidjson::Value* spec, const std::string& path,
                     bool check_selector, std::vector<api::FieldError>* errors);
// CronJob: the name's length, the schedule, concurrencyPolicy, the job
// template.
void ValidateCronJob(const rapidjson::Value& cron_job,
                     std::vector<api::FieldError>* errors);

// A cron schedule as robfig/cron's standard parser reads it (five fields,
// names, ranges, steps, lists, @descriptors, @every): empty when it parses,
// else the parser's message.
std::string CronScheduleError(std::string_view schedule);

// PodDisruptionBudget: not both minAvailable and maxUnavailable, each an
// integer >= 0 or a percentage up to 100%, the selector.
void ValidatePodDisruptionBudget(const rapidjson::Value& pdb,
                                 std::vector<api::FieldError>* errors);
// HorizontalPodAutoscaler (autoscaling/v2): scaleTargetRef's kind and
// name, minReplicas >= 1, maxReplicas >= minReplicas.
void ValidateHorizontalPodAutoscaler(const rapidjson::Value& hpa,
                                     std::vector<api::FieldError>* errors);
// PersistentVolumeClaim: accessModes and resources.requests[storage].
void ValidatePersistentVolumeClaim(const rapidjson::Value& pvc,
                                   std::vector<api::FieldError>* errors);
// PersistentVolume: capacity[storage], accessModes, one volume source.
void ValidatePersistentVolume(const rapidjson::Value& pv,
                              std::vector<api::FieldError>* errors);
// Ingress: every HTTP path has a pathType and a backend.
void ValidateIngress(const rapidjson::Value& ingress,
                     std::vector<api::FieldError>* errors);
// PriorityClass: the reserved "system-" prefix, value at most one billion
// for user classes.
void ValidatePriorityClass(const rapidjson::Value& pc,
                           std::vector<api::FieldError>* errors);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_WORKLOAD_VALIDATION_H_
