#include "apiserver/registry/builtin_validation.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "absl/strings/str_join.h"
#include "api/json/json_util.h"
#include "api/selector/label_selector.h"
#include "apiserver/internal/object_fields.h"
#include "apiserver/registry/builtin_schema.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace {

using api::FieldError;
using rapidjson::Value;

constexpr char kImmutableWhenSet[] =
    "field is immutable when `immutable` is set";

const Value* Get(const Value* v, const char* key) {
  if (v == nullptr || !v->IsObject()) return nullptr;
  const Value* m = Member(*v, key);
  return m == nullptr || m->IsNull() ? nullptr : m;
}

std::string_view Str(const Value* v) {
  if (v == nullptr || !v->IsString()) return {};
  return std::string_view(v->GetString(), v->GetStringLength());
}

bool True(const Value* v) {
  return v != nullptr && v->IsBool() && v->GetBool();
}

std::string Key(const rapidjson::Value::ConstMemberIterator& m) {
  return std::string(m->name.GetString(), m->name.GetStringLength());
}

// Equal as the decoded Go values: null and absent are both nil.
bool SameField(const Value* a, const Value* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return json::JsonDeepEqual(*a, *b);
}

// Go's %#v of a map[string]string: keys sorted, nil when absent.
std::string GoStringMap(const Value* map) {
  if (map == nullptr || !map->IsObject()) return "map[string]string(nil)";
  std::map<std::string, std::string> sorted;
  for (auto m = map->MemberBegin(); m != map->MemberEnd(); ++m) {
    sorted[Key(m)] = std::string(Str(&m->value));
  }
  std::vector<std::string> parts;
  for (const auto& [k, v] : sorted)
    parts.push_back(Cat(Quote(k), ":", Quote(v)));
  return Cat("map[string]string{", absl::StrJoin(parts, ", "), "}");
}

// Go's %#v of a []string.
std::string GoStrings(const Value* list) {
  if (list == nullptr || !list->IsArray()) return "[]string(nil)";
  std::vector<std::string> parts;
  for (const Value& v : list->GetArray()) parts.push_back(Quote(Str(&v)));
  return Cat("[]string{", absl::StrJoin(parts, ", "), "}");
}

// Go's %#v of a metav1.LabelSelector.
std::string GoLabelSelector(const Value* selector) {
  std::string expressions = "[]v1.LabelSelectorRequirement(nil)";
  const Value* exprs = Get(selector, "matchExpressions");
  if (exprs != nullptr && exprs->IsArray()) {
    std::vector<std::string> parts;
    for (const Value& e : exprs->GetArray()) {
      parts.push_back(
          Cat("v1.LabelSelectorRequirement{Key:", Quote(Str(Get(&e, "key"))),
              ", Operator:", Quote(Str(Get(&e, "operator"))),
              ", Values:", GoStrings(Get(&e, "values")), "}"));
    }
    expressions =
        Cat("[]v1.LabelSelectorRequirement{", absl::StrJoin(parts, ", "), "}");
  }
  return Cat("v1.LabelSelector{MatchLabels:",
             GoStringMap(Get(selector, "matchLabels")),
             ", MatchExpressions:", expressions, "}");
}

std::string NumberText(const Value& v) {
  if (v.IsInt64()) return std::to_string(v.GetInt64());
  auto text = json::JsonToString(v);
  return text.ok() ? *text : "0";
}

bool IsConfigKeyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

// validation.IsConfigMapKey.
void ValidateConfigKey(const std::string& field, std::string_view key,
                       std::vector<FieldError>* errors) {
  auto invalid = [&](const char* msg) {
    errors->push_back(
        FieldErr(FieldError::Type::kInvalid, field, Quote(key), msg));
  };
  if (key.size() > 253) invalid("must be no more than 253 characters");
  if (key.empty() || !std::all_of(key.begin(), key.end(), IsConfigKeyChar)) {
    invalid(
        "a valid config key must consist of alphanumeric characters, '-', "
        "'_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex "
        "used for validation is '[-._a-zA-Z0-9]+')");
  }
  if (key == ".") {
    invalid("must not be '.'");
  } else if (key == "..") {
    invalid("must not be '..'");
  } else if (key.substr(0, 2) == "..") {
    invalid("must not start with '..'");
  }
}

