#include "apiserver/registry/builtin_schema.h"

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace {

using rapidjson::Value;
using Kind = GoType::Kind;
using Fields = std::initializer_list<std::pair<const char*, const GoType*>>;

// Types live for the whole program: the tables point into each other.
const GoType* Scalar(Kind kind, const char* name) {
  auto* t = new GoType();
  t->kind = kind;
  t->name = name;
  return t;
}

const GoType* String() {
  static const GoType* const t = Scalar(Kind::kString, "string");
  return t;
}
const GoType* Bool() {
  static const GoType* const t = Scalar(Kind::kBool, "bool");
  return t;
}
const GoType* Int32() {
  static const GoType* const t = Scalar(Kind::kInt32, "int32");
  return t;
}
const GoType* Int64() {
  static const GoType* const t = Scalar(Kind::kInt64, "int64");
  return t;
}
const GoType* Bytes() {
  static const GoType* const t = Scalar(Kind::kBytes, "[]uint8");
  return t;
}
const GoType* Quantity() {
  static const GoType* const t = Scalar(Kind::kQuantity, "resource.Quantity");
  return t;
}
const GoType* IntOrString() {
  static const GoType* const t =
      Scalar(Kind::kIntOrString, "intstr.IntOrString");
  return t;
}
const GoType* Time() {
  static const GoType* const t = Scalar(Kind::kTime, "v1.Time");
  return t;
}
const GoType* MicroTime() {
  static const GoType* const t = Scalar(Kind::kTime, "v1.MicroTime");
  return t;
}
const GoType* Any() {
  static const GoType* const t = Scalar(Kind::kAny, "runtime.RawExtension");
  return t;
}

// `name` is package-qualified as reflect prints it: "v1.PodSpec".
const GoType* Struct(const char* name, Fields fields) {
  auto* t = new GoType();
  t->kind = Kind::kStruct;
  t->name = name;
  for (const auto& [json_name, type] : fields) {
    t->fields.emplace_back(json_name, type);
  }
  return t;
}

// A struct whose members are not listed: checked to be an object only.
const GoType* Open(const char* name) {
  auto* t = new GoType();
  t->kind = Kind::kStruct;
  t->name = name;
  t->open = true;
  return t;
}

const GoType* Map(const GoType* elem) {
  auto* t = new GoType();
  t->kind = Kind::kMap;
  t->name = Cat("map[string]", elem->name);
  t->elem = elem;
  return t;
}

const GoType* Slice(const GoType* elem) {
  auto* t = new GoType();
  t->kind = Kind::kSlice;
  t->name = Cat("[]", elem->name);
  t->elem = elem;
  return t;
}

const GoType* StringMap() {
  static const GoType* const t = Map(String());
  return t;
}
const GoType* Strings() {
  static const GoType* const t = Slice(String());
  return t;
}

// k8s.io/apimachinery/pkg/apis/meta/v1 ObjectMeta.
const GoType* ObjectMeta() {
  static const GoType* const t = [] {
    const GoType* owner =
        Struct("v1.OwnerReference", {{"apiVersion", String()},
                                     {"kind", String()},
                                     {"name", String()},
                                     {"uid", String()},
                                     {"controller", Bool()},
                                     {"blockOwnerDeletion", Bool()}});
    const GoType* managed =
        Struct("v1.ManagedFieldsEntry", {{"manager", String()},
                                         {"operation", String()},
                                         {"apiVersion", String()},
                                         {"time", Time()},
                                         {"fieldsType", String()},
                                         {"fieldsV1", Any()},
                                         {"subresource", String()}});
    return Struct("v1.ObjectMeta", {{"name", String()},
                                    {"generateName", String()},
                                    {"namespace", String()},
                                    {"selfLink", String()},
                                    {"uid", String()},
                                    {"resourceVersion", String()},
                                    {"generation", Int64()},
                                    {"creationTimestamp", Time()},
                                    {"deletionTimestamp", Time()},
                                    {"deletionGracePeriodSeconds", Int64()},
                                    {"labels", StringMap()},
                                    {"annotations", StringMap()},
                                    {"ownerReferences", Slice(owner)},
                                    {"finalizers", Strings()},
                                    {"managedFields", Slice(managed)}});
  }();
  return t;
}

const GoType* LocalObjectReference() {
  static const GoType* const t =
      Struct("v1.LocalObjectReference", {{"name", String()}});
  return t;
}

const GoType* ObjectReference() {
  static const GoType* const t =
      Struct("v1.ObjectReference", {{"kind", String()},
                                    {"namespace", String()},
                                    {"name", String()},
                                    {"uid", String()},
                                    {"apiVersion", String()},
                                    {"resourceVersion", String()},
                                    {"fieldPath", String()}});
  return t;
}

const GoType* LabelSelector() {
  static const GoType* const t = [] {
    const GoType* requirement = Struct(
        "v1.LabelSelectorRequirement",
        {{"key", String()}, {"operator", String()}, {"values", Strings()}});
    return Struct("v1.LabelSelector",
                  {{"matchLabels", StringMap()},
                   {"matchExpressions", Slice(requirement)}});
  }();
  return t;
}

// k8s.io/api/core/v1 Container (1.32).
const GoType* Container() {
  static const GoType* const t = [] {
    const GoType* port = Struct("v1.ContainerPort", {{"name", String()},
                                                     {"hostPort", Int32()},
                                                     {"containerPort", Int32()},
                                                     {"protocol", String()},
                                                     {"hostIP", String()}});
    const GoType* env =
        Struct("v1.EnvVar", {{"name", String()},
                             {"value", String()},
                             {"valueFrom", Open("v1.EnvVarSource")}});
    const GoType* resources =
        Struct("v1.ResourceRequirements",
               {{"limits", Map(Quantity())},
                {"requests", Map(Quantity())},
                {"claims", Slice(Open("v1.ResourceClaim"))}});
    const GoType* mount =
        Struct("v1.VolumeMount", {{"name", String()},
                                  {"readOnly", Bool()},
                                  {"recursiveReadOnly", String()},
                                  {"mountPath", String()},
                                  {"subPath", String()},
                                  {"mountPropagation", String()},
                                  {"subPathExpr", String()}});
    return Struct("v1.Container",
                  {{"name", String()},
                   {"image", String()},
                   {"command", Strings()},
                   {"args", Strings()},
                   {"workingDir", String()},
                   {"ports", Slice(port)},
                   {"envFrom", Slice(Open("v1.EnvFromSource"))},
                   {"env", Slice(env)},
                   {"resources", resources},
                   {"resizePolicy", Slice(Open("v1.ContainerResizePolicy"))},
                   {"restartPolicy", String()},
                   {"volumeMounts", Slice(mount)},
                   {"volumeDevices", Slice(Open("v1.VolumeDevice"))},
                   {"livenessProbe", Open("v1.Probe")},
                   {"readinessProbe", Open("v1.Probe")},
                   {"startupProbe", Open("v1.Probe")},
                   {"lifecycle", Open("v1.Lifecycle")},
                   {"terminationMessagePath", String()},
                   {"terminationMessagePolicy", String()},
                   {"imagePullPolicy", String()},
                   {"securityContext", Open("v1.SecurityContext")},
                   {"stdin", Bool()},
                   {"stdinOnce", Bool()},
                   {"tty", Bool()}});
  }();
  return t;
}

// k8s.io/api/core/v1 PodSpec (1.32).
const GoType* PodSpec() {
  static const GoType* const t = [] {
    const GoType* toleration =
        Struct("v1.Toleration", {{"key", String()},
                                 {"operator", String()},
                                 {"value", String()},
                                 {"effect", String()},
                                 {"tolerationSeconds", Int64()}});
    const GoType* host_alias =
        Struct("v1.HostAlias", {{"ip", String()}, {"hostnames", Strings()}});
    const GoType* readiness_gate =
        Struct("v1.PodReadinessGate", {{"conditionType", String()}});
    const GoType* scheduling_gate =
        Struct("v1.PodSchedulingGate", {{"name", String()}});
    return Struct(
        "v1.PodSpec",
        {{"volumes", Slice(Open("v1.Volume"))},
         {"initContainers", Slice(Container())},
         {"containers", Slice(Container())},
         {"ephemeralContainers", Slice(Open("v1.EphemeralContainer"))},
         {"restartPolicy", String()},
         {"terminationGracePeriodSeconds", Int64()},
         {"activeDeadlineSeconds", Int64()},
         {"dnsPolicy", String()},
         {"nodeSelector", StringMap()},
         {"serviceAccountName", String()},
         {"serviceAccount", String()},
         {"automountServiceAccountToken", Bool()},
         {"nodeName", String()},
         {"hostNetwork", Bool()},
         {"hostPID", Bool()},
         {"hostIPC", Bool()},
         {"shareProcessNamespace", Bool()},
         {"securityContext", Open("v1.PodSecurityContext")},
         {"imagePullSecrets", Slice(LocalObjectReference())},
         {"hostname", String()},
         {"subdomain", String()},
         {"affinity", Open("v1.Affinity")},
         {"schedulerName", String()},
         {"tolerations", Slice(toleration)},
         {"hostAliases", Slice(host_alias)},
         {"priorityClassName", String()},
         {"priority", Int32()},
         {"dnsConfig", Open("v1.PodDNSConfig")},
         {"readinessGates", Slice(readiness_gate)},
         {"runtimeClassName", String()},
         {"enableServiceLinks", Bool()},
         {"preemptionPolicy", String()},
         {"overhead", Map(Quantity())},
         {"topologySpreadConstraints",
          Slice(Open("v1.TopologySpreadConstraint"))},
         {"setHostnameAsFQDN", Bool()},
         {"os", Open("v1.PodOS")},
         {"hostUsers", Bool()},
         {"schedulingGates", Slice(scheduling_gate)},
         {"resourceClaims", Slice(Open("v1.PodResourceClaim"))},
         {"resources", Open("v1.ResourceRequirements")}});
  }();
  return t;
}

const GoType* Pod() {
  static const GoType* const t =
      Struct("v1.Pod", {{"apiVersion", String()},
                        {"kind", String()},
                        {"metadata", ObjectMeta()},
                        {"spec", PodSpec()},
                        {"status", Open("v1.PodStatus")}});
  return t;
}

const GoType* PodTemplateSpec() {
  static const GoType* const t = Struct(
      "v1.PodTemplateSpec", {{"metadata", ObjectMeta()}, {"spec", PodSpec()}});
  return t;
}

const GoType* ReplicaSet() {
  static const GoType* const t = Struct(
      "v1.ReplicaSet",
      {{"apiVersion", String()},
       {"kind", String()},
       {"metadata", ObjectMeta()},
       {"spec", Struct("v1.ReplicaSetSpec", {{"replicas", Int32()},
                                             {"minReadySeconds", Int32()},
                                             {"selector", LabelSelector()},
                                             {"template", PodTemplateSpec()}})},
       {"status", Open("v1.ReplicaSetStatus")}});
  return t;
}

const GoType* Deployment() {
  static const GoType* const t = [] {
    const GoType* template_spec = PodTemplateSpec();
    const GoType* rolling = Struct(
        "v1.RollingUpdateDeployment",
        {{"maxUnavailable", IntOrString()}, {"maxSurge", IntOrString()}});
    const GoType* strategy =
        Struct("v1.DeploymentStrategy",
               {{"type", String()}, {"rollingUpdate", rolling}});
    const GoType* spec =
        Struct("v1.DeploymentSpec", {{"replicas", Int32()},
                                     {"selector", LabelSelector()},
                                     {"template", template_spec},
                                     {"strategy", strategy},
                                     {"minReadySeconds", Int32()},
                                     {"revisionHistoryLimit", Int32()},
                                     {"paused", Bool()},
                                     {"progressDeadlineSeconds", Int32()}});
    return Struct("v1.Deployment", {{"apiVersion", String()},
                                    {"kind", String()},
                                    {"metadata", ObjectMeta()},
                                    {"spec", spec},
                                    {"status", Open("v1.DeploymentStatus")}});
  }();
  return t;
}

const GoType* ConfigMap() {
  static const GoType* const t =
      Struct("v1.ConfigMap", {{"apiVersion", String()},
                              {"kind", String()},
                              {"metadata", ObjectMeta()},
                              {"immutable", Bool()},
                              {"data", StringMap()},
                              {"binaryData", Map(Bytes())}});
  return t;
}

const GoType* Secret() {
  static const GoType* const t =
      Struct("v1.Secret", {{"apiVersion", String()},
                           {"kind", String()},
                           {"metadata", ObjectMeta()},
                           {"immutable", Bool()},
                           {"data", Map(Bytes())},
                           {"stringData", StringMap()},
                           {"type", String()}});
  return t;
}

const GoType* Service() {
  static const GoType* const t = [] {
    const GoType* port =
        Struct("v1.ServicePort", {{"name", String()},
                                  {"protocol", String()},
                                  {"appProtocol", String()},
                                  {"port", Int32()},
                                  {"targetPort", IntOrString()},
                                  {"nodePort", Int32()}});
    const GoType* spec =
        Struct("v1.ServiceSpec",
               {{"ports", Slice(port)},
                {"selector", StringMap()},
                {"clusterIP", String()},
                {"clusterIPs", Strings()},
                {"type", String()},
                {"externalIPs", Strings()},
                {"sessionAffinity", String()},
                {"loadBalancerIP", String()},
                {"loadBalancerSourceRanges", Strings()},
                {"externalName", String()},
                {"externalTrafficPolicy", String()},
                {"healthCheckNodePort", Int32()},
                {"publishNotReadyAddresses", Bool()},
                {"sessionAffinityConfig", Open("v1.SessionAffinityConfig")},
                {"ipFamilies", Strings()},
                {"ipFamilyPolicy", String()},
                {"allocateLoadBalancerNodePorts", Bool()},
                {"loadBalancerClass", String()},
                {"internalTrafficPolicy", String()},
                {"trafficDistribution", String()}});
    return Struct("v1.Service", {{"apiVersion", String()},
                                 {"kind", String()},
                                 {"metadata", ObjectMeta()},
                                 {"spec", spec},
                                 {"status", Open("v1.ServiceStatus")}});
  }();
  return t;
}

const GoType* Namespace() {
  static const GoType* const t =
      Struct("v1.Namespace",
             {{"apiVersion", String()},
              {"kind", String()},
              {"metadata", ObjectMeta()},
              {"spec", Struct("v1.NamespaceSpec", {{"finalizers", Strings()}})},
              {"status", Open("v1.NamespaceStatus")}});
  return t;
}

const GoType* ServiceAccount() {
  static const GoType* const t = Struct(
      "v1.ServiceAccount", {{"apiVersion", String()},
                            {"kind", String()},
                            {"metadata", ObjectMeta()},
                            {"secrets", Slice(ObjectReference())},
                            {"imagePullSecrets", Slice(LocalObjectReference())},
                            {"automountServiceAccountToken", Bool()}});
  return t;
}

const GoType* Event() {
  static const GoType* const t =
      Struct("v1.Event",
             {{"apiVersion", String()},
              {"kind", String()},
              {"metadata", ObjectMeta()},
              {"involvedObject", ObjectReference()},
              {"reason", String()},
              {"message", String()},
              {"source", Struct("v1.EventSource",
                                {{"component", String()}, {"host", String()}})},
              {"firstTimestamp", Time()},
              {"lastTimestamp", Time()},
              {"count", Int32()},
              {"type", String()},
              {"eventTime", MicroTime()},
              {"series",
               Struct("v1.EventSeries",
                      {{"count", Int32()}, {"lastObservedTime", MicroTime()}})},
              {"action", String()},
              {"related", ObjectReference()},
              {"reportingComponent", String()},
              {"reportingInstance", String()}});
  return t;
}

const GoType* Lease() {
  static const GoType* const t = Struct(
      "v1.Lease",
      {{"apiVersion", String()},
       {"kind", String()},
       {"metadata", ObjectMeta()},
       {"spec", Struct("v1.LeaseSpec", {{"holderIdentity", String()},
                                        {"leaseDurationSeconds", Int32()},
                                        {"acquireTime", MicroTime()},
                                        {"renewTime", MicroTime()},
                                        {"leaseTransitions", Int32()},
                                        {"strategy", String()},
                                        {"preferredHolder", String()}})}});
  return t;
}

const GoType* PolicyRules() {
  static const GoType* const t =
      Slice(Struct("v1.PolicyRule", {{"verbs", Strings()},
                                     {"apiGroups", Strings()},
                                     {"resources", Strings()},
                                     {"resourceNames", Strings()},
                                     {"nonResourceURLs", Strings()}}));
  return t;
}

const GoType* Role() {
  static const GoType* const t = Struct("v1.Role", {{"apiVersion", String()},
                                                    {"kind", String()},
                                                    {"metadata", ObjectMeta()},
                                                    {"rules", PolicyRules()}});
  return t;
}

const GoType* ClusterRole() {
  static const GoType* const t =
      Struct("v1.ClusterRole",
             {{"apiVersion", String()},
              {"kind", String()},
              {"metadata", ObjectMeta()},
              {"rules", PolicyRules()},
              {"aggregationRule",
               Struct("v1.AggregationRule",
                      {{"clusterRoleSelectors", Slice(LabelSelector())}})}});
  return t;
}

const GoType* RoleBinding(const char* name) {
  return Struct(
      name,
      {{"apiVersion", String()},
       {"kind", String()},
       {"metadata", ObjectMeta()},
       {"subjects", Slice(Struct("v1.Subject", {{"kind", String()},
                                                {"apiGroup", String()},
                                                {"name", String()},
                                                {"namespace", String()}}))},
       {"roleRef", Struct("v1.RoleRef", {{"apiGroup", String()},
                                         {"kind", String()},
                                         {"name", String()}})}});
}

// ---- Decoding ----

std::string JsonKind(const Value& v) {
  if (v.IsString()) return "string";
  if (v.IsNumber()) return "number";
  if (v.IsBool()) return "bool";
  if (v.IsArray()) return "array";
  return "object";
}

// The number as it was most likely written: integers whole, other numbers
// in the shortest form that reads back the same.
std::string NumberText(const Value& v) {
  if (v.IsInt64()) return std::to_string(v.GetInt64());
  if (v.IsUint64()) return std::to_string(v.GetUint64());
  double d = v.GetDouble();
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  return buf;
}

// resource.ParseQuantity's checks, enough to refuse what it refuses.
const char* QuantityError(std::string_view s) {
  static constexpr char kFormat[] =
      "quantities must match the regular expression "
      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
  const absl::string_view trimmed =
      absl::StripAsciiWhitespace(absl::string_view(s.data(), s.size()));
  s = std::string_view(trimmed.data(), trimmed.size());
  if (s.empty()) return kFormat;
  size_t i = 0;
  if (s[i] == '+' || s[i] == '-') ++i;
  size_t digits_start = i;
  int dots = 0;
  while (i < s.size() && (absl::ascii_isdigit(s[i]) || s[i] == '.')) {
    if (s[i] == '.') ++dots;
    ++i;
  }
  if (i == digits_start) return kFormat;
  std::string_view suffix = s.substr(i);
  size_t j = 0;
  while (j < suffix.size() &&
         std::string_view("eEinumkKMGTP").find(suffix[j]) !=
             std::string_view::npos) {
    ++j;
  }
  if (j < suffix.size() && (suffix[j] == '+' || suffix[j] == '-')) ++j;
  while (j < suffix.size() && absl::ascii_isdigit(suffix[j])) ++j;
  if (j != suffix.size()) return kFormat;
  if (dots > 1 || (i - digits_start) == static_cast<size_t>(dots)) {
    return "unable to parse numeric part of quantity";
  }
  static constexpr std::string_view kSuffixes[] = {
      "",  "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n",
      "u", "m",  "k",  "M",  "G",  "T",  "P",  "E"};
  for (std::string_view known : kSuffixes) {
    if (suffix == known) return nullptr;
  }
  // A decimal exponent: e or E, an optional sign, digits.
  if (suffix.size() >= 2 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    size_t k = 1;
    if (suffix[k] == '+' || suffix[k] == '-') ++k;
    if (k < suffix.size()) {
      bool all_digits = true;
      for (size_t m = k; m < suffix.size(); ++m) {
        all_digits = all_digits && absl::ascii_isdigit(suffix[m]);
      }
      if (all_digits) return nullptr;
    }
  }
  return "unable to parse quantity's suffix";
}

std::string Unqualified(const std::string& name) {
  size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

// Where a Decoder is in the document: a link to the caller's Step, so
// that the walk allocates nothing; the strings Go's errors name are built
// only when there is an error or an unknown field to report.
struct Step {
  enum class Kind { kRoot, kField, kMapKey, kIndex };
  const Step* parent = nullptr;
  Kind kind = Kind::kRoot;
  // kField, kMapKey: the member's name.
  std::string_view key;
  // kIndex: the element's index.
  rapidjson::SizeType index = 0;
  // kField: the struct the field belongs to.
  const GoType* in_struct = nullptr;
};

// The strict decoder's path: dotted member names, [i] for list elements.
std::string PathOf(const Step& at) {
  std::vector<const Step*> steps;
  for (const Step* s = &at; s != nullptr; s = s->parent) steps.push_back(s);
  std::string path;
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    const Step& s = **it;
    switch (s.kind) {
      case Step::Kind::kRoot:
        break;
      case Step::Kind::kField:
      case Step::Kind::kMapKey:
        path = path.empty() ? std::string(s.key) : Cat(path, ".", s.key);
        break;
      case Step::Kind::kIndex:
        path = Cat(path, "[", static_cast<int>(s.index), "]");
        break;
    }
  }
  return path;
}

// Go's error context: the innermost struct, and the dotted field names
// from the root (no list indexes, no map keys).
std::string GoStructOf(const Step& at) {
  for (const Step* s = &at; s != nullptr; s = s->parent) {
    if (s->kind == Step::Kind::kField) return Unqualified(s->in_struct->name);
  }
  return "";
}

std::string GoFieldOf(const Step& at) {
  std::vector<std::string_view> keys;
  for (const Step* s = &at; s != nullptr; s = s->parent) {
    if (s->kind == Step::Kind::kField) keys.push_back(s->key);
  }
  std::string field;
  for (auto it = keys.rbegin(); it != keys.rend(); ++it) {
    field = field.empty() ? std::string(*it) : Cat(field, ".", *it);
  }
  return field;
}

class Decoder {
 public:
  Decoder(bool patch, DecodeReport* report) : patch_(patch), report_(report) {}

  void Walk(const GoType& t, const Value& v, const Step& at) {
    if (v.IsNull()) return;
    switch (t.kind) {
      case Kind::kString:
        if (!v.IsString()) TypeError(JsonKind(v), at, t);
        return;
      case Kind::kBool:
        if (!v.IsBool()) TypeError(JsonKind(v), at, t);
        return;
      case Kind::kInt32:
      case Kind::kInt64:
        if (!v.IsNumber()) {
          TypeError(JsonKind(v), at, t);
        } else if (!FitsInt(v, t.kind == Kind::kInt32)) {
          TypeError(Cat("number ", NumberText(v)), at, t);
        }
        return;
      case Kind::kFloat64:
        if (!v.IsNumber()) TypeError(JsonKind(v), at, t);
        return;
      case Kind::kBytes: {
        if (!v.IsString()) {
          TypeError(JsonKind(v), at, t);
          return;
        }
        int64_t bad = 0;
        if (DecodeBase64Length(
                std::string_view(v.GetString(), v.GetStringLength()), &bad) <
            0) {
          Fail(Cat("illegal base64 data at input byte ", bad));
        }
        return;
      }
      case Kind::kQuantity: {
        if (v.IsNumber()) {
          if (const char* e = QuantityError(NumberText(v))) Fail(e);
        } else if (v.IsString()) {
          if (const char* e = QuantityError(
                  std::string_view(v.GetString(), v.GetStringLength()))) {
            Fail(e);
          }
        } else {
          Fail(QuantityError(""));
        }
        return;
      }
      case Kind::kIntOrString:
        if (v.IsString()) return;
        if (!v.IsNumber()) {
          Fail(Cat("json: cannot unmarshal ", JsonKind(v),
                   " into Go value of type int32"));
        } else if (!FitsInt(v, true)) {
          Fail(Cat("json: cannot unmarshal number ", NumberText(v),
                   " into Go value of type int32"));
        }
        return;
      case Kind::kTime:
        if (!v.IsString()) {
          Fail(Cat("json: cannot unmarshal ", JsonKind(v),
                   " into Go value of type string"));
        }
        return;
      case Kind::kAny:
        return;
      case Kind::kStruct: {
        if (!v.IsObject()) {
          TypeError(JsonKind(v), at, t);
          return;
        }
        if (t.open) return;
        for (const auto& m : v.GetObject()) {
          const std::string_view key(m.name.GetString(),
                                     m.name.GetStringLength());
          if (patch_ && !key.empty() && key[0] == '$') continue;
          const Step member{&at, Step::Kind::kField, key, 0, &t};
          const GoType* field = t.Field(key);
          if (field == nullptr) {
            report_->unknown_fields.push_back(PathOf(member));
            continue;
          }
          Walk(*field, m.value, member);
        }
        return;
      }
      case Kind::kMap:
        if (!v.IsObject()) {
          TypeError(JsonKind(v), at, t);
          return;
        }
        for (const auto& m : v.GetObject()) {
          const std::string_view key(m.name.GetString(),
                                     m.name.GetStringLength());
          if (patch_ && !key.empty() && key[0] == '$') continue;
          Walk(*t.elem, m.value, Step{&at, Step::Kind::kMapKey, key});
        }
        return;
      case Kind::kSlice:
        if (!v.IsArray()) {
          TypeError(JsonKind(v), at, t);
          return;
        }
        for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
          Walk(*t.elem, v[i], Step{&at, Step::Kind::kIndex, {}, i});
        }
        return;
    }
  }

 private:
  static bool FitsInt(const Value& v, bool int32) {
    if (!v.IsInt64()) return false;
    if (!int32) return true;
    int64_t n = v.GetInt64();
    return n >= std::numeric_limits<int32_t>::min() &&
           n <= std::numeric_limits<int32_t>::max();
  }

  void TypeError(const std::string& value, const Step& at, const GoType& t) {
    if (!report_->error.empty()) return;  // only the first is kept
    const std::string go_struct = GoStructOf(at);
    if (go_struct.empty()) {
      Fail(Cat("json: cannot unmarshal ", value, " into Go value of type ",
               t.name));
    } else {
      Fail(Cat("json: cannot unmarshal ", value, " into Go struct field ",
               go_struct, ".", GoFieldOf(at), " of type ", t.name));
    }
  }

  // Go's decoder keeps the first error it meets.
  void Fail(std::string message) {
    if (report_->error.empty()) report_->error = std::move(message);
  }

  const bool patch_;
  DecodeReport* const report_;
};

