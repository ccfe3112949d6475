#include "apiserver/printers/core_printers.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "api/types/field.h"
#include "base/string_view.h"

namespace kcr {
namespace apiserver {
namespace printers {

namespace field = ::kcr::api::field;

namespace {

std::string ServiceExternalIp(const Value* spec, const Value* status,
                              std::string_view type) {
  std::vector<std::string> external;
  if (const Value* ips = field::Array(spec, "externalIPs")) {
    for (const auto& ip : ips->GetArray()) {
      if (ip.IsString()) external.emplace_back(Str(ip));
    }
  }
  if (type == "ClusterIP" || type == "NodePort") {
    return external.empty() ? "<none>" : absl::StrJoin(external, ",");
  }
  if (type == "LoadBalancer") {
    // loadBalancerStatusStringer, wide: a sorted set of ingress IPs or
    // hostnames.
    std::vector<std::string> lb;
    const Value* ingress =
        field::Array(field::Object(status, "loadBalancer"), "ingress");
    if (ingress != nullptr) {
      for (const auto& i : ingress->GetArray()) {
        std::string_view ip = field::String(&i, "ip");
        std::string_view host = field::String(&i, "hostname");
        if (!ip.empty()) {
          lb.emplace_back(ip);
        } else if (!host.empty()) {
          lb.emplace_back(host);
        }
      }
    }
    std::sort(lb.begin(), lb.end());
    lb.erase(std::unique(lb.begin(), lb.end()), lb.end());
    if (!external.empty()) {
      lb.insert(lb.end(), external.begin(), external.end());
      return absl::StrJoin(lb, ",");
    }
    return lb.empty() ? "<pending>" : absl::StrJoin(lb, ",");
  }
  if (type == "ExternalName") {
    return std::string(field::String(spec, "externalName"));
  }
  return "<unknown>";
}

// The first address of `type` in status.addresses, or "<none>".
std::string NodeAddress(const Value* status, std::string_view type) {
  if (const Value* addresses = field::Array(status, "addresses")) {
    for (const auto& a : addresses->GetArray()) {
      if (field::String(&a, "type") == type)
        return std::string(field::String(&a, "address"));
    }
  }
  return "<none>";
}

}  // namespace

std::vector<ColumnDefinition> PodColumns() {
  return {NameColumn(),
          Column("Ready", "string",
                 "The aggregate readiness state of this pod for accepting "
                 "traffic."),
          Column("Status", "string",
                 "The aggregate status of the containers in this pod."),
          Column("Restarts", "string",
                 "The number of times the containers in this pod have been "
                 "restarted and when the last container in this pod has "
                 "restarted."),
          AgeColumn(),
          Column("IP", "string",
                 "podIP address allocated to the pod. Routable at least "
                 "within the cluster. Empty if not yet allocated.",
                 1),
          Column("Node", "string",
                 "NodeName is a request to schedule this pod onto a specific "
                 "node. If it is non-empty, the scheduler simply schedules "
                 "this pod onto that node, assuming that it fits resource "
                 "requirements.",
                 1),
          Column("Nominated Node", "string",
                 "nominatedNodeName is set only when this pod preempts other "
                 "pods on the node, but it cannot be scheduled right away as "
                 "preemption victims receive their graceful termination "
                 "periods. This field does not guarantee that the pod will be "
                 "scheduled on this node. Scheduler may decide to place the "
                 "pod elsewhere if other nodes become available sooner. "
                 "Scheduler may also decide to give the resources on this "
                 "node to a higher priority pod that is created after "
                 "preemption. As a result, this field may be different than "
                 "PodSpec.nodeName when the pod is scheduled.",
                 1),
          Column("Readiness Gates", "string",
                 "If specified, all readiness gates will be evaluated for pod "
                 "readiness. A pod is ready when all its containers are ready "
                 "AND all conditions specified in the readiness gates have "
                 "status equal to \"True\" More info: "
                 "https://git.k8s.io/enhancements/keps/sig-network/"
                 "580-pod-readiness-gates",
                 1)};
}

Cells PodCells(const Value& pod, absl::Time now,
               std::vector<RowCondition>* row_conditions) {
  const Value* spec = field::Object(&pod, "spec");
  const Value* status = field::Object(&pod, "status");
  const Value* metadata = Metadata(pod);

  int64_t restarts = 0;
  int64_t restartable_init_restarts = 0;
  int64_t total_containers =
      static_cast<int64_t>(ArraySize(spec, "containers"));
  int64_t ready_containers = 0;
  std::optional<absl::Time> last_restart;
  std::optional<absl::Time> last_restartable_init_restart;
  const auto later = [](std::optional<absl::Time>* current,
                        std::optional<absl::Time> t) {
    if (t.has_value() && (!current->has_value() || **current < *t)) {
      *current = t;
    }
  };

  const std::string phase(field::String(status, "phase"));
  std::string reason = phase;
  if (!field::String(status, "reason").empty()) {
    reason = std::string(field::String(status, "reason"));
  }
  if (const Value* conditions = field::Array(status, "conditions")) {
    for (const auto& c : conditions->GetArray()) {
      if (field::String(&c, "type") == "PodScheduled" &&
          field::String(&c, "reason") == "SchedulingGated") {
        reason = "SchedulingGated";
      }
    }
  }
  if (phase == "Succeeded") {
    row_conditions->push_back({"Completed", "True", "Succeeded",
                               "The pod has completed successfully."});
  } else if (phase == "Failed") {
    row_conditions->push_back(
        {"Completed", "True", "Failed", "The pod failed."});
  }

  // Init containers with restartPolicy Always are sidecars.
  std::map<std::string, bool> restartable_init;
  const Value* init_specs = field::Array(spec, "initContainers");
  const size_t init_count = init_specs == nullptr ? 0 : init_specs->Size();
  if (init_specs != nullptr) {
    for (const auto& c : init_specs->GetArray()) {
      const bool restartable = field::String(&c, "restartPolicy") == "Always";
      restartable_init[std::string(field::String(&c, "name"))] = restartable;
      if (restartable) ++total_containers;
    }
  }
  const auto is_restartable = [&](std::string_view name) {
    auto it = restartable_init.find(std::string(name));
    return it != restartable_init.end() && it->second;
  };
  const auto finished_at = [](const Value& container_status) {
    const Value* last = field::Object(&container_status, "lastState");
    return TimeMember(field::Object(last, "terminated"), "finishedAt");
  };

  bool initializing = false;
  if (const Value* init = field::Array(status, "initContainerStatuses")) {
    for (rapidjson::SizeType i = 0; i < init->Size(); ++i) {
      const Value& c = (*init)[i];
      const std::string_view name = field::String(&c, "name");
      restarts += Int(&c, "restartCount");
      later(&last_restart, finished_at(c));
      if (is_restartable(name)) {
        restartable_init_restarts += Int(&c, "restartCount");
        later(&last_restartable_init_restart, finished_at(c));
      }
      const Value* state = field::Object(&c, "state");
      const Value* terminated = field::Object(state, "terminated");
      const Value* waiting = field::Object(state, "waiting");
      if (terminated != nullptr && Int(terminated, "exitCode") == 0) continue;
      if (is_restartable(name) && field::Bool(&c, "started")) {
        if (field::Bool(&c, "ready")) ++ready_containers;
        continue;
      }
      if (terminated != nullptr) {
        const std::string_view r = field::String(terminated, "reason");
        if (r.empty()) {
          const int64_t signal = Int(terminated, "signal");
          reason = signal != 0 ? absl::StrCat("Init:Signal:", signal)
                               : absl::StrCat("Init:ExitCode:",
                                              Int(terminated, "exitCode"));
        } else {
          reason = absl::StrCat("Init:", ToAbsl(r));
        }
      } else if (waiting != nullptr &&
                 !field::String(waiting, "reason").empty() &&
                 field::String(waiting, "reason") != "PodInitializing") {
        reason =
            absl::StrCat("Init:", ToAbsl(field::String(waiting, "reason")));
      } else {
        reason = absl::StrCat("Init:", i, "/", init_count);
      }
      initializing = true;
      break;
    }
  }

  if (!initializing || ConditionTrue(status, "Initialized")) {
    restarts = restartable_init_restarts;
    last_restart = last_restartable_init_restart;
    bool has_running = false;
    if (const Value* statuses = field::Array(status, "containerStatuses")) {
      for (rapidjson::SizeType k = statuses->Size(); k > 0; --k) {
        const Value& c = (*statuses)[k - 1];
        restarts += Int(&c, "restartCount");
        later(&last_restart, finished_at(c));
        const Value* state = field::Object(&c, "state");
        const Value* waiting = field::Object(state, "waiting");
        const Value* terminated = field::Object(state, "terminated");
        const Value* running = field::Object(state, "running");
        if (waiting != nullptr && !field::String(waiting, "reason").empty()) {
          reason = std::string(field::String(waiting, "reason"));
        } else if (terminated != nullptr &&
                   !field::String(terminated, "reason").empty()) {
          reason = std::string(field::String(terminated, "reason"));
        } else if (terminated != nullptr) {
          const int64_t signal = Int(terminated, "signal");
          reason = signal != 0
                       ? absl::StrCat("Signal:", signal)
                       : absl::StrCat("ExitCode:", Int(terminated, "exitCode"));
        } else if (field::Bool(&c, "ready") && running != nullptr) {
          has_running = true;
          ++ready_containers;
        }
      }
    }
    if (reason == "Completed" && has_running) {
      reason = ConditionTrue(status, "Ready") ? "Running" : "NotReady";
    }
  }

  if (!field::String(metadata, "deletionTimestamp").empty()) {
    if (field::String(status, "reason") == "NodeLost") {
      reason = "Unknown";
    } else if (phase != "Succeeded" && phase != "Failed") {
      reason = "Terminating";
    }
  }

  std::string restarts_cell = absl::StrCat(restarts);
  if (restarts != 0 && last_restart.has_value()) {
    restarts_cell = absl::StrCat(restarts, " (",
                                 TimestampSince(last_restart, now), " ago)");
  }

  Cells cells = {NameOf(pod),
                 absl::StrCat(ready_containers, "/", total_containers), reason,
                 restarts_cell, AgeOf(pod, now)};

  // v1 -> internal conversion: status.podIP wins over podIPs[0].
  std::string pod_ip(field::String(status, "podIP"));
  if (pod_ip.empty()) {
    const Value* ips = field::Array(status, "podIPs");
    if (ips != nullptr && ips->Size() > 0) {
      pod_ip = std::string(field::String(&(*ips)[0], "ip"));
    }
  }
  std::string node(field::String(spec, "nodeName"));
  std::string nominated(field::String(status, "nominatedNodeName"));
  std::string gates = "<none>";
  if (const Value* readiness = field::Array(spec, "readinessGates");
      readiness != nullptr && readiness->Size() > 0) {
    int true_conditions = 0;
    const Value* conditions = field::Array(status, "conditions");
    for (const auto& gate : readiness->GetArray()) {
      const std::string_view type = field::String(&gate, "conditionType");
      if (conditions == nullptr) break;
      for (const auto& c : conditions->GetArray()) {
        if (field::String(&c, "type") == type) {
          if (field::String(&c, "status") == "True") ++true_conditions;
          break;
        }
      }
    }
    gates = absl::StrCat(true_conditions, "/", readiness->Size());
  }
  cells.push_back(pod_ip.empty() ? "<none>" : pod_ip);
  cells.push_back(node.empty() ? "<none>" : node);
  cells.push_back(nominated.empty() ? "<none>" : nominated);
  cells.push_back(gates);
  return cells;
}

std::vector<ColumnDefinition> NamespaceColumns() {
  return {NameColumn(),
          Column("Status", "string", "The status of the namespace"),
          AgeColumn()};
}

Cells NamespaceCells(const Value& object, absl::Time now) {
  return {NameOf(object),
          std::string(field::String(field::Object(&object, "status"), "phase")),
          AgeOf(object, now)};
}

std::vector<ColumnDefinition> ConfigMapColumns() {
  return {NameColumn(),
          Column("Data", "string", "Data contains the configuration data."),
          AgeColumn()};
}

Cells ConfigMapCells(const Value& object, absl::Time now) {
  return {NameOf(object),
          static_cast<int64_t>(MemberCount(&object, "data") +
                               MemberCount(&object, "binaryData")),
          AgeOf(object, now)};
}

std::vector<ColumnDefinition> SecretColumns() {
  return {NameColumn(),
          Column("Type", "string",
                 "Used to facilitate programmatic handling of secret data."),
          Column("Data", "string", "Data contains the secret data."),
          AgeColumn()};
}

Cells SecretCells(const Value& object, absl::Time now) {
  return {NameOf(object), std::string(field::String(&object, "type")),
          static_cast<int64_t>(MemberCount(&object, "data")),
          AgeOf(object, now)};
}

std::vector<ColumnDefinition> ServiceColumns() {
  return {
      NameColumn(),
      Column("Type", "string", "type determines how the Service is exposed."),
      Column("Cluster-IP", "string",
             "clusterIP is the IP address of the service and is usually "
             "assigned randomly."),
      Column("External-IP", "string",
             "externalIPs is a list of IP addresses for which nodes in the "
             "cluster will also accept traffic for this service."),
      Column("Port(s)", "string",
             "The list of ports that are exposed by this service."),
      AgeColumn(),
      Column("Selector", "string",
             "Route service traffic to pods with label keys and values "
             "matching this selector.",
             1)};
}

std::vector<ColumnDefinition> ServiceAccountColumns() {
  return {NameColumn(),
          Column("Secrets", "string",
                 "Secrets is a list of the secrets in the same namespace that "
                 "pods running using this ServiceAccount are allowed to use."),
          AgeColumn()};
}

Cells ServiceAccountCells(const Value& object, absl::Time now) {
  return {NameOf(object), static_cast<int64_t>(ArraySize(&object, "secrets")),
          AgeOf(object, now)};
}

std::vector<ColumnDefinition> EventColumns() {
  return {Column("Last Seen", "string",
                 "The time at which the most recent occurrence of this event "
                 "was recorded."),
          Column("Type", "string",
                 "Type of this event (Normal, Warning), new types could be "
                 "added in the future"),
          Column("Reason", "string",
                 "This should be a short, machine understandable string that "
                 "gives the reason for the transition into the object's "
                 "current status."),
          Column("Object", "string", "The object that this event is about."),
          Column("Subobject", "string",
                 "If referring to a piece of an object instead of an entire "
                 "object, this string should contain a valid JSON/Go "
                 "field access statement, such as "
                 "desiredState.manifest.containers[2].",
                 1),
          Column("Source", "string",
                 "The component reporting this event. Should be a short "
                 "machine understandable string.",
                 1),
          Column("Message", "string",
                 "A human-readable description of the status of this "
                 "operation."),
          Column("First Seen", "string",
                 "The time at which the event was first recorded. (Time of "
                 "server receipt is in TypeMeta.)",
                 1),
          Column("Count", "string",
                 "The number of times this event has occurred.", 1),
          NameColumn(1)};
}

std::vector<ColumnDefinition> NodeColumns() {
  return {NameColumn(),
          Column("Status", "string", "The status of the node"),
          Column("Roles", "string", "The roles of the node"),
          AgeColumn(),
          Column("Version", "string", "Kubelet Version reported by the node."),
          Column("Internal-IP", "string",
                 "List of addresses reachable to the node.", 1),
          Column("External-IP", "string",
                 "List of addresses reachable to the node.", 1),
          Column("OS-Image", "string",
                 "OS Image reported by the node from /etc/os-release (e.g. "
                 "Debian GNU/Linux 7 (wheezy)).",
                 1),
          Column("Kernel-Version", "string",
                 "Kernel Version reported by the node from 'uname -r' (e.g. "
                 "3.16.0-0.bpo.4-amd64).",
                 1),
          Column("Container-Runtime", "string",
                 "ContainerRuntime Version reported by the node through "
                 "runtime remote API (e.g. containerd://1.4.2).",
                 1)};
}

Cells ServiceCells(const Value& svc, absl::Time now) {
  const Value* spec = field::Object(&svc, "spec");
  const Value* status = field::Object(&svc, "status");
  // The API server defaults type to ClusterIP and protocol to TCP.
  std::string type(field::String(spec, "type"));
  if (type.empty()) type = "ClusterIP";
  std::string cluster_ip;
  const Value* ips = field::Array(spec, "clusterIPs");
  if (ips != nullptr && ips->Size() > 0 && (*ips)[0].IsString()) {
    cluster_ip = std::string(Str((*ips)[0]));
  } else {
    cluster_ip = std::string(field::String(spec, "clusterIP"));
  }
  if (cluster_ip.empty()) cluster_ip = "<none>";
  std::vector<std::string> ports;
  if (const Value* list = field::Array(spec, "ports")) {
    for (const auto& p : list->GetArray()) {
      std::string protocol(field::String(&p, "protocol"));
      if (protocol.empty()) protocol = "TCP";
      const int64_t port = Int(&p, "port");
      const int64_t node_port = Int(&p, "nodePort");
      ports.push_back(node_port > 0
                          ? absl::StrCat(port, ":", node_port, "/", protocol)
                          : absl::StrCat(port, "/", protocol));
    }
  }
  std::string ports_cell = absl::StrJoin(ports, ",");
  if (ports_cell.empty()) ports_cell = "<none>";
  return {NameOf(svc),
          type,
          cluster_ip,
          ServiceExternalIp(spec, status, type),
          ports_cell,
          AgeOf(svc, now),
          FormatLabels(field::Member(spec, "selector"))};
}

Cells EventCells(const Value& e, absl::Time now) {
  std::string first = TimestampSince(TimeMember(&e, "firstTimestamp"), now);
  if (!TimeMember(&e, "firstTimestamp").has_value()) {
    first = TimestampSince(TimeMember(&e, "eventTime"), now);
  }
  std::string last = TimestampSince(TimeMember(&e, "lastTimestamp"), now);
  if (!TimeMember(&e, "lastTimestamp").has_value()) last = first;
  int64_t count = Int(&e, "count");
  if (const Value* series = field::Object(&e, "series")) {
    last = TimestampSince(TimeMember(series, "lastObservedTime"), now);
    count = Int(series, "count");
  } else if (count == 0) {
    count = 1;  // singleton events of the new API carry no count
  }
  const Value* involved = field::Object(&e, "involvedObject");
  const std::string kind =
      absl::AsciiStrToLower(ToAbsl(field::String(involved, "kind")));
  const std::string_view involved_name = field::String(involved, "name");
  const std::string target =
      involved_name.empty() ? kind
                            : absl::StrCat(kind, "/", ToAbsl(involved_name));
  const Value* source = field::Object(&e, "source");
  std::string component(field::String(source, "component"));
  if (component.empty()) {
    component = std::string(field::String(&e, "reportingComponent"));
  }
  std::string instance(field::String(source, "host"));
  if (instance.empty()) {
    instance = std::string(field::String(&e, "reportingInstance"));
  }
  const std::string source_cell =
      instance.empty() ? component : absl::StrCat(component, ", ", instance);
  return {last,
          std::string(field::String(&e, "type")),
          std::string(field::String(&e, "reason")),
          target,
          std::string(field::String(involved, "fieldPath")),
          source_cell,
          std::string(
              absl::StripAsciiWhitespace(ToAbsl(field::String(&e, "message")))),
          first,
          count,
          NameOf(e)};
}

Cells NodeCells(const Value& node, absl::Time now) {
  const Value* status = field::Object(&node, "status");
  std::vector<std::string> state;
  if (const Value* conditions = field::Array(status, "conditions")) {
    for (const auto& c : conditions->GetArray()) {
      if (field::String(&c, "type") != "Ready") continue;
      state.push_back(field::String(&c, "status") == "True" ? "Ready"
                                                            : "NotReady");
    }
  }
  if (state.empty()) state.push_back("Unknown");
  if (field::Bool(field::Object(&node, "spec"), "unschedulable")) {
    state.push_back("SchedulingDisabled");
  }
  // Roles: node-role.kubernetes.io/<role> labels and kubernetes.io/role.
  std::vector<std::string> roles;
  if (const Value* labels = field::Object(Metadata(node), "labels")) {
    constexpr std::string_view kPrefix = "node-role.kubernetes.io/";
    for (const auto& l : labels->GetObject()) {
      const std::string_view key = Str(l.name);
      if (absl::StartsWith(ToAbsl(key), ToAbsl(kPrefix)) &&
          key.size() > kPrefix.size()) {
        roles.emplace_back(key.substr(kPrefix.size()));
      } else if (key == "kubernetes.io/role" && l.value.IsString() &&
                 l.value.GetStringLength() > 0) {
        roles.emplace_back(Str(l.value));
      }
    }
  }
  std::sort(roles.begin(), roles.end());
  roles.erase(std::unique(roles.begin(), roles.end()), roles.end());
  const Value* info = field::Object(status, "nodeInfo");
  const auto or_unknown = [](std::string_view v) {
    return v.empty() ? std::string("<unknown>") : std::string(v);
  };
  return {NameOf(node),
          absl::StrJoin(state, ","),
          roles.empty() ? std::string("<none>") : absl::StrJoin(roles, ","),
          AgeOf(node, now),
          std::string(field::String(info, "kubeletVersion")),
          NodeAddress(status, "InternalIP"),
          NodeAddress(status, "ExternalIP"),
          or_unknown(field::String(info, "osImage")),
          or_unknown(field::String(info, "kernelVersion")),
          or_unknown(field::String(info, "containerRuntimeVersion"))};
}

}  // namespace printers
}  // namespace apiserver
}  // namespace kcr