// The decoded length of a []byte field's base64 text.
size_t DecodedLength(const Value& v) {
  int64_t bad = 0;
  int64_t n = DecodeBase64Length(Str(&v), &bad);
  return n < 0 ? Str(&v).size() : static_cast<size_t>(n);
}

std::string TooLongDetail() {
  return Cat("must have at most ", static_cast<int64_t>(kMaxConfigMapDataBytes),
             " bytes");
}

bool IsDns1123Label(std::string_view s) {
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  };
  if (s.empty() || s.size() > 63 || !alnum(s.front()) || !alnum(s.back())) {
    return false;
  }
  return std::all_of(s.begin(), s.end(),
                     [&](char c) { return alnum(c) || c == '-'; });
}

void ValidateDns1123Label(const std::string& field, std::string_view value,
                          std::vector<FieldError>* errors) {
  if (value.size() > 63) {
    errors->push_back(FieldErr(FieldError::Type::kInvalid, field, Quote(value),
                               "must be no more than 63 characters"));
  } else if (!IsDns1123Label(value)) {
    errors->push_back(FieldErr(
        FieldError::Type::kInvalid, field, Quote(value),
        "a lowercase RFC 1123 label must consist of lower case alphanumeric "
        "characters or '-', and must start and end with an alphanumeric "
        "character (e.g. 'my-name',  or '123-abc', regex used for validation "
        "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"));
  }
}

std::string Supported(std::initializer_list<const char*> values) {
  std::vector<std::string> quoted;
  for (const char* v : values) quoted.push_back(Quote(v));
  return Cat("supported values: ", absl::StrJoin(quoted, ", "));
}

void ValidatePortNumber(const std::string& field, const Value* port,
                        std::vector<FieldError>* errors) {
  int64_t n = port != nullptr && port->IsInt64() ? port->GetInt64() : 0;
  if (n < 1 || n > 65535) {
    errors->push_back(FieldErr(FieldError::Type::kInvalid, field,
                               std::to_string(n),
                               "must be between 1 and 65535, inclusive"));
  }
}

void ValidateProtocol(const std::string& field, const Value* protocol,
                      std::vector<FieldError>* errors) {
  std::string_view p = Str(protocol);
  if (protocol != nullptr && p != "TCP" && p != "UDP" && p != "SCTP") {
    errors->push_back(FieldErr(FieldError::Type::kNotSupported, field, Quote(p),
                               Supported({"SCTP", "TCP", "UDP"})));
  }
}

// validateContainers / validateInitContainers: the checks every container
// gets (validateContainerCommon).
void ValidateContainers(const Value* containers, const std::string& path,
                        bool required, std::set<std::string>* names,
                        std::vector<FieldError>* errors) {
  if (containers == nullptr || !containers->IsArray() || containers->Empty()) {
    if (required) {
      errors->push_back(FieldErr(FieldError::Type::kRequired, path, "", ""));
    }
    return;
  }
  for (rapidjson::SizeType i = 0; i < containers->Size(); ++i) {
    const Value& c = (*containers)[i];
    const std::string at = Cat(path, "[", static_cast<int>(i), "]");
    std::string_view name = Str(Get(&c, "name"));
    if (name.empty()) {
      errors->push_back(
          FieldErr(FieldError::Type::kRequired, at + ".name", "", ""));
    } else {
      ValidateDns1123Label(at + ".name", name, errors);
    }
    if (Str(Get(&c, "image")).empty()) {
      errors->push_back(
          FieldErr(FieldError::Type::kRequired, at + ".image", "", ""));
    }
    const Value* ports = Get(&c, "ports");
    if (ports != nullptr && ports->IsArray()) {
      for (rapidjson::SizeType j = 0; j < ports->Size(); ++j) {
        const Value& p = (*ports)[j];
        const std::string pat = Cat(at, ".ports[", static_cast<int>(j), "]");
        std::string_view port_name = Str(Get(&p, "name"));
        if (!port_name.empty() && port_name.size() > 15) {
          errors->push_back(FieldErr(FieldError::Type::kInvalid, pat + ".name",
                                     Quote(port_name),
                                     "must be no more than 15 characters"));
        }
        const Value* container_port = Get(&p, "containerPort");
        if (container_port == nullptr ||
            (container_port->IsInt64() && container_port->GetInt64() == 0)) {
          errors->push_back(FieldErr(FieldError::Type::kRequired,
                                     pat + ".containerPort", "", ""));
        } else {
          ValidatePortNumber(pat + ".containerPort", container_port, errors);
        }
        const Value* host_port = Get(&p, "hostPort");
        if (host_port != nullptr && host_port->IsInt64() &&
            host_port->GetInt64() != 0) {
          ValidatePortNumber(pat + ".hostPort", host_port, errors);
        }
        ValidateProtocol(pat + ".protocol", Get(&p, "protocol"), errors);
      }
    }
    if (!name.empty()) {
      if (!names->insert(std::string(name)).second) {
        errors->push_back(FieldErr(FieldError::Type::kDuplicate, at + ".name",
                                   Quote(name), ""));
      }
    }
  }
}

