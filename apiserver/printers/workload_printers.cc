#include "apiserver/printers/workload_printers.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "api/types/field.h"
#include "apiserver/internal/duration.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace printers {
namespace {

namespace field = ::kcr::api::field;

constexpr char kContainersDescription[] =
    "Names of each container in the template.";
constexpr char kImagesDescription[] =
    "Images referenced by each container in the template.";

std::string S(std::string_view s) { return std::string(s); }

// A string cell that reads `fallback` when empty.
std::string Or(std::string_view s, const char* fallback) {
  return s.empty() ? std::string(fallback) : std::string(s);
}

const Value* PodSpecOf(const Value* spec) {
  return field::Object(field::Object(spec, "template"), "spec");
}

// An int-or-string member as kube prints it; "N/A" when absent.
std::string IntOrString(const Value* object, std::string_view key) {
  const Value* v = field::Member(object, key);
  if (v == nullptr || v->IsNull()) return "N/A";
  if (v->IsInt64()) return Cat(v->GetInt64());
  if (v->IsString()) return std::string(Str(*v));
  return "N/A";
}

// ---------------------------------------------------------------------------
// core/v1

std::vector<ColumnDefinition> ReplicationControllerColumns() {
  return {NameColumn(),
          Column("Desired", "integer",
                 "Replicas is the number of desired replicas."),
          Column("Current", "integer",
                 "Replicas is the most recently observed number of "
                 "replicas."),
          Column("Ready", "integer",
                 "The number of ready replicas for this replication "
                 "controller."),
          AgeColumn(),
          Column("Containers", "string", kContainersDescription, 1),
          Column("Images", "string", kImagesDescription, 1),
          Column("Selector", "string",
                 "Selector is a label query over pods that should match the "
                 "Replicas count.",
                 1)};
}

Cells ReplicationControllerCells(const Value& rc, absl::Time now) {
  const Value* spec = field::Object(&rc, "spec");
  const Value* status = field::Object(&rc, "status");
  auto [names, images] =
      ContainerCells(field::Array(PodSpecOf(spec), "containers"));
  return {NameOf(rc),
          field::Int64(spec, "replicas").value_or(1),
          Int(status, "replicas"),
          Int(status, "readyReplicas"),
          AgeOf(rc, now),
          names,
          images,
          FormatLabels(field::Object(spec, "selector"))};
}

// Access modes as kubectl abbreviates them: "RWO,ROX".
std::string AccessModes(const Value* modes) {
  if (modes == nullptr || !modes->IsArray()) return "";
  std::vector<std::string> out;
  for (const char* mode :
       {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"}) {
    for (const Value& m : modes->GetArray()) {
      if (!m.IsString() || Str(m) != mode) continue;
      out.push_back(mode == std::string_view("ReadWriteOnce")   ? "RWO"
                    : mode == std::string_view("ReadOnlyMany")  ? "ROX"
                    : mode == std::string_view("ReadWriteMany") ? "RWX"
                                                                : "RWOP");
      break;
    }
  }
  return absl::StrJoin(out, ",");
}

std::string StorageClassOf(const Value& o) {
  std::string_view name =
      field::String(field::Object(&o, "spec"), "storageClassName");
  if (!name.empty()) return S(name);
  return S(field::String(field::Object(Metadata(o), "annotations"),
                         "volume.beta.kubernetes.io/storage-class"));
}

bool Terminating(const Value& o) {
  return !field::String(Metadata(o), "deletionTimestamp").empty();
}

std::vector<ColumnDefinition> PersistentVolumeClaimColumns() {
  return {NameColumn(),
          Column("Status", "string",
                 "Phase represents the current phase of "
                 "PersistentVolumeClaim."),
          Column("Volume", "string",
                 "volumeName is the binding reference to the "
                 "PersistentVolume backing this claim."),
          Column("Capacity", "string",
                 "capacity represents the actual resources of the underlying "
                 "volume."),
          Column("Access Modes", "string",
                 "accessModes contains the actual access modes the volume "
                 "backing the PVC has."),
          Column("StorageClass", "string",
                 "storageClassName is the name of the StorageClass required "
                 "by the claim."),
          Column("VolumeAttributesClass", "string",
                 "volumeAttributesClassName may be used to set the "
                 "VolumeAttributesClass used by this claim."),
          AgeColumn(),
          Column("VolumeMode", "string",
                 "volumeMode defines what type of volume is required by the "
                 "claim.",
                 1)};
}

Cells PersistentVolumeClaimCells(const Value& pvc, absl::Time now) {
  const Value* spec = field::Object(&pvc, "spec");
  const Value* status = field::Object(&pvc, "status");
  std::string phase = S(field::String(status, "phase"));
  if (Terminating(pvc)) phase = "Terminating";
  std::string_view volume = field::String(spec, "volumeName");
  std::string capacity, modes;
  if (!volume.empty()) {
    modes = AccessModes(field::Array(status, "accessModes"));
    capacity = S(field::String(field::Object(status, "capacity"), "storage"));
  }
  return {NameOf(pvc),
          phase,
          S(volume),
          capacity,
          modes,
          StorageClassOf(pvc),
          Or(field::String(spec, "volumeAttributesClassName"), "<unset>"),
          AgeOf(pvc, now),
          Or(field::String(spec, "volumeMode"), "<unset>")};
}

std::vector<ColumnDefinition> PersistentVolumeColumns() {
  return {NameColumn(),
          Column("Capacity", "string",
                 "capacity is the description of the persistent volume's "
                 "resources and capacity."),
          Column("Access Modes", "string",
                 "accessModes contains all ways the volume can be mounted."),
          Column("Reclaim Policy", "string",
                 "persistentVolumeReclaimPolicy defines what happens to a "
                 "persistent volume when released from its claim."),
          Column("Status", "string",
                 "phase indicates if a volume is available, bound to a claim, "
                 "or released by a claim."),
          Column("Claim", "string",
                 "claimRef is part of a bi-directional binding between "
                 "PersistentVolume and PersistentVolumeClaim."),
          Column("StorageClass", "string",
                 "storageClassName is the name of StorageClass to which this "
                 "persistent volume belongs."),
          Column("VolumeAttributesClass", "string",
                 "Name of VolumeAttributesClass to which this persistent "
                 "volume belongs."),
          Column("Reason", "string",
                 "reason is a brief CamelCase string that describes any "
                 "failure and is meant for machine parsing and tidy display "
                 "in the CLI."),
          AgeColumn(),
          Column("VolumeMode", "string",
                 "volumeMode defines if a volume is intended to be used with "
                 "a formatted filesystem or to remain in raw block state.",
                 1)};
}

Cells PersistentVolumeCells(const Value& pv, absl::Time now) {
  const Value* spec = field::Object(&pv, "spec");
  const Value* status = field::Object(&pv, "status");
  const Value* claim = field::Object(spec, "claimRef");
  std::string claim_text;
  if (claim != nullptr) {
    claim_text = Cat(field::String(claim, "namespace"), "/",
                     field::String(claim, "name"));
  }
  std::string phase = S(field::String(status, "phase"));
  if (Terminating(pv)) phase = "Terminating";
  return {NameOf(pv),
          S(field::String(field::Object(spec, "capacity"), "storage")),
          AccessModes(field::Array(spec, "accessModes")),
          S(field::String(spec, "persistentVolumeReclaimPolicy")),
          phase,
          claim_text,
          StorageClassOf(pv),
          Or(field::String(spec, "volumeAttributesClassName"), "<unset>"),
          S(field::String(status, "reason")),
          AgeOf(pv, now),
          Or(field::String(spec, "volumeMode"), "<unset>")};
}

// ---------------------------------------------------------------------------
// apps/v1

std::vector<ColumnDefinition> StatefulSetColumns() {
  return {NameColumn(),
          Column("Ready", "string", "Number of the pod with ready state"),
          AgeColumn(),
          Column("Containers", "string", kContainersDescription, 1),
          Column("Images", "string", kImagesDescription, 1)};
}

Cells StatefulSetCells(const Value& set, absl::Time now) {
  const Value* spec = field::Object(&set, "spec");
  const Value* status = field::Object(&set, "status");
  auto [names, images] =
      ContainerCells(field::Array(PodSpecOf(spec), "containers"));
  return {NameOf(set),
          Cat(Int(status, "readyReplicas"), "/",
              field::Int64(spec, "replicas").value_or(1)),
          AgeOf(set, now), names, images};
}

std::vector<ColumnDefinition> DaemonSetColumns() {
  return {NameColumn(),
          Column("Desired", "integer",
                 "The total number of nodes that should be running the daemon "
                 "pod (including nodes correctly running the daemon pod)."),
          Column("Current", "integer",
                 "The number of nodes that are running at least 1 daemon pod "
                 "and are supposed to run the daemon pod."),
          Column("Ready", "integer",
                 "numberReady is the number of nodes that should be running "
                 "the daemon pod and have one or more of the daemon pod "
                 "running with a Ready Condition."),
          Column("Up-to-date", "integer",
                 "The total number of nodes that are running updated daemon "
                 "pod"),
          Column("Available", "integer",
                 "The number of nodes that should be running the daemon pod "
                 "and have one or more of the daemon pod running and "
                 "available (ready for at least spec.minReadySeconds)"),
          Column("Node Selector", "string",
                 "NodeSelector is a selector which must be true for the pod "
                 "to fit on a node. Selector which must match a node's labels "
                 "for the pod to be scheduled on that node."),
          AgeColumn(),
          Column("Containers", "string", kContainersDescription, 1),
          Column("Images", "string", kImagesDescription, 1),
          Column("Selector", "string",
                 "A label query over pods that are managed by the daemon "
                 "set.",
                 1)};
}

Cells DaemonSetCells(const Value& set, absl::Time now) {
  const Value* spec = field::Object(&set, "spec");
  const Value* status = field::Object(&set, "status");
  const Value* pod_spec = PodSpecOf(spec);
  auto [names, images] = ContainerCells(field::Array(pod_spec, "containers"));
  return {NameOf(set),
          Int(status, "desiredNumberScheduled"),
          Int(status, "currentNumberScheduled"),
          Int(status, "numberReady"),
          Int(status, "updatedNumberScheduled"),
          Int(status, "numberAvailable"),
          FormatLabels(field::Object(pod_spec, "nodeSelector")),
          AgeOf(set, now),
          names,
          images,
          FormatLabelSelector(field::Member(spec, "selector"))};
}

std::vector<ColumnDefinition> ControllerRevisionColumns() {
  return {NameColumn(),
          Column("Controller", "string",
                 "Controller of the object with this revision."),
          Column("Revision", "integer",
                 "Revision indicates the revision of the state represented by "
                 "Data."),
          AgeColumn()};
}

Cells ControllerRevisionCells(const Value& cr, absl::Time now) {
  std::string controller = "<none>";
  const Value* owners = field::Array(Metadata(cr), "ownerReferences");
  if (owners != nullptr) {
    for (const Value& o : owners->GetArray()) {
      if (!field::Bool(&o, "controller")) continue;
      std::string_view api_version = field::String(&o, "apiVersion");
      std::string group(
          api_version.substr(0, api_version.find('/') == std::string_view::npos
                                    ? 0
                                    : api_version.find('/')));
      controller =
          Cat(absl::AsciiStrToLower(S(field::String(&o, "kind"))),
              group.empty() ? "" : ".", group, "/", field::String(&o, "name"));
    }
  }
  return {NameOf(cr), controller, Int(&cr, "revision"), AgeOf(cr, now)};
}

// ---------------------------------------------------------------------------
// batch/v1

bool HasCondition(const Value* status, std::string_view type) {
  return ConditionTrue(status, type);
}

std::vector<ColumnDefinition> JobColumns() {
  return {
      NameColumn(),
      Column("Status", "string", "Status of the job."),
      Column("Completions", "string", "The completion status of the job."),
      Column("Duration", "string", "Time required to complete the job."),
      AgeColumn(),
      Column("Containers", "string", kContainersDescription, 1),
      Column("Images", "string", kImagesDescription, 1),
      Column("Selector", "string",
             "A label query over pods that should match the pod count.", 1)};
}

Cells JobCells(const Value& job, absl::Time now) {
  const Value* spec = field::Object(&job, "spec");
  const Value* status = field::Object(&job, "status");
  std::string state = "Running";
  if (HasCondition(status, "Complete")) {
    state = "Complete";
  } else if (HasCondition(status, "Failed")) {
    state = "Failed";
  } else if (Terminating(job)) {
    state = "Terminating";
  } else if (HasCondition(status, "FailureTarget")) {
    state = "FailureTarget";
  } else if (HasCondition(status, "Suspended")) {
    state = "Suspended";
  } else if (HasCondition(status, "SuccessCriteriaMet")) {
    state = "SuccessCriteriaMet";
  }
  const int64_t succeeded = Int(status, "succeeded");
  std::string completions;
  if (std::optional<int64_t> c = field::Int64(spec, "completions")) {
    completions = Cat(succeeded, "/", *c);
  } else {
    const int64_t parallelism = field::Int64(spec, "parallelism").value_or(0);
    completions = parallelism > 1 ? Cat(succeeded, "/1 of ", parallelism)
                                  : Cat(succeeded, "/1");
  }
  std::string duration;
  std::optional<absl::Time> start = TimeMember(status, "startTime");
  std::optional<absl::Time> end = TimeMember(status, "completionTime");
  if (start.has_value()) {
    duration = HumanDuration(end.value_or(now) - *start);
  }
  auto [names, images] =
      ContainerCells(field::Array(PodSpecOf(spec), "containers"));
  return {
      NameOf(job),     state,
      completions,     duration,
      AgeOf(job, now), names,
      images,          FormatLabelSelector(field::Member(spec, "selector"))};
}

std::vector<ColumnDefinition> CronJobColumns() {
  return {
      NameColumn(),
      Column("Schedule", "string",
             "The schedule in Cron format, see "
             "https://en.wikipedia.org/wiki/Cron."),
      Column("Timezone", "string",
             "The time zone name for the given schedule, see "
             "https://en.wikipedia.org/wiki/List_of_tz_database_time_"
             "zones."),
      Column("Suspend", "boolean",
             "This flag tells the controller to suspend subsequent "
             "executions, it does not apply to already started "
             "executions.  Defaults to false."),
      Column("Active", "integer",
             "A list of pointers to currently "
             "running jobs."),
      Column("Last Schedule", "string",
             "Information when was the last time the job was "
             "successfully scheduled."),
      AgeColumn(),
      Column("Containers", "string", kContainersDescription, 1),
      Column("Images", "string", kImagesDescription, 1),
      Column("Selector", "string",
             "A label query over pods that should match the pod count.", 1)};
}

Cells CronJobCells(const Value& cj, absl::Time now) {
  const Value* spec = field::Object(&cj, "spec");
  const Value* status = field::Object(&cj, "status");
  const Value* job_spec =
      field::Object(field::Object(spec, "jobTemplate"), "spec");
  const Value* suspend = field::Member(spec, "suspend");
  std::string suspended = "<unset>";
  if (suspend != nullptr && suspend->IsBool()) {
    suspended = suspend->GetBool() ? "True" : "False";
  }
  std::optional<absl::Time> last = TimeMember(status, "lastScheduleTime");
  auto [names, images] =
      ContainerCells(field::Array(PodSpecOf(job_spec), "containers"));
  return {NameOf(cj),
          S(field::String(spec, "schedule")),
          Or(field::String(spec, "timeZone"), "<none>"),
          suspended,
          static_cast<int64_t>(ArraySize(status, "active")),
          last.has_value() ? TimestampSince(last, now) : "<none>",
          AgeOf(cj, now),
          names,
          images,
          FormatLabelSelector(field::Member(job_spec, "selector"))};
}

// ---------------------------------------------------------------------------
// autoscaling/v2, policy/v1

std::vector<ColumnDefinition> HorizontalPodAutoscalerColumns() {
  return {NameColumn(),
          Column("Reference", "string",
                 "reference to scaled resource; horizontal pod autoscaler "
                 "will learn the current resource consumption and will set "
                 "the desired number of pods by using its Scale subresource."),
          Column("Targets", "string",
                 "metrics contains the specifications for which to use to "
                 "calculate the desired replica count (the maximum replica "
                 "count across all metrics will be used)."),
          Column("MinPods", "string",
                 "minReplicas is the lower limit for the number of replicas "
                 "to which the autoscaler can scale down."),
          Column("MaxPods", "integer",
                 "maxReplicas is the upper limit for the number of replicas "
                 "to which the autoscaler can scale up."),
          Column("Replicas", "integer",
                 "currentReplicas is current number of replicas of pods "
                 "managed by this autoscaler, as last seen by the "
                 "autoscaler."),
          AgeColumn()};
}

// formatHPAMetrics for the resource metrics (others print <unknown>).
std::string HpaTargets(const Value* spec, const Value* status) {
  const Value* metrics = field::Array(spec, "metrics");
  if (metrics == nullptr || metrics->Empty()) return "<none>";
  const Value* current = field::Array(status, "currentMetrics");
  std::vector<std::string> list;
  for (rapidjson::SizeType i = 0; i < metrics->Size(); ++i) {
    const Value& m = (*metrics)[i];
    const Value* cur =
        current != nullptr && i < current->Size() ? &(*current)[i] : nullptr;
    std::string_view type = field::String(&m, "type");
    const char* key = type == "Resource"            ? "resource"
                      : type == "ContainerResource" ? "containerResource"
                      : type == "Pods"              ? "pods"
                      : type == "Object"            ? "object"
                                                    : "external";
    const Value* target = field::Object(field::Object(&m, key), "target");
    const Value* cur_value = field::Object(field::Object(cur, key), "current");
    if (type == "Resource" || type == "ContainerResource") {
      std::string_view name = field::String(field::Object(&m, key), "name");
      if (std::optional<int64_t> u =
              field::Int64(target, "averageUtilization")) {
        std::string now_text = "<unknown>";
        if (std::optional<int64_t> c =
                field::Int64(cur_value, "averageUtilization")) {
          now_text = Cat(*c, "%");
        }
        list.push_back(Cat(name, ": ", now_text, "/", *u, "%"));
        continue;
      }
      std::string now_text =
          Or(field::String(cur_value, "averageValue"), "<unknown>");
      list.push_back(Cat(name, ": ", now_text, "/",
                         field::String(target, "averageValue")));
      continue;
    }
    std::string target_text = S(field::String(target, "averageValue"));
    if (target_text.empty()) target_text = S(field::String(target, "value"));
    std::string now_text = S(field::String(cur_value, "averageValue"));
    if (now_text.empty()) now_text = S(field::String(cur_value, "value"));
    list.push_back(Cat(now_text.empty() ? "<unknown>" : now_text, "/",
                       target_text.empty() ? "<unknown>" : target_text));
  }
  constexpr size_t kMax = 2;
  if (list.size() > kMax) {
    const size_t more = list.size() - kMax;
    list.resize(kMax);
    return Cat(absl::StrJoin(list, ", "), " + ", more, " more...");
  }
  return absl::StrJoin(list, ", ");
}

Cells HorizontalPodAutoscalerCells(const Value& hpa, absl::Time now) {
  const Value* spec = field::Object(&hpa, "spec");
  const Value* status = field::Object(&hpa, "status");
  const Value* ref = field::Object(spec, "scaleTargetRef");
  std::optional<int64_t> min = field::Int64(spec, "minReplicas");
  return {NameOf(hpa),
          Cat(field::String(ref, "kind"), "/", field::String(ref, "name")),
          HpaTargets(spec, status),
          min.has_value() ? Cat(*min) : std::string("<unset>"),
          Int(spec, "maxReplicas"),
          Int(status, "currentReplicas"),
          AgeOf(hpa, now)};
}

std::vector<ColumnDefinition> PodDisruptionBudgetColumns() {
  return {NameColumn(),
          Column("Min Available", "string",
                 "The minimum number of pods that must be available "
                 "simultaneously.  This can be either an integer or a string "
                 "specifying a percentage, e.g. \"28%\"."),
          Column("Max Unavailable", "string",
                 "The maximum number of pods that may be unavailable "
                 "simultaneously.  This can be either an integer or a string "
                 "specifying a percentage, e.g. \"28%\"."),
          Column("Allowed Disruptions", "integer",
                 "Calculated number of pods that may be disrupted at this "
                 "time."),
          AgeColumn()};
}

Cells PodDisruptionBudgetCells(const Value& pdb, absl::Time now) {
  const Value* spec = field::Object(&pdb, "spec");
  return {NameOf(pdb), IntOrString(spec, "minAvailable"),
          IntOrString(spec, "maxUnavailable"),
          Int(field::Object(&pdb, "status"), "disruptionsAllowed"),
          AgeOf(pdb, now)};
}

// ---------------------------------------------------------------------------
// networking.k8s.io/v1

std::vector<ColumnDefinition> IngressColumns() {
  return {NameColumn(),
          Column("Class", "string", "The name of the IngressClass resource."),
          Column("Hosts", "string",
                 "Hosts that incoming requests are matched "
                 "against before the ingress rule"),
          Column("Address", "string",
                 "Address is a list containing ingress points for the "
                 "load-balancer"),
          Column("Ports", "string", "Ports of TLS configurations that open"),
          AgeColumn()};
}

Cells IngressCells(const Value& ing, absl::Time now) {
  const Value* spec = field::Object(&ing, "spec");
  std::vector<std::string> hosts;
  if (const Value* rules = field::Array(spec, "rules")) {
    for (const Value& r : rules->GetArray()) {
      hosts.push_back(Or(field::String(&r, "host"), "*"));
    }
  }
  std::string hosts_text = "*";
  if (!hosts.empty()) {
    constexpr size_t kMax = 3;
    const size_t more = hosts.size() > kMax ? hosts.size() - kMax : 0;
    if (more > 0) hosts.resize(kMax);
    hosts_text = absl::StrJoin(hosts, ",");
    if (more > 0) hosts_text += Cat(" + ", more, " more...");
  }
  std::vector<std::string> addresses;
  if (const Value* lbs = field::Array(
          field::Object(field::Object(&ing, "status"), "loadBalancer"),
          "ingress")) {
    for (const Value& lb : lbs->GetArray()) {
      std::string_view ip = field::String(&lb, "ip");
      addresses.push_back(ip.empty() ? S(field::String(&lb, "hostname"))
                                     : S(ip));
    }
  }
  return {NameOf(ing),
          Or(field::String(spec, "ingressClassName"), "<none>"),
          hosts_text,
          absl::StrJoin(addresses, ","),
          ArraySize(spec, "tls") > 0 ? "80, 443" : "80",
          AgeOf(ing, now)};
}

std::vector<ColumnDefinition> IngressClassColumns() {
  return {NameColumn(),
          Column("Controller", "string",
                 "Controller that is responsible for handling this class"),
          Column("Parameters", "string",
                 "A reference to a resource with additional parameters"),
          AgeColumn()};
}

Cells IngressClassCells(const Value& ic, absl::Time now) {
  const Value* spec = field::Object(&ic, "spec");
  const Value* params = field::Object(spec, "parameters");
  std::string params_text = "<none>";
  if (params != nullptr) {
    std::string_view group = field::String(params, "apiGroup");
    params_text = Cat(field::String(params, "kind"), group.empty() ? "" : ".",
                      group, "/", field::String(params, "name"));
  }
  return {NameOf(ic), S(field::String(spec, "controller")), params_text,
          AgeOf(ic, now)};
}

std::vector<ColumnDefinition> NetworkPolicyColumns() {
  return {NameColumn(),
          Column("Pod-Selector", "string",
                 "podSelector selects the pods to which this NetworkPolicy "
                 "object applies."),
          AgeColumn()};
}

Cells NetworkPolicyCells(const Value& np, absl::Time now) {
  const Value* selector =
      field::Member(field::Object(&np, "spec"), "podSelector");
  return {NameOf(np), FormatLabelSelector(selector), AgeOf(np, now)};
}

// ---------------------------------------------------------------------------
// storage.k8s.io/v1, scheduling.k8s.io/v1

std::vector<ColumnDefinition> StorageClassColumns() {
  return {NameColumn(),
          Column("Provisioner", "string",
                 "provisioner indicates the type of the provisioner."),
          Column("ReclaimPolicy", "string",
                 "reclaimPolicy controls the reclaimPolicy for dynamically "
                 "provisioned PersistentVolumes of this storage class."),
          Column("VolumeBindingMode", "string",
                 "volumeBindingMode indicates how PersistentVolumeClaims "
                 "should be provisioned and bound."),
          Column("AllowVolumeExpansion", "string",
                 "allowVolumeExpansion shows whether the storage class allow "
                 "volume expand."),
          AgeColumn()};
}

Cells StorageClassCells(const Value& sc, absl::Time now) {
  std::string name = NameOf(sc);
  const Value* annotations = field::Object(Metadata(sc), "annotations");
  if (field::String(annotations,
                    "storageclass.kubernetes.io/is-default-class") == "true" ||
      field::String(annotations,
                    "storageclass.beta.kubernetes.io/is-default-class") ==
          "true") {
    name += " (default)";
  }
  return {name,
          S(field::String(&sc, "provisioner")),
          Or(field::String(&sc, "reclaimPolicy"), "Delete"),
          Or(field::String(&sc, "volumeBindingMode"), "Immediate"),
          field::Bool(&sc, "allowVolumeExpansion") ? "true" : "false",
          AgeOf(sc, now)};
}

std::vector<ColumnDefinition> VolumeAttachmentColumns() {
  return {NameColumn(),
          Column("Attacher", "string",
                 "Attacher indicates the name of the volume driver that MUST "
                 "handle this request."),
          Column("PV", "string", "Name of the persistent volume to attach."),
          Column("Node", "string",
                 "The node that the volume should be attached to."),
          Column("Attached", "boolean",
                 "Indicates the volume is successfully attached."),
          Column("Attach Error", "string",
                 "The last error encountered during attach operation, if "
                 "any.",
                 1),
          Column("Detach Error", "string",
                 "The last error encountered during detach operation, if "
                 "any.",
                 1),
          AgeColumn()};
}

Cells VolumeAttachmentCells(const Value& va, absl::Time now) {
  const Value* spec = field::Object(&va, "spec");
  const Value* status = field::Object(&va, "status");
  return {
      NameOf(va),
      S(field::String(spec, "attacher")),
      S(field::String(field::Object(spec, "source"), "persistentVolumeName")),
      S(field::String(spec, "nodeName")),
      field::Bool(status, "attached"),
      Or(field::String(field::Object(status, "attachError"), "message"),
         "<none>"),
      Or(field::String(field::Object(status, "detachError"), "message"),
         "<none>"),
      AgeOf(va, now)};
}

std::vector<ColumnDefinition> PriorityClassColumns() {
  return {NameColumn(),
          Column("Value", "integer",
                 "value represents the integer value of this priority "
                 "class."),
          Column("Global-Default", "boolean",
                 "globalDefault specifies whether this PriorityClass should "
                 "be considered as the default priority."),
          AgeColumn(),
          Column("PreemptionPolicy", "string",
                 "preemptionPolicy is the Policy for preempting pods with "
                 "lower priority.")};
}

Cells PriorityClassCells(const Value& pc, absl::Time now) {
  return {NameOf(pc), Int(&pc, "value"), field::Bool(&pc, "globalDefault"),
          AgeOf(pc, now),
          Or(field::String(&pc, "preemptionPolicy"), "PreemptLowerPriority")};
}

// ---------------------------------------------------------------------------
// node.k8s.io/v1, storage.k8s.io/v1 CSINodes, networking.k8s.io/v1
// ServiceCIDRs and IPAddresses, flowcontrol.apiserver.k8s.io/v1

std::vector<ColumnDefinition> RuntimeClassColumns() {
  return {NameColumn(),
          Column("Handler", "string",
                 "Handler specifies the underlying runtime and configuration "
                 "that the CRI implementation will use to handle pods of this "
                 "class."),
          AgeColumn()};
}

Cells RuntimeClassCells(const Value& rc, absl::Time now) {
  return {NameOf(rc), S(field::String(&rc, "handler")), AgeOf(rc, now)};
}

std::vector<ColumnDefinition> CSINodeColumns() {
  return {NameColumn(),
          Column("Drivers", "integer",
                 "Drivers indicates the number of CSI drivers registered on "
                 "the node"),
          AgeColumn()};
}

Cells CSINodeCells(const Value& n, absl::Time now) {
  const Value* drivers = field::Array(field::Object(&n, "spec"), "drivers");
  return {NameOf(n),
          static_cast<int64_t>(drivers == nullptr ? 0 : drivers->Size()),
          AgeOf(n, now)};
}

std::vector<ColumnDefinition> ServiceCIDRColumns() {
  return {NameColumn(),
          Column("CIDRs", "string",
                 "list of IP blocks in CIDR notation (e.g. \"192.168.0.0/24\" "
                 "or \"2001:db8::/64\")"),
          AgeColumn()};
}

Cells ServiceCIDRCells(const Value& c, absl::Time now) {
  std::vector<std::string> cidrs;
  if (const Value* list = field::Array(field::Object(&c, "spec"), "cidrs")) {
    for (const Value& v : list->GetArray()) cidrs.push_back(S(Str(v)));
  }
  return {NameOf(c), absl::StrJoin(cidrs, ","), AgeOf(c, now)};
}

std::vector<ColumnDefinition> IPAddressColumns() {
  return {NameColumn(),
          Column("ParentRef", "string",
                 "ParentRef references the resource (usually a Service) that "
                 "this IP address is attached to.")};
}

Cells IPAddressCells(const Value& ip, absl::Time) {
  const Value* ref = field::Object(field::Object(&ip, "spec"), "parentRef");
  std::string parent;
  if (ref != nullptr) {
    parent = S(field::String(ref, "resource"));
    if (!field::String(ref, "group").empty()) {
      parent = Cat(parent, ".", field::String(ref, "group"));
    }
    if (!field::String(ref, "namespace").empty()) {
      parent = Cat(parent, "/", field::String(ref, "namespace"));
    }
    parent = Cat(parent, "/", field::String(ref, "name"));
  }
  return {NameOf(ip), parent};
}

std::vector<ColumnDefinition> FlowSchemaColumns() {
  return {NameColumn(),
          Column("PriorityLevel", "string",
                 "The name of the priority level this flow schema refers to."),
          Column("MatchingPrecedence", "string",
                 "The matching precedence of the flow schema."),
          Column("DistinguisherMethod", "string",
                 "The method flows are distinguished by."),
          AgeColumn(),
          Column("MissingPL", "string",
                 "Whether the priority level this flow schema refers to is "
                 "missing.")};
}

Cells FlowSchemaCells(const Value& fs, absl::Time now) {
  const Value* spec = field::Object(&fs, "spec");
  std::string distinguisher = "<none>";
  if (const Value* d = field::Object(spec, "distinguisherMethod")) {
    distinguisher = S(field::String(d, "type"));
  }
  std::string missing = "?";
  if (const Value* conditions =
          field::Array(field::Object(&fs, "status"), "conditions")) {
    for (const Value& c : conditions->GetArray()) {
      if (field::String(&c, "type") == "Dangling") {
        missing = S(field::String(&c, "status"));
      }
    }
  }
  return {NameOf(fs),
          S(field::String(field::Object(spec, "priorityLevelConfiguration"),
                          "name")),
          Int(spec, "matchingPrecedence"),
          distinguisher,
          AgeOf(fs, now),
          missing};
}

std::vector<ColumnDefinition> PriorityLevelConfigurationColumns() {
  return {
      NameColumn(),
      Column("Type", "string",
             "The type of the priority level: Exempt or Limited."),
      Column("NominalConcurrencyShares", "string",
             "The nominal concurrency shares of this priority level."),
      Column("Queues", "string", "The number of queues."),
      Column("HandSize", "string", "The hand size used for shuffle sharding."),
      Column("QueueLengthLimit", "string",
             "The maximum number of requests in one queue."),
      AgeColumn()};
}

Cells PriorityLevelConfigurationCells(const Value& pl, absl::Time now) {
  const Value* spec = field::Object(&pl, "spec");
  Cell shares = std::string("<none>"), queues = std::string("<none>"),
       hand = std::string("<none>"), limit = std::string("<none>");
  if (const Value* limited = field::Object(spec, "limited")) {
    shares = Int(limited, "nominalConcurrencyShares");
    if (const Value* q =
            field::Object(field::Object(limited, "limitResponse"), "queuing")) {
      queues = Int(q, "queues");
      hand = Int(q, "handSize");
      limit = Int(q, "queueLengthLimit");
    }
  }
  return {NameOf(pl),    S(field::String(spec, "type")),
          shares,        queues,
          hand,          limit,
          AgeOf(pl, now)};
}

// ---------------------------------------------------------------------------
// admissionregistration.k8s.io/v1, apiregistration.k8s.io/v1,
// certificates.k8s.io/v1

std::vector<ColumnDefinition> WebhookConfigurationColumns() {
  return {NameColumn(),
          Column("Webhooks", "integer",
                 "Webhooks is a list of webhooks and the affected resources "
                 "and operations."),
          AgeColumn()};
}

Cells WebhookConfigurationCells(const Value& w, absl::Time now) {
  return {NameOf(w), static_cast<int64_t>(ArraySize(&w, "webhooks")),
          AgeOf(w, now)};
}

std::vector<ColumnDefinition> APIServiceColumns() {
  return {NameColumn(),
          Column("Service", "string",
                 "The reference to the service that hosts this API "
                 "endpoint."),
          Column("Available", "string", "Whether this service is available."),
          AgeColumn()};
}

Cells APIServiceCells(const Value& a, absl::Time now) {
  const Value* service = field::Object(field::Object(&a, "spec"), "service");
  std::string service_text = "Local";
  if (service != nullptr) {
    service_text = Cat(field::String(service, "namespace"), "/",
                       field::String(service, "name"));
  }
  std::string available = "Unknown";
  if (const Value* conditions =
          field::Array(field::Object(&a, "status"), "conditions")) {
    for (const Value& c : conditions->GetArray()) {
      if (field::String(&c, "type") != "Available") continue;
      std::string_view status = field::String(&c, "status");
      available = status == "True"
                      ? "True"
                      : Cat(status, " (", field::String(&c, "reason"), ")");
    }
  }
  return {NameOf(a), service_text, available, AgeOf(a, now)};
}

std::vector<ColumnDefinition> CertificateSigningRequestColumns() {
  return {NameColumn(),
          AgeColumn(),
          Column("SignerName", "string",
                 "Name of the signer that should issue this certificate"),
          Column("Requestor", "string",
                 "Name of the user that created this request"),
          Column("RequestedDuration", "string",
                 "The requested duration of the issued certificate"),
          Column("Condition", "string", "The current state of the request")};
}

Cells CertificateSigningRequestCells(const Value& csr, absl::Time now) {
  const Value* spec = field::Object(&csr, "spec");
  std::vector<std::string> conditions;
  if (const Value* list =
          field::Array(field::Object(&csr, "status"), "conditions")) {
    for (const Value& c : list->GetArray()) {
      conditions.push_back(S(field::String(&c, "type")));
    }
  }
  if (!field::String(field::Object(&csr, "status"), "certificate").empty()) {
    conditions.push_back("Issued");
  }
  std::string duration = "<none>";
  if (std::optional<int64_t> s = field::Int64(spec, "expirationSeconds")) {
    duration = HumanDuration(absl::Seconds(*s));
  }
  return {NameOf(csr),
          AgeOf(csr, now),
          S(field::String(spec, "signerName")),
          S(field::String(spec, "username")),
          duration,
          conditions.empty() ? "Pending" : absl::StrJoin(conditions, ",")};
}

const KindPrinter kPrinters[] = {
    {"", "replicationcontrollers", "v1", "ReplicationController",
     ReplicationControllerColumns, ReplicationControllerCells},
    {"", "persistentvolumeclaims", "v1", "PersistentVolumeClaim",
     PersistentVolumeClaimColumns, PersistentVolumeClaimCells},
    {"", "persistentvolumes", "v1", "PersistentVolume", PersistentVolumeColumns,
     PersistentVolumeCells},
    {"apps", "statefulsets", "apps/v1", "StatefulSet", StatefulSetColumns,
     StatefulSetCells},
    {"apps", "daemonsets", "apps/v1", "DaemonSet", DaemonSetColumns,
     DaemonSetCells},
    {"apps", "controllerrevisions", "apps/v1", "ControllerRevision",
     ControllerRevisionColumns, ControllerRevisionCells},
    {"batch", "jobs", "batch/v1", "Job", JobColumns, JobCells},
    {"batch", "cronjobs", "batch/v1", "CronJob", CronJobColumns, CronJobCells},
    {"autoscaling", "horizontalpodautoscalers", "", "HorizontalPodAutoscaler",
     HorizontalPodAutoscalerColumns, HorizontalPodAutoscalerCells},
    {"policy", "poddisruptionbudgets", "policy/v1", "PodDisruptionBudget",
     PodDisruptionBudgetColumns, PodDisruptionBudgetCells},
    {"networking.k8s.io", "ingresses", "networking.k8s.io/v1", "Ingress",
     IngressColumns, IngressCells},
    {"networking.k8s.io", "ingressclasses", "networking.k8s.io/v1",
     "IngressClass", IngressClassColumns, IngressClassCells},
    {"networking.k8s.io", "networkpolicies", "networking.k8s.io/v1",
     "NetworkPolicy", NetworkPolicyColumns, NetworkPolicyCells},
    {"storage.k8s.io", "storageclasses", "storage.k8s.io/v1", "StorageClass",
     StorageClassColumns, StorageClassCells},
    {"storage.k8s.io", "volumeattachments", "storage.k8s.io/v1",
     "VolumeAttachment", VolumeAttachmentColumns, VolumeAttachmentCells},
    {"scheduling.k8s.io", "priorityclasses", "scheduling.k8s.io/v1",
     "PriorityClass", PriorityClassColumns, PriorityClassCells},
    {"node.k8s.io", "runtimeclasses", "node.k8s.io/v1", "RuntimeClass",
     RuntimeClassColumns, RuntimeClassCells},
    {"storage.k8s.io", "csinodes", "storage.k8s.io/v1", "CSINode",
     CSINodeColumns, CSINodeCells},
    {"networking.k8s.io", "servicecidrs", "networking.k8s.io/v1", "ServiceCIDR",
     ServiceCIDRColumns, ServiceCIDRCells},
    {"networking.k8s.io", "ipaddresses", "networking.k8s.io/v1", "IPAddress",
     IPAddressColumns, IPAddressCells},
    {"flowcontrol.apiserver.k8s.io", "flowschemas",
     "flowcontrol.apiserver.k8s.io/v1", "FlowSchema", FlowSchemaColumns,
     FlowSchemaCells},
    {"flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations",
     "flowcontrol.apiserver.k8s.io/v1", "PriorityLevelConfiguration",
     PriorityLevelConfigurationColumns, PriorityLevelConfigurationCells},
    {"admissionregistration.k8s.io", "validatingwebhookconfigurations",
     "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration",
     WebhookConfigurationColumns, WebhookConfigurationCells},
    {"admissionregistration.k8s.io", "mutatingwebhookconfigurations",
     "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration",
     WebhookConfigurationColumns, WebhookConfigurationCells},
    {"apiregistration.k8s.io", "apiservices", "apiregistration.k8s.io/v1",
     "APIService", APIServiceColumns, APIServiceCells},
    {"certificates.k8s.io", "certificatesigningrequests",
     "certificates.k8s.io/v1", "CertificateSigningRequest",
     CertificateSigningRequestColumns, CertificateSigningRequestCells},
};

}  // namespace

const KindPrinter* FindKindPrinter(std::string_view group,
                                   std::string_view resource) {
  for (const KindPrinter& p : kPrinters) {
    if (group == p.group && resource == p.resource) return &p;
  }
  return nullptr;
}

}  // namespace printers
}  // namespace apiserver
}  // namespace kcr