void Drop(const GoType& t, Value* v) {
  switch (t.kind) {
    case Kind::kStruct:
      if (!v->IsObject() || t.open) return;
      for (auto it = v->MemberBegin(); it != v->MemberEnd();) {
        const GoType* field = t.Field(
            std::string_view(it->name.GetString(), it->name.GetStringLength()));
        if (field == nullptr) {
          it = v->EraseMember(it);
        } else {
          Drop(*field, &it->value);
          ++it;
        }
      }
      return;
    case Kind::kMap:
      if (!v->IsObject()) return;
      for (auto& m : v->GetObject()) Drop(*t.elem, &m.value);
      return;
    case Kind::kSlice:
      if (!v->IsArray()) return;
      for (auto& e : v->GetArray()) Drop(*t.elem, &e);
      return;
    default:
      return;
  }
}

bool IsBase64Char(char c) {
  return absl::ascii_isalnum(c) || c == '+' || c == '/';
}

}  // namespace

const GoType* GoType::Field(std::string_view json_name) const {
  for (const auto& [name, type] : fields) {
    if (name == json_name) return type;
  }
  return nullptr;
}

const GoType* BuiltinKindType(std::string_view group, std::string_view kind) {
  if (group.empty()) {
    if (kind == "ConfigMap") return ConfigMap();
    if (kind == "Secret") return Secret();
    if (kind == "Pod") return Pod();
    if (kind == "Service") return Service();
    if (kind == "Namespace") return Namespace();
    if (kind == "ServiceAccount") return ServiceAccount();
    if (kind == "Event") return Event();
    return nullptr;
  }
  if (group == "apps" && kind == "Deployment") return Deployment();
  if (group == "apps" && kind == "ReplicaSet") return ReplicaSet();
  if (group == "coordination.k8s.io" && kind == "Lease") return Lease();
  if (group == "rbac.authorization.k8s.io") {
    if (kind == "Role") return Role();
    if (kind == "ClusterRole") return ClusterRole();
    static const GoType* const role_binding = RoleBinding("v1.RoleBinding");
    static const GoType* const cluster_role_binding =
        RoleBinding("v1.ClusterRoleBinding");
    if (kind == "RoleBinding") return role_binding;
    if (kind == "ClusterRoleBinding") return cluster_role_binding;
  }
  return nullptr;
}