// Every field of a pod spec that differs, one line each, for the
// Forbidden message (kube-apiserver prints a cmp.Diff here).
std::string SpecDiff(const Value& old_spec, const Value& new_spec) {
  std::set<std::string> keys;
  for (const Value* spec : {&old_spec, &new_spec}) {
    if (!spec->IsObject()) continue;
    for (auto m = spec->MemberBegin(); m != spec->MemberEnd(); ++m) {
      keys.insert(Key(m));
    }
  }
  std::string out = "  core.PodSpec{\n";
  for (const std::string& k : keys) {
    const Value* a = Get(&old_spec, k.c_str());
    const Value* b = Get(&new_spec, k.c_str());
    if (SameField(a, b)) continue;
    auto text = [](const Value* v) -> std::string {
      if (v == nullptr) return "nil";
      auto s = json::JsonToString(*v);
      return s.ok() ? *s : "?";
    };
    CatAppend(&out, "- \t", k, ": ", text(a), ",\n");
    CatAppend(&out, "+ \t", k, ": ", text(b), ",\n");
  }
  out += "  }\n";
  return out;
}

}  // namespace

void ValidateConfigMap(const Value& cm, std::vector<FieldError>* errors) {
  const Value* data = Get(&cm, "data");
  const Value* binary = Get(&cm, "binaryData");
  size_t total = 0;
  for (const auto& [bag, other, other_name] :
       {std::make_tuple(data, binary, "binaryData"),
        std::make_tuple(binary, data, "data")}) {
    if (bag == nullptr || !bag->IsObject()) continue;
    const char* bag_name = bag == data ? "data" : "binaryData";
    for (auto m = bag->MemberBegin(); m != bag->MemberEnd(); ++m) {
      const std::string key = Key(m);
      const std::string field = Cat(bag_name, "[", key, "]");
      ValidateConfigKey(field, key, errors);
      if (other != nullptr && other->IsObject() &&
          Member(*other, key.c_str()) != nullptr) {
        errors->push_back(
            FieldErr(FieldError::Type::kInvalid, field, Quote(key),
                     Cat("duplicate of key present in ", other_name)));
      }
      total += bag == data ? Str(&m->value).size() : DecodedLength(m->value);
    }
  }
  if (total > kMaxConfigMapDataBytes) {
    // Field "" (the whole object) prints as "[]", as kube's field.Path does.
    errors->push_back(
        FieldErr(FieldError::Type::kTooLong, "[]", "", TooLongDetail()));
  }
}

void ValidateConfigMapUpdate(const Value& live, const Value& cm,
                             std::vector<FieldError>* errors) {
  if (!True(Get(&live, "immutable"))) return;
  if (!True(Get(&cm, "immutable"))) {
    errors->push_back(FieldErr(FieldError::Type::kForbidden, "immutable", "",
                               kImmutableWhenSet));
  }
  for (const char* field : {"data", "binaryData"}) {
    if (!SameField(Get(&live, field), Get(&cm, field))) {
      errors->push_back(
          FieldErr(FieldError::Type::kForbidden, field, "", kImmutableWhenSet));
    }
  }
}

