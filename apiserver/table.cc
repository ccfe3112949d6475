#include "apiserver/table.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/jsonpath/jsonpath.h"
#include "api/selector/label_selector.h"
#include "api/types/field.h"
#include "api/types/time.h"
#include "apiserver/duration.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace apiserver {
namespace {

using Value = rapidjson::Value;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;
namespace field = ::kcr::api::field;

// api/types/field.h speaks std::string_view; Debian's abseil has its own
// string_view type.
std::string_view SV(absl::string_view s) { return {s.data(), s.size()}; }
absl::string_view AV(std::string_view s) { return {s.data(), s.size()}; }
absl::string_view FStr(const Value* o, absl::string_view key) {
  return AV(field::String(o, SV(key)));
}
const Value* FObj(const Value* o, absl::string_view key) {
  return field::Object(o, SV(key));
}
const Value* FArr(const Value* o, absl::string_view key) {
  return field::Array(o, SV(key));
}
const Value* FMem(const Value* o, absl::string_view key) {
  return field::Member(o, SV(key));
}
std::optional<int64_t> FInt64(const Value* o, absl::string_view key) {
  return field::Int64(o, SV(key));
}
std::optional<int32_t> FInt32(const Value* o, absl::string_view key) {
  return field::Int32(o, SV(key));
}
bool FBool(const Value* o, absl::string_view key) {
  return field::Bool(o, SV(key));
}

// A cell: null, string, integer, number or boolean.
using Cell = std::variant<std::monostate, std::string, int64_t, double, bool>;
using Cells = std::vector<Cell>;

// metav1.ObjectMeta's field documentation.
constexpr char kNameDescription[] =
    "Name must be unique within a namespace. Is required when creating "
    "resources, although some resources may allow a client to request the "
    "generation of an appropriate name automatically. Name is primarily "
    "intended for creation idempotence and configuration definition. Cannot "
    "be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/"
    "names#names";
constexpr char kCreationTimestampDescription[] =
    "CreationTimestamp is a timestamp representing the server time when this "
    "object was created. It is not guaranteed to be set in happens-before "
    "order across separate operations. Clients may not set this value. It is "
    "represented in RFC3339 form and is in UTC.\n\nPopulated by the system. "
    "Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/"
    "api-conventions.md#metadata";

ColumnDefinition Column(std::string name, std::string type,
                        std::string description, int32_t priority = 0,
                        std::string format = "") {
  ColumnDefinition c;
  c.name = std::move(name);
  c.type = std::move(type);
  c.format = std::move(format);
  c.description = std::move(description);
  c.priority = priority;
  return c;
}

ColumnDefinition NameColumn(int32_t priority = 0) {
  return Column("Name", "string", kNameDescription, priority, "name");
}
ColumnDefinition AgeColumn() {
  return Column("Age", "string", kCreationTimestampDescription);
}

enum class Kind {
  kPod,
  kDeployment,
  kNamespace,
  kConfigMap,
  kSecret,
  kService,
  kServiceAccount,
  kEvent,
  kLease,
  kNode,
  kDefault,  // rest.NewDefaultTableConvertor: Name, Created At
  kGeneric,  // Name, Age
  kCustom,
};

struct CustomColumn {
  api::jsonpath::JsonPath path;
  std::string type;
};

absl::string_view Str(const Value& v) {
  return absl::string_view(v.GetString(), v.GetStringLength());
}

// metav1.Time of a string member; nullopt when absent, empty or malformed
// (a Go client would have failed to decode the latter; printing "<unknown>"
// is the kinder reading).
std::optional<absl::Time> TimeMember(const Value* object,
                                     absl::string_view key) {
  absl::string_view s = FStr(object, key);
  if (s.empty()) return std::nullopt;
  absl::StatusOr<absl::Time> t = api::ParseTime(SV(s));
  if (!t.ok()) return std::nullopt;
  return *t;
}

std::string TimestampSince(std::optional<absl::Time> t, absl::Time now) {
  if (!t.has_value()) return "<unknown>";
  return HumanDuration(now - *t);
}

const Value* Metadata(const Value& object) { return FObj(&object, "metadata"); }

std::string NameOf(const Value& object) {
  return std::string(FStr(Metadata(object), "name"));
}

std::string AgeOf(const Value& object, absl::Time now) {
  return TimestampSince(TimeMember(Metadata(object), "creationTimestamp"), now);
}

size_t MemberCount(const Value* object, absl::string_view key) {
  const Value* m = FObj(object, key);
  return m == nullptr ? 0 : m->MemberCount();
}

size_t ArraySize(const Value* object, absl::string_view key) {
  const Value* a = FArr(object, key);
  return a == nullptr ? 0 : a->Size();
}

// labels.FormatLabels: "k=v" sorted by key, "<none>" when empty.
std::string FormatLabels(const Value* map) {
  if (map == nullptr || !map->IsObject() || map->MemberCount() == 0) {
    return "<none>";
  }
  std::map<std::string, std::string> sorted;
  for (const auto& m : map->GetObject()) {
    sorted[std::string(Str(m.name))] =
        m.value.IsString() ? std::string(Str(m.value)) : std::string();
  }
  std::vector<std::string> parts;
  for (const auto& [k, v] : sorted) parts.push_back(absl::StrCat(k, "=", v));
  return absl::StrJoin(parts, ",");
}

// metav1.FormatLabelSelector.
std::string FormatLabelSelector(const Value* selector) {
  Value null_value;
  absl::StatusOr<api::LabelSelector> s = api::LabelSelector::FromLabelSelector(
      selector == nullptr ? null_value : *selector);
  if (!s.ok()) return "<error>";
  std::string text = s->ToString();
  return text.empty() ? "<none>" : text;
}

// layoutContainerCells: names and images joined with ",".
std::pair<std::string, std::string> ContainerCells(const Value* containers) {
  std::vector<std::string> names;
  std::vector<std::string> images;
  if (containers != nullptr && containers->IsArray()) {
    for (const auto& c : containers->GetArray()) {
      names.emplace_back(FStr(&c, "name"));
      images.emplace_back(FStr(&c, "image"));
    }
  }
  return {absl::StrJoin(names, ","), absl::StrJoin(images, ",")};
}

bool ConditionTrue(const Value* status, absl::string_view type) {
  const Value* conditions = FArr(status, "conditions");
  if (conditions == nullptr) return false;
  for (const auto& c : conditions->GetArray()) {
    if (FStr(&c, "type") == type && FStr(&c, "status") == "True") {
      return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------
// Pods.

struct RowCondition {
  std::string type, status, reason, message;
};

int64_t Int(const Value* object, absl::string_view key) {
  return FInt64(object, key).value_or(0);
}

Cells PodCells(const Value& pod, absl::Time now,
               std::vector<RowCondition>* row_conditions) {
  const Value* spec = FObj(&pod, "spec");
  const Value* status = FObj(&pod, "status");
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

  const std::string phase(FStr(status, "phase"));
  std::string reason = phase;
  if (!FStr(status, "reason").empty()) {
    reason = std::string(FStr(status, "reason"));
  }
  if (const Value* conditions = FArr(status, "conditions")) {
    for (const auto& c : conditions->GetArray()) {
      if (FStr(&c, "type") == "PodScheduled" &&
          FStr(&c, "reason") == "SchedulingGated") {
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
  const Value* init_specs = FArr(spec, "initContainers");
  const size_t init_count = init_specs == nullptr ? 0 : init_specs->Size();
  if (init_specs != nullptr) {
    for (const auto& c : init_specs->GetArray()) {
      const bool restartable = FStr(&c, "restartPolicy") == "Always";
      restartable_init[std::string(FStr(&c, "name"))] = restartable;
      if (restartable) ++total_containers;
    }
  }
  const auto is_restartable = [&](absl::string_view name) {
    auto it = restartable_init.find(std::string(name));
    return it != restartable_init.end() && it->second;
  };
  const auto finished_at = [](const Value& container_status) {
    const Value* last = FObj(&container_status, "lastState");
    return TimeMember(FObj(last, "terminated"), "finishedAt");
  };

  bool initializing = false;
  if (const Value* init = FArr(status, "initContainerStatuses")) {
    for (rapidjson::SizeType i = 0; i < init->Size(); ++i) {
      const Value& c = (*init)[i];
      const absl::string_view name = FStr(&c, "name");
      restarts += Int(&c, "restartCount");
      later(&last_restart, finished_at(c));
      if (is_restartable(name)) {
        restartable_init_restarts += Int(&c, "restartCount");
        later(&last_restartable_init_restart, finished_at(c));
      }
      const Value* state = FObj(&c, "state");
      const Value* terminated = FObj(state, "terminated");
      const Value* waiting = FObj(state, "waiting");
      if (terminated != nullptr && Int(terminated, "exitCode") == 0) continue;
      if (is_restartable(name) && FBool(&c, "started")) {
        if (FBool(&c, "ready")) ++ready_containers;
        continue;
      }
      if (terminated != nullptr) {
        const absl::string_view r = FStr(terminated, "reason");
        if (r.empty()) {
          const int64_t signal = Int(terminated, "signal");
          reason = signal != 0 ? absl::StrCat("Init:Signal:", signal)
                               : absl::StrCat("Init:ExitCode:",
                                              Int(terminated, "exitCode"));
        } else {
          reason = absl::StrCat("Init:", r);
        }
      } else if (waiting != nullptr && !FStr(waiting, "reason").empty() &&
                 FStr(waiting, "reason") != "PodInitializing") {
        reason = absl::StrCat("Init:", FStr(waiting, "reason"));
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
    if (const Value* statuses = FArr(status, "containerStatuses")) {
      for (rapidjson::SizeType k = statuses->Size(); k > 0; --k) {
        const Value& c = (*statuses)[k - 1];
        restarts += Int(&c, "restartCount");
        later(&last_restart, finished_at(c));
        const Value* state = FObj(&c, "state");
        const Value* waiting = FObj(state, "waiting");
        const Value* terminated = FObj(state, "terminated");
        const Value* running = FObj(state, "running");
        if (waiting != nullptr && !FStr(waiting, "reason").empty()) {
          reason = std::string(FStr(waiting, "reason"));
        } else if (terminated != nullptr &&
                   !FStr(terminated, "reason").empty()) {
          reason = std::string(FStr(terminated, "reason"));
        } else if (terminated != nullptr) {
          const int64_t signal = Int(terminated, "signal");
          reason = signal != 0
                       ? absl::StrCat("Signal:", signal)
                       : absl::StrCat("ExitCode:", Int(terminated, "exitCode"));
        } else if (FBool(&c, "ready") && running != nullptr) {
          has_running = true;
          ++ready_containers;
        }
      }
    }
    if (reason == "Completed" && has_running) {
      reason = ConditionTrue(status, "Ready") ? "Running" : "NotReady";
    }
  }

  if (!FStr(metadata, "deletionTimestamp").empty()) {
    if (FStr(status, "reason") == "NodeLost") {
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
  std::string pod_ip(FStr(status, "podIP"));
  if (pod_ip.empty()) {
    const Value* ips = FArr(status, "podIPs");
    if (ips != nullptr && ips->Size() > 0) {
      pod_ip = std::string(FStr(&(*ips)[0], "ip"));
    }
  }
  std::string node(FStr(spec, "nodeName"));
  std::string nominated(FStr(status, "nominatedNodeName"));
  std::string gates = "<none>";
  if (const Value* readiness = FArr(spec, "readinessGates");
      readiness != nullptr && readiness->Size() > 0) {
    int true_conditions = 0;
    const Value* conditions = FArr(status, "conditions");
    for (const auto& gate : readiness->GetArray()) {
      const absl::string_view type = FStr(&gate, "conditionType");
      if (conditions == nullptr) break;
      for (const auto& c : conditions->GetArray()) {
        if (FStr(&c, "type") == type) {
          if (FStr(&c, "status") == "True") ++true_conditions;
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

// ---------------------------------------------------------------------------
// The other built-in printers.

Cells DeploymentCells(const Value& d, absl::Time now) {
  const Value* spec = FObj(&d, "spec");
  const Value* status = FObj(&d, "status");
  const int64_t desired = FInt64(spec, "replicas").value_or(1);
  const Value* pod_spec = FObj(FObj(spec, "template"), "spec");
  auto [names, images] = ContainerCells(FArr(pod_spec, "containers"));
  return {NameOf(d),
          absl::StrCat(Int(status, "readyReplicas"), "/", desired),
          Int(status, "updatedReplicas"),
          Int(status, "availableReplicas"),
          AgeOf(d, now),
          names,
          images,
          FormatLabelSelector(FMem(spec, "selector"))};
}

std::string ServiceExternalIp(const Value* spec, const Value* status,
                              absl::string_view type) {
  std::vector<std::string> external;
  if (const Value* ips = FArr(spec, "externalIPs")) {
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
    const Value* ingress = FArr(FObj(status, "loadBalancer"), "ingress");
    if (ingress != nullptr) {
      for (const auto& i : ingress->GetArray()) {
        absl::string_view ip = FStr(&i, "ip");
        absl::string_view host = FStr(&i, "hostname");
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
    return std::string(FStr(spec, "externalName"));
  }
  return "<unknown>";
}

Cells ServiceCells(const Value& svc, absl::Time now) {
  const Value* spec = FObj(&svc, "spec");
  const Value* status = FObj(&svc, "status");
  // The API server defaults type to ClusterIP and protocol to TCP.
  std::string type(FStr(spec, "type"));
  if (type.empty()) type = "ClusterIP";
  std::string cluster_ip;
  const Value* ips = FArr(spec, "clusterIPs");
  if (ips != nullptr && ips->Size() > 0 && (*ips)[0].IsString()) {
    cluster_ip = std::string(Str((*ips)[0]));
  } else {
    cluster_ip = std::string(FStr(spec, "clusterIP"));
  }
  if (cluster_ip.empty()) cluster_ip = "<none>";
  std::vector<std::string> ports;
  if (const Value* list = FArr(spec, "ports")) {
    for (const auto& p : list->GetArray()) {
      std::string protocol(FStr(&p, "protocol"));
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
          FormatLabels(FMem(spec, "selector"))};
}

Cells EventCells(const Value& e, absl::Time now) {
  std::string first = TimestampSince(TimeMember(&e, "firstTimestamp"), now);
  if (!TimeMember(&e, "firstTimestamp").has_value()) {
    first = TimestampSince(TimeMember(&e, "eventTime"), now);
  }
  std::string last = TimestampSince(TimeMember(&e, "lastTimestamp"), now);
  if (!TimeMember(&e, "lastTimestamp").has_value()) last = first;
  int64_t count = Int(&e, "count");
  if (const Value* series = FObj(&e, "series")) {
    last = TimestampSince(TimeMember(series, "lastObservedTime"), now);
    count = Int(series, "count");
  } else if (count == 0) {
    count = 1;  // singleton events of the new API carry no count
  }
  const Value* involved = FObj(&e, "involvedObject");
  const std::string kind = absl::AsciiStrToLower(FStr(involved, "kind"));
  const absl::string_view involved_name = FStr(involved, "name");
  const std::string target =
      involved_name.empty() ? kind : absl::StrCat(kind, "/", involved_name);
  const Value* source = FObj(&e, "source");
  std::string component(FStr(source, "component"));
  if (component.empty()) {
    component = std::string(FStr(&e, "reportingComponent"));
  }
  std::string instance(FStr(source, "host"));
  if (instance.empty()) {
    instance = std::string(FStr(&e, "reportingInstance"));
  }
  const std::string source_cell =
      instance.empty() ? component : absl::StrCat(component, ", ", instance);
  return {last,
          std::string(FStr(&e, "type")),
          std::string(FStr(&e, "reason")),
          target,
          std::string(FStr(involved, "fieldPath")),
          source_cell,
          std::string(absl::StripAsciiWhitespace(FStr(&e, "message"))),
          first,
          count,
          NameOf(e)};
}

// The first address of `type` in status.addresses, or "<none>".
std::string NodeAddress(const Value* status, absl::string_view type) {
  if (const Value* addresses = FArr(status, "addresses")) {
    for (const auto& a : addresses->GetArray()) {
      if (FStr(&a, "type") == type) return std::string(FStr(&a, "address"));
    }
  }
  return "<none>";
}

Cells NodeCells(const Value& node, absl::Time now) {
  const Value* status = FObj(&node, "status");
  std::vector<std::string> state;
  if (const Value* conditions = FArr(status, "conditions")) {
    for (const auto& c : conditions->GetArray()) {
      if (FStr(&c, "type") != "Ready") continue;
      state.push_back(FStr(&c, "status") == "True" ? "Ready" : "NotReady");
    }
  }
  if (state.empty()) state.push_back("Unknown");
  if (FBool(FObj(&node, "spec"), "unschedulable")) {
    state.push_back("SchedulingDisabled");
  }
  // Roles: node-role.kubernetes.io/<role> labels and kubernetes.io/role.
  std::vector<std::string> roles;
  if (const Value* labels = FObj(Metadata(node), "labels")) {
    constexpr absl::string_view kPrefix = "node-role.kubernetes.io/";
    for (const auto& l : labels->GetObject()) {
      const absl::string_view key = Str(l.name);
      if (absl::StartsWith(key, kPrefix) && key.size() > kPrefix.size()) {
        roles.emplace_back(key.substr(kPrefix.size()));
      } else if (key == "kubernetes.io/role" && l.value.IsString() &&
                 l.value.GetStringLength() > 0) {
        roles.emplace_back(Str(l.value));
      }
    }
  }
  std::sort(roles.begin(), roles.end());
  roles.erase(std::unique(roles.begin(), roles.end()), roles.end());
  const Value* info = FObj(status, "nodeInfo");
  const auto or_unknown = [](absl::string_view v) {
    return v.empty() ? std::string("<unknown>") : std::string(v);
  };
  return {NameOf(node),
          absl::StrJoin(state, ","),
          roles.empty() ? std::string("<none>") : absl::StrJoin(roles, ","),
          AgeOf(node, now),
          std::string(FStr(info, "kubeletVersion")),
          NodeAddress(status, "InternalIP"),
          NodeAddress(status, "ExternalIP"),
          or_unknown(FStr(info, "osImage")),
          or_unknown(FStr(info, "kernelVersion")),
          or_unknown(FStr(info, "containerRuntimeVersion"))};
}

// ---------------------------------------------------------------------------
// Custom resources (apiextensions-apiserver's tableconvertor).

Cell CustomCell(const CustomColumn& column, const Value& object,
                absl::Time now) {
  api::jsonpath::EvalOptions options;
  options.allow_missing_keys = true;
  absl::StatusOr<api::jsonpath::Results> results =
      column.path.FindResults(object, options);
  if (!results.ok() || results->empty() || (*results)[0].empty()) {
    return std::monostate();
  }
  // Only simple paths are supported: the first value is the cell.
  const Value& v = *(*results)[0][0];
  const std::string& type = column.type;
  if (type == "string") {
    // JSONPath.PrintResults of the value; a null prints as "<no value>".
    if (v.IsNull()) return std::string("<no value>");
    return api::jsonpath::JsonPath::PrintValue(v);
  }
  if (v.IsNull()) return std::monostate();
  if (type == "integer") {
    if (v.IsInt64()) return v.GetInt64();
    if (v.IsNumber()) {
      const double d = v.GetDouble();
      if (std::isfinite(d) && std::fabs(d) < 9.2e18) {
        return static_cast<int64_t>(d);
      }
      // Go's int64() of an out-of-range float64 on amd64.
      return std::numeric_limits<int64_t>::min();
    }
    return std::monostate();
  }
  if (type == "number") {
    if (v.IsNumber()) return v.GetDouble();
    return std::monostate();
  }
  if (type == "boolean") {
    if (v.IsBool()) return v.GetBool();
    return std::monostate();
  }
  if (type == "date") {
    if (!v.IsString()) return std::monostate();
    if (v.GetStringLength() == 0) return std::string("<unknown>");
    absl::StatusOr<absl::Time> t = api::ParseTime(SV(Str(v)));
    if (!t.ok()) return std::string("<invalid>");
    return HumanDuration(now - *t);
  }
  return std::monostate();
}

// ---------------------------------------------------------------------------
// Writing.

void WriteString(Writer* w, absl::string_view s) {
  // An empty view may carry a null pointer, which RapidJSON rejects.
  if (s.empty()) {
    w->String("", 0);
    return;
  }
  w->String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void WriteCell(Writer* w, const Cell& cell) {
  if (std::holds_alternative<std::monostate>(cell)) {
    w->Null();
  } else if (const auto* s = std::get_if<std::string>(&cell)) {
    WriteString(w, *s);
  } else if (const auto* i = std::get_if<int64_t>(&cell)) {
    w->Int64(*i);
  } else if (const auto* d = std::get_if<double>(&cell)) {
    // Go writes 2.0 as 2: keep integral values integral on the wire.
    if (std::fabs(*d) < 9007199254740992.0 && std::floor(*d) == *d) {
      w->Int64(static_cast<int64_t>(*d));
    } else {
      w->Double(*d);
    }
  } else if (const auto* b = std::get_if<bool>(&cell)) {
    w->Bool(*b);
  }
}

}  // namespace

struct TablePrinter::Impl {
  Kind kind = Kind::kGeneric;
  std::vector<ColumnDefinition> columns;
  std::vector<CustomColumn> custom;  // columns[1 .. custom.size()]
  bool custom_age = false;           // an Age column follows them
  // apiVersion and kind of full objects in rows, when items lack them.
  std::string api_version;
  std::string object_kind;
  const Clock* clock = nullptr;

  Cells CellsFor(const Value& object, absl::Time now,
                 std::vector<RowCondition>* conditions) const {
    switch (kind) {
      case Kind::kPod:
        return PodCells(object, now, conditions);
      case Kind::kDeployment:
        return DeploymentCells(object, now);
      case Kind::kNamespace:
        return {NameOf(object),
                std::string(FStr(FObj(&object, "status"), "phase")),
                AgeOf(object, now)};
      case Kind::kConfigMap:
        return {NameOf(object),
                static_cast<int64_t>(MemberCount(&object, "data") +
                                     MemberCount(&object, "binaryData")),
                AgeOf(object, now)};
      case Kind::kSecret:
        return {NameOf(object), std::string(FStr(&object, "type")),
                static_cast<int64_t>(MemberCount(&object, "data")),
                AgeOf(object, now)};
      case Kind::kService:
        return ServiceCells(object, now);
      case Kind::kServiceAccount:
        return {NameOf(object),
                static_cast<int64_t>(ArraySize(&object, "secrets")),
                AgeOf(object, now)};
      case Kind::kEvent:
        return EventCells(object, now);
      case Kind::kLease:
        return {NameOf(object),
                std::string(FStr(FObj(&object, "spec"), "holderIdentity")),
                AgeOf(object, now)};
      case Kind::kNode:
        return NodeCells(object, now);
      case Kind::kDefault: {
        std::optional<absl::Time> t =
            TimeMember(Metadata(object), "creationTimestamp");
        return {
            NameOf(object),
            api::FormatRfc3339(t.value_or(absl::FromCivil(
                absl::CivilSecond(1, 1, 1, 0, 0, 0), absl::UTCTimeZone())))};
      }
      case Kind::kGeneric:
        return {NameOf(object), AgeOf(object, now)};
      case Kind::kCustom: {
        Cells cells = {NameOf(object)};
        for (const CustomColumn& c : custom) {
          cells.push_back(CustomCell(c, object, now));
        }
        if (custom_age) cells.push_back(AgeOf(object, now));
        return cells;
      }
    }
    return {};
  }

  void WriteRow(Writer* w, const Value& object, absl::Time now,
                const TableOptions& options) const {
    std::vector<RowCondition> conditions;
    Cells cells = CellsFor(object, now, &conditions);
    w->StartObject();
    w->Key("cells");
    w->StartArray();
    for (const Cell& c : cells) WriteCell(w, c);
    w->EndArray();
    if (!conditions.empty()) {
      w->Key("conditions");
      w->StartArray();
      for (const RowCondition& c : conditions) {
        w->StartObject();
        w->Key("type");
        WriteString(w, c.type);
        w->Key("status");
        WriteString(w, c.status);
        w->Key("reason");
        WriteString(w, c.reason);
        w->Key("message");
        WriteString(w, c.message);
        w->EndObject();
      }
      w->EndArray();
    }
    w->Key("object");
    switch (options.include_object) {
      case IncludeObject::kNone:
        w->Null();
        break;
      case IncludeObject::kMetadata: {
        w->StartObject();
        w->Key("kind");
        w->String("PartialObjectMetadata");
        w->Key("apiVersion");
        WriteString(w, options.group_version);
        w->Key("metadata");
        const Value* metadata = Metadata(object);
        if (metadata != nullptr) {
          metadata->Accept(*w);
        } else {
          w->StartObject();
          w->EndObject();
        }
        w->EndObject();
        break;
      }
      case IncludeObject::kObject:
        WriteFullObject(w, object);
        break;
    }
    w->EndObject();
  }

  // The object with apiVersion and kind first when it lacks them (list
  // items often do).
  void WriteFullObject(Writer* w, const Value& object) const {
    if (!object.IsObject() ||
        (object.HasMember("apiVersion") && object.HasMember("kind")) ||
        api_version.empty()) {
      object.Accept(*w);
      return;
    }
    w->StartObject();
    if (!object.HasMember("apiVersion")) {
      w->Key("apiVersion");
      WriteString(w, api_version);
    }
    if (!object.HasMember("kind")) {
      w->Key("kind");
      WriteString(w, object_kind);
    }
    for (const auto& m : object.GetObject()) {
      w->Key(m.name.GetString(), m.name.GetStringLength());
      m.value.Accept(*w);
    }
    w->EndObject();
  }

  void WriteTable(Writer* w, absl::Span<const Value* const> items,
                  const ListMeta& list_meta,
                  const TableOptions& options) const {
    const absl::Time now = clock->Now();
    w->StartObject();
    w->Key("kind");
    w->String("Table");
    w->Key("apiVersion");
    WriteString(w, options.group_version);
    w->Key("metadata");
    w->StartObject();
    if (!list_meta.resource_version.empty()) {
      w->Key("resourceVersion");
      WriteString(w, list_meta.resource_version);
    }
    if (!list_meta.continue_token.empty()) {
      w->Key("continue");
      WriteString(w, list_meta.continue_token);
    }
    if (list_meta.remaining_item_count.has_value()) {
      w->Key("remainingItemCount");
      w->Int64(*list_meta.remaining_item_count);
    }
    w->EndObject();
    w->Key("columnDefinitions");
    if (options.no_headers) {
      w->Null();
    } else {
      w->StartArray();
      for (const ColumnDefinition& c : columns) {
        w->StartObject();
        w->Key("name");
        WriteString(w, c.name);
        w->Key("type");
        WriteString(w, c.type);
        w->Key("format");
        WriteString(w, c.format);
        w->Key("description");
        WriteString(w, c.description);
        w->Key("priority");
        w->Int(c.priority);
        w->EndObject();
      }
      w->EndArray();
    }
    w->Key("rows");
    w->StartArray();
    for (const Value* item : items) WriteRow(w, *item, now, options);
    w->EndArray();
    w->EndObject();
  }
};

absl::StatusOr<IncludeObject> ParseIncludeObject(absl::string_view value) {
  if (value.empty() || value == "Metadata") return IncludeObject::kMetadata;
  if (value == "Object") return IncludeObject::kObject;
  if (value == "None") return IncludeObject::kNone;
  return absl::InvalidArgumentError(
      absl::StrCat("unrecognized includeObject value: \"", value, "\""));
}

std::optional<std::string> TableGroupVersionFromAccept(
    absl::string_view accept) {
  for (absl::string_view range : absl::StrSplit(accept, ',')) {
    std::vector<absl::string_view> parts = absl::StrSplit(range, ';');
    const std::string type =
        absl::AsciiStrToLower(absl::StripAsciiWhitespace(parts[0]));
    std::map<std::string, std::string> params;
    for (size_t i = 1; i < parts.size(); ++i) {
      std::pair<absl::string_view, absl::string_view> kv =
          absl::StrSplit(parts[i], absl::MaxSplits('=', 1));
      params[absl::AsciiStrToLower(absl::StripAsciiWhitespace(kv.first))] =
          std::string(absl::StripAsciiWhitespace(kv.second));
    }
    if (params.count("q") && (params["q"] == "0" || params["q"] == "0.0")) {
      continue;
    }
    const bool json_type =
        type == "application/json" || type == "application/*" || type == "*/*";
    if (!json_type) continue;
    auto as = params.find("as");
    if (as == params.end()) return std::nullopt;  // plain JSON comes first
    if (as->second == "Table" && params["g"] == "meta.k8s.io" &&
        (params["v"] == "v1" || params["v"] == "v1beta1")) {
      return absl::StrCat("meta.k8s.io/", params["v"]);
    }
    // Another conversion (PartialObjectMetadata...) or version: not served
    // here; look further.
  }
  return std::nullopt;
}

const std::vector<ColumnDefinition>& TablePrinter::columns() const {
  return impl_->columns;
}

TablePrinter TablePrinter::ForResource(absl::string_view group,
                                       absl::string_view resource,
                                       const Clock* clock) {
  auto impl = std::make_shared<Impl>();
  impl->clock = clock;
  std::vector<ColumnDefinition>& c = impl->columns;
  const auto set = [&](Kind kind, std::string api_version,
                       std::string object_kind) {
    impl->kind = kind;
    impl->api_version = std::move(api_version);
    impl->object_kind = std::move(object_kind);
  };
  if (group.empty() && resource == "pods") {
    set(Kind::kPod, "v1", "Pod");
    c = {NameColumn(),
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
  } else if (group == "apps" && resource == "deployments") {
    set(Kind::kDeployment, "apps/v1", "Deployment");
    c = {NameColumn(),
         Column("Ready", "string", "Number of the pod with ready state"),
         Column("Up-to-date", "string",
                "Total number of non-terminated pods targeted by this "
                "deployment that have the desired template spec."),
         Column("Available", "string",
                "Total number of available pods (ready for at least "
                "minReadySeconds) targeted by this deployment."),
         AgeColumn(),
         Column("Containers", "string",
                "Names of each container in the template.", 1),
         Column("Images", "string",
                "Images referenced by each container in the template.", 1),
         Column("Selector", "string",
                "Label selector for pods. Existing ReplicaSets whose pods are "
                "selected by this will be the ones affected by this "
                "deployment.",
                1)};
  } else if (group.empty() && resource == "namespaces") {
    set(Kind::kNamespace, "v1", "Namespace");
    c = {NameColumn(),
         Column("Status", "string", "The status of the namespace"),
         AgeColumn()};
  } else if (group.empty() && resource == "configmaps") {
    set(Kind::kConfigMap, "v1", "ConfigMap");
    c = {NameColumn(),
         Column("Data", "string", "Data contains the configuration data."),
         AgeColumn()};
  } else if (group.empty() && resource == "secrets") {
    set(Kind::kSecret, "v1", "Secret");
    c = {NameColumn(),
         Column("Type", "string",
                "Used to facilitate programmatic handling of secret data."),
         Column("Data", "string", "Data contains the secret data."),
         AgeColumn()};
  } else if (group.empty() && resource == "services") {
    set(Kind::kService, "v1", "Service");
    c = {
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
  } else if (group.empty() && resource == "serviceaccounts") {
    set(Kind::kServiceAccount, "v1", "ServiceAccount");
    c = {NameColumn(),
         Column("Secrets", "string",
                "Secrets is a list of the secrets in the same namespace that "
                "pods running using this ServiceAccount are allowed to use."),
         AgeColumn()};
  } else if (group.empty() && resource == "events") {
    set(Kind::kEvent, "v1", "Event");
    c = {Column("Last Seen", "string",
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
  } else if (group == "coordination.k8s.io" && resource == "leases") {
    set(Kind::kLease, "coordination.k8s.io/v1", "Lease");
    c = {NameColumn(),
         Column("Holder", "string",
                "holderIdentity contains the identity of the holder of a "
                "current lease."),
         AgeColumn()};
  } else if (group.empty() && resource == "nodes") {
    set(Kind::kNode, "v1", "Node");
    c = {NameColumn(),
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
  } else if (group == "apiextensions.k8s.io" &&
             resource == "customresourcedefinitions") {
    set(Kind::kDefault, "apiextensions.k8s.io/v1", "CustomResourceDefinition");
    c = {NameColumn(),
         Column("Created At", "date", kCreationTimestampDescription)};
  } else {
    set(Kind::kGeneric, "", "");
    c = {NameColumn(), AgeColumn()};
  }
  return TablePrinter(std::move(impl));
}

absl::StatusOr<TablePrinter> TablePrinter::ForCustomResource(
    const rapidjson::Value& crd, absl::string_view version, const Clock* clock,
    bool append_age_column) {
  const Value* spec = FObj(&crd, "spec");
  const Value* versions = FArr(spec, "versions");
  const Value* served = nullptr;
  if (versions != nullptr) {
    for (const auto& v : versions->GetArray()) {
      if (FStr(&v, "name") == version) served = &v;
    }
  }
  if (served == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "version ", version, " not found in CustomResourceDefinition: ",
        FStr(Metadata(crd), "name")));
  }
  const Value* declared = FArr(served, "additionalPrinterColumns");
  Value none(rapidjson::kArrayType);
  return ForPrinterColumns(declared == nullptr ? none : *declared,
                           absl::StrCat(FStr(spec, "group"), "/", version),
                           FStr(FObj(spec, "names"), "kind"), clock,
                           append_age_column);
}

absl::StatusOr<TablePrinter> TablePrinter::ForPrinterColumns(
    const rapidjson::Value& columns, absl::string_view api_version,
    absl::string_view kind, const Clock* clock, bool append_age_column) {
  auto impl = std::make_shared<Impl>();
  impl->clock = clock;
  impl->kind = Kind::kCustom;
  impl->api_version = std::string(api_version);
  impl->object_kind = std::string(kind);
  impl->columns.push_back(NameColumn());

  const Value* declared = columns.IsArray() ? &columns : nullptr;
  if (declared == nullptr || declared->Size() == 0) {
    impl->columns.push_back(
        Column("Age", "date", kCreationTimestampDescription));
    absl::StatusOr<api::jsonpath::JsonPath> path =
        api::jsonpath::JsonPath::ParseExpression(".metadata.creationTimestamp");
    impl->custom.push_back({*path, "date"});
    return TablePrinter(std::move(impl));
  }
  bool has_age = false;
  for (const auto& col : declared->GetArray()) {
    const absl::string_view json_path = FStr(&col, "jsonPath");
    absl::StatusOr<api::jsonpath::JsonPath> path =
        api::jsonpath::JsonPath::ParseExpression(SV(json_path));
    if (!path.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unrecognized column definition \"", json_path, "\""));
    }
    ColumnDefinition def;
    def.name = std::string(FStr(&col, "name"));
    def.type = std::string(FStr(&col, "type"));
    def.format = std::string(FStr(&col, "format"));
    def.description = std::string(FStr(&col, "description"));
    if (def.description.empty()) {
      def.description = absl::StrCat(
          "Custom resource definition column (in JSONPath format): ",
          json_path);
    }
    def.priority = FInt32(&col, "priority").value_or(0);
    if (def.name == "Age") has_age = true;
    impl->custom.push_back({*std::move(path), def.type});
    impl->columns.push_back(std::move(def));
  }
  if (append_age_column && !has_age) {
    impl->columns.push_back(AgeColumn());
    impl->custom_age = true;
  }
  return TablePrinter(std::move(impl));
}

std::string TablePrinter::RenderList(
    absl::Span<const rapidjson::Value* const> items, const ListMeta& list_meta,
    const TableOptions& options) const {
  rapidjson::StringBuffer buffer;
  Writer writer(buffer);
  impl_->WriteTable(&writer, items, list_meta, options);
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string TablePrinter::RenderObject(const rapidjson::Value& object,
                                       const TableOptions& options) const {
  ListMeta meta;
  meta.resource_version =
      std::string(FStr(Metadata(object), "resourceVersion"));
  const Value* items[] = {&object};
  return RenderList(items, meta, options);
}

std::string TablePrinter::RenderWatchEvent(absl::string_view type,
                                           const rapidjson::Value& object,
                                           const TableOptions& options) const {
  rapidjson::StringBuffer buffer;
  Writer writer(buffer);
  writer.StartObject();
  writer.Key("type");
  WriteString(&writer, type);
  writer.Key("object");
  if (type == "ERROR") {
    object.Accept(writer);
  } else {
    ListMeta meta;
    meta.resource_version =
        std::string(FStr(Metadata(object), "resourceVersion"));
    const Value* items[] = {&object};
    impl_->WriteTable(&writer, items, meta, options);
  }
  writer.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string TablePrinter::RenderCells(const rapidjson::Value& object) const {
  std::vector<RowCondition> conditions;
  Cells cells = impl_->CellsFor(object, impl_->clock->Now(), &conditions);
  rapidjson::StringBuffer buffer;
  Writer writer(buffer);
  writer.StartArray();
  for (const Cell& c : cells) WriteCell(&writer, c);
  writer.EndArray();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace apiserver
}  // namespace kcr