DecodeReport CheckDecode(const GoType& type, const Value& value, bool patch) {
  DecodeReport report;
  Decoder(patch, &report).Walk(type, value, Step());
  return report;
}

void DropUnknownFields(const GoType& type, Value* value) { Drop(type, value); }

int64_t DecodeBase64Length(std::string_view s, int64_t* bad_offset) {
  // Go's decodeQuantum, quantum after quantum: '\r' and '\n' are skipped,
  // padding is required, and nothing but newlines may follow it.
  const int64_t len = static_cast<int64_t>(s.size());
  auto skip_newlines = [&](int64_t si) {
    while (si < len && (s[si] == '\n' || s[si] == '\r')) ++si;
    return si;
  };
  int64_t si = 0, n = 0;
  while (si < len) {
    int dlen = 4;
    for (int j = 0; j < 4; ++j) {
      if (si == len) {
        if (j == 0) return n;
        *bad_offset = si - j;
        return -1;
      }
      const char in = s[si++];
      if (IsBase64Char(in)) continue;
      if (in == '\n' || in == '\r') {
        --j;
        continue;
      }
      if (in != '=' || j < 2) {
        *bad_offset = si - 1;
        return -1;
      }
      if (j == 2) {
        si = skip_newlines(si);
        if (si == len) {
          *bad_offset = len;
          return -1;
        }
        if (s[si] != '=') {
          *bad_offset = si - 1;
          return -1;
        }
        ++si;
      }
      si = skip_newlines(si);
      if (si < len) {
        *bad_offset = si;
        return -1;
      }
      dlen = j;
      break;
    }
    n += dlen - 1;
  }
  return n;
}

}  // namespace apiserver
}  // namespace kcr