void ValidateSecret(const Value& secret, std::vector<FieldError>* errors) {
  const Value* data = Get(&secret, "data");
  size_t total = 0;
  if (data != nullptr && data->IsObject()) {
    for (auto m = data->MemberBegin(); m != data->MemberEnd(); ++m) {
      const std::string key = Key(m);
      ValidateConfigKey(Cat("data[", key, "]"), key, errors);
      total += DecodedLength(m->value);
    }
  }
  if (total > kMaxConfigMapDataBytes) {
    errors->push_back(
        FieldErr(FieldError::Type::kTooLong, "data", "", TooLongDetail()));
  }
  auto require_key = [&](const char* key) {
    if (data == nullptr || !data->IsObject() || Member(*data, key) == nullptr) {
      errors->push_back(FieldErr(FieldError::Type::kRequired,
                                 Cat("data[", key, "]"), "", ""));
    }
  };
  std::string_view type = Str(Get(&secret, "type"));
  if (type == "kubernetes.io/tls") {
    require_key("tls.crt");
    require_key("tls.key");
  } else if (type == "kubernetes.io/ssh-auth") {
    require_key("ssh-privatekey");
  } else if (type == "kubernetes.io/dockerconfigjson") {
    require_key(".dockerconfigjson");
  } else if (type == "kubernetes.io/dockercfg") {
    require_key(".dockercfg");
  } else if (type == "kubernetes.io/service-account-token") {
    const Value* annotations = Get(Get(&secret, "metadata"), "annotations");
    if (Str(Get(annotations, "kubernetes.io/service-account.name")).empty()) {
      errors->push_back(FieldErr(
          FieldError::Type::kRequired,
          "metadata.annotations[kubernetes.io/service-account.name]", "", ""));
    }
  }
}

void ValidateSecretUpdate(const Value& live, const Value& secret,
                          std::vector<FieldError>* errors) {
  std::string_view old_type = Str(Get(&live, "type"));
  std::string_view new_type = Str(Get(&secret, "type"));
  if (old_type != new_type) {
    errors->push_back(FieldErr(FieldError::Type::kInvalid, "type",
                               Quote(new_type), "field is immutable"));
  }
  if (!True(Get(&live, "immutable"))) return;
  if (!True(Get(&secret, "immutable"))) {
    errors->push_back(FieldErr(FieldError::Type::kForbidden, "immutable", "",
                               kImmutableWhenSet));
  }
  if (!SameField(Get(&live, "data"), Get(&secret, "data"))) {
    errors->push_back(
        FieldErr(FieldError::Type::kForbidden, "data", "", kImmutableWhenSet));
  }
}

void ValidatePodSpec(const Value* spec, const std::string& path,
                     std::vector<FieldError>* errors) {
  std::set<std::string> names;
  ValidateContainers(Get(spec, "containers"), path + ".containers", true,
                     &names, errors);
  ValidateContainers(Get(spec, "initContainers"), path + ".initContainers",
                     false, &names, errors);
  const Value* restart = Get(spec, "restartPolicy");
  std::string_view policy = Str(restart);
  // Absent only where defaulting did not run (no spec at all).
  if (restart != nullptr && policy.empty()) {
    errors->push_back(
        FieldErr(FieldError::Type::kRequired, path + ".restartPolicy", "", ""));
  } else if (restart != nullptr && policy != "Always" &&
             policy != "OnFailure" && policy != "Never") {
    errors->push_back(FieldErr(FieldError::Type::kNotSupported,
                               path + ".restartPolicy", Quote(policy),
                               Supported({"Always", "OnFailure", "Never"})));
  }
  const Value* dns = Get(spec, "dnsPolicy");
  std::string_view dns_policy = Str(dns);
  if (dns != nullptr && dns_policy != "ClusterFirstWithHostNet" &&
      dns_policy != "ClusterFirst" && dns_policy != "Default" &&
      dns_policy != "None") {
    errors->push_back(FieldErr(FieldError::Type::kNotSupported,
                               path + ".dnsPolicy", Quote(dns_policy),
                               Supported({"ClusterFirstWithHostNet",
                                          "ClusterFirst", "Default", "None"})));
  }
  const Value* grace = Get(spec, "activeDeadlineSeconds");
  if (grace != nullptr && grace->IsInt64() &&
      (grace->GetInt64() < 1 || grace->GetInt64() > 2147483647)) {
    errors->push_back(FieldErr(
        FieldError::Type::kInvalid, path + ".activeDeadlineSeconds",
        NumberText(*grace), "must be between 1 and 2147483647, inclusive"));
  }
}

void ValidatePodUpdate(const Value& live, const Value& pod,
                       std::vector<FieldError>* errors) {
  const Value* old_spec = Get(&live, "spec");
  const Value* new_spec = Get(&pod, "spec");
  ValidatePodSpec(new_spec, "spec", errors);
  if (old_spec == nullptr || new_spec == nullptr) return;
  for (const char* list : {"containers", "initContainers"}) {
    const Value* a = Get(old_spec, list);
    const Value* b = Get(new_spec, list);
    size_t na = a != nullptr && a->IsArray() ? a->Size() : 0;
    size_t nb = b != nullptr && b->IsArray() ? b->Size() : 0;
    if (na != nb) {
      errors->push_back(
          FieldErr(FieldError::Type::kForbidden, Cat("spec.", list), "",
                   "pod updates may not add or remove containers"));
      return;
    }
  }
  const Value* new_deadline = Get(new_spec, "activeDeadlineSeconds");
  const Value* old_deadline = Get(old_spec, "activeDeadlineSeconds");
  if (new_deadline != nullptr && old_deadline != nullptr &&
      new_deadline->IsInt64() && old_deadline->IsInt64() &&
      old_deadline->GetInt64() < new_deadline->GetInt64()) {
    errors->push_back(FieldErr(FieldError::Type::kInvalid,
                               "spec.activeDeadlineSeconds",
                               NumberText(*new_deadline),
                               "must be less than or equal to previous value"));
    return;
  }
  if (new_deadline == nullptr && old_deadline != nullptr) {
    errors->push_back(FieldErr(FieldError::Type::kInvalid,
                               "spec.activeDeadlineSeconds", "null",
                               "must not update from a positive integer to "
                               "nil value"));
  }
  // The new spec with everything an update may change taken from the old
  // one must equal the old spec.
  rapidjson::Document munged;
  munged.CopyFrom(*new_spec, munged.GetAllocator());
  auto& a = munged.GetAllocator();
  auto take_old = [&](const char* key) {
    munged.RemoveMember(key);
    const Value* v = Get(old_spec, key);
    if (v != nullptr) munged.AddMember(Value(key, a), Value(*v, a), a);
  };
  for (const char* list : {"containers", "initContainers"}) {
    Value* mine = munged.HasMember(list) ? &munged[list] : nullptr;
    const Value* theirs = Get(old_spec, list);
    if (mine == nullptr || !mine->IsArray() || theirs == nullptr) continue;
    for (rapidjson::SizeType i = 0; i < mine->Size(); ++i) {
      Value& c = (*mine)[i];
      if (!c.IsObject()) continue;
      c.RemoveMember("image");
      const Value* image = Get(&(*theirs)[i], "image");
      if (image != nullptr) c.AddMember("image", Value(*image, a), a);
    }
  }
  take_old("activeDeadlineSeconds");
  take_old("tolerations");
  take_old("schedulingGates");
  const Value* old_grace = Get(old_spec, "terminationGracePeriodSeconds");
  const Value* new_grace = Get(new_spec, "terminationGracePeriodSeconds");
  if (old_grace != nullptr && old_grace->IsInt64() &&
      old_grace->GetInt64() < 0 && new_grace != nullptr &&
      new_grace->IsInt64() && new_grace->GetInt64() == 1) {
    take_old("terminationGracePeriodSeconds");
  }
  if (Str(Get(old_spec, "nodeName")).empty()) take_old("nodeName");
  if (!json::JsonDeepEqual(munged, *old_spec)) {
    errors->push_back(FieldErr(
        FieldError::Type::kForbidden, "spec", "",
        Cat("pod updates may not change fields other than "
            "`spec.containers[*].image`,`spec.initContainers[*].image`,"
            "`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
            "additions to existing tolerations),"
            "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 "
            "if it was previously negative)\n",
            SpecDiff(*old_spec, munged))));
  }
}

namespace {

// What Deployments and ReplicaSets share: replicas, the selector and the
// pod template it must match (ValidatePodTemplateSpecForReplicaSet).
void ValidateReplicatedSpec(const Value* spec,
                            std::vector<FieldError>* errors) {
  const Value* replicas = Get(spec, "replicas");
  if (replicas != nullptr && replicas->IsInt64() && replicas->GetInt64() < 0) {
    errors->push_back(FieldErr(FieldError::Type::kInvalid, "spec.replicas",
                               NumberText(*replicas),
                               "must be greater than or equal to 0"));
  }
  const Value* selector = Get(spec, "selector");
  api::LabelSelector parsed = api::LabelSelector::Nothing();
  bool selector_ok = true;
  if (selector == nullptr) {
    errors->push_back(
        FieldErr(FieldError::Type::kRequired, "spec.selector", "", ""));
  } else {
    size_t terms = 0;
    for (const char* key : {"matchLabels", "matchExpressions"}) {
      const Value* v = Get(selector, key);
      if (v != nullptr && v->IsObject()) terms += v->MemberCount();
      if (v != nullptr && v->IsArray()) terms += v->Size();
    }
    auto s = api::LabelSelector::FromLabelSelector(*selector);
    if (!s.ok()) {
      errors->push_back(FieldErr(FieldError::Type::kInvalid, "spec.selector",
                                 GoLabelSelector(selector),
                                 std::string(s.status().message())));
      selector_ok = false;
    } else {
      parsed = *s;
    }
    if (terms == 0) {
      errors->push_back(FieldErr(FieldError::Type::kInvalid, "spec.selector",
                                 GoLabelSelector(selector),
                                 "empty selector is invalid for deployment"));
    }
  }
  const Value* tmpl = Get(spec, "template");
  if (selector_ok) {
    const Value* labels = Get(Get(tmpl, "metadata"), "labels");
    if (!parsed.Empty() && !parsed.Matches(labels)) {
      errors->push_back(FieldErr(
          FieldError::Type::kInvalid, "spec.template.metadata.labels",
          GoStringMap(labels), "`selector` does not match template `labels`"));
    }
    const Value* pod_spec = Get(tmpl, "spec");
    ValidatePodSpec(pod_spec, "spec.template.spec", errors);
    std::string_view restart = Str(Get(pod_spec, "restartPolicy"));
    if (!restart.empty() && restart != "Always") {
      errors->push_back(FieldErr(FieldError::Type::kNotSupported,
                                 "spec.template.spec.restartPolicy",
                                 Quote(restart), Supported({"Always"})));
    }
    if (Get(pod_spec, "activeDeadlineSeconds") != nullptr) {
      errors->push_back(
          FieldErr(FieldError::Type::kInvalid,
                   "spec.template.spec.activeDeadlineSeconds",
                   NumberText(*Get(pod_spec, "activeDeadlineSeconds")),
                   "activeDeadlineSeconds in ReplicaSet is not Supported"));
    }
  }
}

// spec.selector never changes (apps/v1).
void ValidateSelectorUnchanged(const Value& live, const Value& object,
                               std::vector<FieldError>* errors) {
  const Value* old_selector = Get(Get(&live, "spec"), "selector");
  const Value* new_selector = Get(Get(&object, "spec"), "selector");
  // Semantic equality: an empty map or list is nil.
  auto normalized = [](const Value* selector, const char* key) -> const Value* {
    const Value* v = Get(selector, key);
    if (v == nullptr) return nullptr;
    if ((v->IsObject() && v->MemberCount() == 0) ||
        (v->IsArray() && v->Empty())) {
      return nullptr;
    }
    return v;
  };
  bool same = (old_selector == nullptr) == (new_selector == nullptr);
  for (const char* key : {"matchLabels", "matchExpressions"}) {
    same = same && SameField(normalized(old_selector, key),
                             normalized(new_selector, key));
  }
  if (!same) {
    errors->push_back(FieldErr(
        FieldError::Type::kInvalid, "spec.selector",
        new_selector == nullptr ? "null" : GoLabelSelector(new_selector),
        "field is immutable"));
  }
}

}  // namespace

void ValidateDeployment(const Value& d, std::vector<FieldError>* errors) {
  const Value* spec = Get(&d, "spec");
  ValidateReplicatedSpec(spec, errors);
  const Value* strategy = Get(spec, "strategy");
  std::string_view type = Str(Get(strategy, "type"));
  if (strategy != nullptr && type != "Recreate" && type != "RollingUpdate") {
    errors->push_back(FieldErr(FieldError::Type::kNotSupported,
                               "spec.strategy.type", Quote(type),
                               Supported({"Recreate", "RollingUpdate"})));
  }
  if (type == "Recreate" && Get(strategy, "rollingUpdate") != nullptr) {
    errors->push_back(FieldErr(FieldError::Type::kForbidden,
                               "spec.strategy.rollingUpdate", "",
                               "may not be specified when strategy `type` is "
                               "'Recreate'"));
  }
  for (const char* field :
       {"minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds"}) {
    const Value* v = Get(spec, field);
    if (v != nullptr && v->IsInt64() && v->GetInt64() < 0) {
      errors->push_back(FieldErr(FieldError::Type::kInvalid,
                                 Cat("spec.", field), NumberText(*v),
                                 "must be greater than or equal to 0"));
    }
  }
}

void ValidateDeploymentUpdate(const Value& live, const Value& d,
                              std::vector<FieldError>* errors) {
  ValidateDeployment(d, errors);
  ValidateSelectorUnchanged(live, d, errors);
}

void ValidateReplicaSet(const Value& rs, std::vector<FieldError>* errors) {
  const Value* spec = Get(&rs, "spec");
  ValidateReplicatedSpec(spec, errors);
  const Value* min_ready = Get(spec, "minReadySeconds");
  if (min_ready != nullptr && min_ready->IsInt64() &&
      min_ready->GetInt64() < 0) {
    errors->push_back(FieldErr(FieldError::Type::kInvalid,
                               "spec.minReadySeconds", NumberText(*min_ready),
                               "must be greater than or equal to 0"));
  }
}

void ValidateReplicaSetUpdate(const Value& live, const Value& rs,
                              std::vector<FieldError>* errors) {
  ValidateReplicaSet(rs, errors);
  ValidateSelectorUnchanged(live, rs, errors);
}

void ValidateService(const Value& service, std::vector<FieldError>* errors) {
  const Value* spec = Get(&service, "spec");
  const Value* ports = Get(spec, "ports");
  std::string_view type = Str(Get(spec, "type"));
  const bool headless = Str(Get(spec, "clusterIP")) == "None";
  const size_t count = ports != nullptr && ports->IsArray() ? ports->Size() : 0;
  if (count == 0 && !headless && type != "ExternalName") {
    errors->push_back(
        FieldErr(FieldError::Type::kRequired, "spec.ports", "", ""));
  }
  if (!type.empty() && type != "ClusterIP" && type != "NodePort" &&
      type != "LoadBalancer" && type != "ExternalName") {
    errors->push_back(FieldErr(
        FieldError::Type::kNotSupported, "spec.type", Quote(type),
        Supported({"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"})));
  }
  std::set<std::string> names;
  for (size_t i = 0; i < count; ++i) {
    const Value& p = (*ports)[static_cast<rapidjson::SizeType>(i)];
    const std::string at = Cat("spec.ports[", static_cast<int>(i), "]");
    std::string_view name = Str(Get(&p, "name"));
    if (count > 1 && name.empty()) {
      errors->push_back(
          FieldErr(FieldError::Type::kRequired, at + ".name", "", ""));
    } else if (!name.empty()) {
      ValidateDns1123Label(at + ".name", name, errors);
      if (!names.insert(std::string(name)).second) {
        errors->push_back(FieldErr(FieldError::Type::kDuplicate, at + ".name",
                                   Quote(name), ""));
      }
    }
    ValidatePortNumber(at + ".port", Get(&p, "port"), errors);
    ValidateProtocol(at + ".protocol", Get(&p, "protocol"), errors);
  }
}

}  // namespace apiserver
}  // namespace kcr
