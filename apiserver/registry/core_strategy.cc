#include "apiserver/registry/core_strategy.h"

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/json_pointer.h"
#include "api/object_builder.h"
#include "apiserver/internal/names.h"
#include "apiserver/internal/object_fields.h"
#include "apiserver/registry/builtin_validation.h"
#include "apiserver/registry/object_meta_validation.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace {

using rapidjson::Value;
using Allocator = rapidjson::MemoryPoolAllocator<>;

constexpr char kNamespaceNameLabel[] = "kubernetes.io/metadata.name";

// A JSON value's type as a Go decoder names it in its errors.
std::string JsonTypeName(const Value& v) {
  if (v.IsString()) return "\"string\"";
  if (v.IsNumber()) return "\"number\"";
  if (v.IsBool()) return "\"bool\"";
  if (v.IsArray()) return "\"array\"";
  if (v.IsObject()) return "\"object\"";
  return "\"null\"";
}

// Namespaces: named as DNS labels, labelled with their name, and deleted
// only once spec.finalizers (the namespace controller's) is empty.
class NamespaceStrategyImpl : public Strategy {
 public:
  void PrepareForCreate(const ResourceInfo&, api::ObjectBuilder* b,
                        const std::string&) const override {
    (void)b->SetJson("/spec/finalizers", R"(["kubernetes"])");
    (void)b->SetJson("/status", R"({"phase":"Active"})");
    std::string name = StringAt(*b, "/metadata/name");
    if (!name.empty()) b->SetLabel(kNamespaceNameLabel, name);
  }
  void NameGenerated(std::string_view name,
                     api::ObjectBuilder* b) const override {
    b->SetLabel(kNamespaceNameLabel, name);
  }
  // spec.finalizers changes only through the finalize subresource.
  void PrepareForUpdate(const Value& live,
                        api::ObjectBuilder* b) const override {
    const Value* spec = Member(live, "spec");
    const Value* f = spec == nullptr ? nullptr : Member(*spec, "finalizers");
    if (f == nullptr) {
      b->Remove("/spec/finalizers");
    } else {
      (void)b->Set("/spec/finalizers", *f);
    }
  }
  void ValidateName(std::string_view name,
                    std::vector<api::FieldError>* errors) const override {
    ValidateDns1123LabelName(name, errors);
  }
  bool WaitsForFinalize(const api::ObjectBuilder& b) const override {
    return !StringsAt(b, "/spec/finalizers").empty();
  }
  void PrepareForDelete(const Value&, api::ObjectBuilder* b,
                        const std::string&) const override {
    (void)b->SetString("/status/phase", "Terminating");
  }
};

class PodStrategyImpl : public Strategy {
 public:
  void Default(api::ObjectBuilder* b) const override {
    DefaultPodSpec(b, "/spec");
    // SetDefaults_Pod.
    if (b->Find("/spec") != nullptr && b->Find("/spec")->IsObject() &&
        b->Find("/spec/enableServiceLinks") == nullptr) {
      (void)b->SetBool("/spec/enableServiceLinks", true);
    }
  }
  void PrepareForCreate(const ResourceInfo&, api::ObjectBuilder* b,
                        const std::string&) const override {
    (void)b->SetJson("/status",
                     R"({"phase":"Pending","qosClass":"BestEffort"})");
    const Value* spec = b->Find("/spec");
    if (spec == nullptr || !spec->IsObject()) return;
    // The ServiceAccount admission plugin: the namespace's default account.
    if (StringAt(*b, "/spec/serviceAccountName").empty()) {
      (void)b->SetString("/spec/serviceAccountName", "default");
      (void)b->SetString("/spec/serviceAccount", "default");
    }
    AddDefaultTolerations(b);
    AddDefaultPriority(b);
    MountServiceAccountToken(b);
  }

 private:
  // The Priority admission plugin with no PriorityClass marked
  // globalDefault: priority 0 and preemptionPolicy PreemptLowerPriority;
  // the two built-in system classes by name.
  static void AddDefaultPriority(api::ObjectBuilder* b) {
    if (b->Find("/spec/priority") == nullptr) {
      const std::string cls = StringAt(*b, "/spec/priorityClassName");
      int64_t priority = 0;
      if (cls == "system-node-critical") priority = 2000001000;
      if (cls == "system-cluster-critical") priority = 2000000000;
      (void)b->SetInt("/spec/priority", priority);
    }
    if (b->Find("/spec/preemptionPolicy") == nullptr) {
      (void)b->SetString("/spec/preemptionPolicy", "PreemptLowerPriority");
    }
  }

  // The ServiceAccount admission plugin's token volume: a projected
  // kube-api-access-<random> volume (a bound token, the cluster's CA, the
  // namespace) mounted read-only at the service account path in every
  // container, unless the pod opts out or a container mounts that path.
  static void MountServiceAccountToken(api::ObjectBuilder* b) {
    static constexpr std::string_view kMountPath =
        "/var/run/secrets/kubernetes.io/serviceaccount";
    const Value* automount = b->Find("/spec/automountServiceAccountToken");
    if (automount != nullptr && automount->IsBool() && !automount->GetBool()) {
      return;
    }
    for (const char* list : {"initContainers", "containers"}) {
      const Value* containers = b->Find(Cat("/spec/", list));
      if (containers == nullptr || !containers->IsArray()) continue;
      for (const auto& c : containers->GetArray()) {
        const Value* mounts = Member(c, "volumeMounts");
        if (mounts == nullptr || !mounts->IsArray()) continue;
        for (const auto& m : mounts->GetArray()) {
          const Value* path = Member(m, "mountPath");
          if (path != nullptr && path->IsString() &&
              std::string_view(path->GetString()) == kMountPath) {
            return;
          }
        }
      }
    }
    const std::string name = GenerateName("kube-api-access-");
    const Value* volumes = b->Find("/spec/volumes");
    if (volumes == nullptr || !volumes->IsArray()) {
      (void)b->SetJson("/spec/volumes", "[]");
    }
    (void)b->SetJson(
        Cat("/spec/volumes/", b->Find("/spec/volumes")->Size()),
        Cat(R"({"name":")", name,
            R"(","projected":{"sources":[{"serviceAccountToken":)"
            R"({"expirationSeconds":3607,"path":"token"}},)"
            R"({"configMap":{"name":"kube-root-ca.crt","items":)"
            R"([{"key":"ca.crt","path":"ca.crt"}]}},)"
            R"({"downwardAPI":{"items":[{"path":"namespace","fieldRef":)"
            R"({"apiVersion":"v1","fieldPath":"metadata.namespace"}}]}}],)"
            R"("defaultMode":420}})"));
    for (const char* list : {"initContainers", "containers"}) {
      const Value* containers = b->Find(Cat("/spec/", list));
      if (containers == nullptr || !containers->IsArray()) continue;
      for (rapidjson::SizeType i = 0; i < containers->Size(); ++i) {
        const std::string at = Cat("/spec/", list, "/", i, "/volumeMounts");
        const Value* mounts = b->Find(at);
        if (mounts == nullptr || !mounts->IsArray()) {
          (void)b->SetJson(at, "[]");
        }
        (void)b->SetJson(
            Cat(at, "/", b->Find(at)->Size()),
            Cat(R"({"name":")", name, R"(","readOnly":true,"mountPath":")",
                kMountPath, R"("})"));
      }
    }
  }

  // The DefaultTolerationSeconds admission plugin: a pod that does not
  // tolerate the not-ready and unreachable NoExecute taints gets
  // tolerations of them for 300 s.
  static void AddDefaultTolerations(api::ObjectBuilder* b) {
    const Value* list = b->Find("/spec/tolerations");
    auto tolerates = [list](std::string_view key) {
      if (list == nullptr || !list->IsArray()) return false;
      for (const auto& t : list->GetArray()) {
        const Value* k = Member(t, "key");
        const Value* op = Member(t, "operator");
        const Value* effect = Member(t, "effect");
        const bool key_matches =
            (k != nullptr && k->IsString() && k->GetString() == key) ||
            ((k == nullptr || (k->IsString() && k->GetStringLength() == 0)) &&
             op != nullptr && op->IsString() &&
             std::string_view(op->GetString()) == "Exists");
        const bool effect_matches =
            effect == nullptr ||
            (effect->IsString() &&
             (effect->GetStringLength() == 0 ||
              std::string_view(effect->GetString()) == "NoExecute"));
        if (key_matches && effect_matches) return true;
      }
      return false;
    };
    std::vector<std::string> add;
    for (const char* key :
         {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}) {
      if (!tolerates(key)) add.push_back(key);
    }
    if (add.empty()) return;
    if (list == nullptr || !list->IsArray()) {
      (void)b->SetJson("/spec/tolerations", "[]");
    }
    for (const std::string& key : add) {
      const rapidjson::SizeType n = b->Find("/spec/tolerations")->Size();
      (void)b->SetJson(Cat("/spec/tolerations/", n),
                       Cat(R"({"key":")", key,
                           R"(","operator":"Exists","effect":"NoExecute",)"
                           R"("tolerationSeconds":300})"));
    }
  }
  void Validate(const ResourceInfo&, api::ObjectBuilder* b,
                std::vector<api::FieldError>* errors) const override {
    ValidatePodSpec(b->Find("/spec"), "spec", errors);
  }
  void ValidateUpdate(const ResourceInfo&, const Value& live,
                      api::ObjectBuilder* b, const std::string&,
                      std::vector<api::FieldError>* errors) const override {
    ValidatePodUpdate(live, b->json(), errors);
  }
};

// ConfigMaps: keys, the 1 MiB limit, `immutable`.
class ConfigMapStrategyImpl : public Strategy {
 public:
  void Validate(const ResourceInfo&, api::ObjectBuilder* b,
                std::vector<api::FieldError>* errors) const override {
    ValidateConfigMap(b->json(), errors);
  }
  void ValidateUpdate(const ResourceInfo&, const Value& live,
                      api::ObjectBuilder* b, const std::string&,
                      std::vector<api::FieldError>* errors) const override {
    ValidateConfigMapUpdate(live, b->json(), errors);
    ValidateConfigMap(b->json(), errors);
  }
};

// Services: named as DNS-1035 labels.
class ServiceStrategyImpl : public Strategy {
 public:
  void Default(api::ObjectBuilder* b) const override {
    if (b->Find("/spec") != nullptr && b->Find("/spec")->IsObject()) {
      SetIfAbsent(b, "/spec/type", "ClusterIP");
      SetIfAbsent(b, "/spec/sessionAffinity", "None");
      const std::string type = StringAt(*b, "/spec/type");
      if (type != "ExternalName") {
        SetIfAbsent(b, "/spec/internalTrafficPolicy", "Cluster");
      }
      if (type == "NodePort" || type == "LoadBalancer") {
        SetIfAbsent(b, "/spec/externalTrafficPolicy", "Cluster");
      }
      // SetDefaults_Service: each port's protocol TCP, targetPort = port.
      const Value* ports = b->Find("/spec/ports");
      if (ports != nullptr && ports->IsArray()) {
        for (rapidjson::SizeType i = 0; i < ports->Size(); ++i) {
          const std::string p = Cat("/spec/ports/", i);
          const Value* port = b->Find(p);
          if (port == nullptr || !port->IsObject()) continue;
          SetIfAbsent(b, p + "/protocol", "TCP");
          const Value* number = b->Find(p + "/port");
          const Value* target = b->Find(p + "/targetPort");
          if (number != nullptr && number->IsInt() &&
              (target == nullptr ||
               (target->IsInt() && target->GetInt() == 0) ||
               (target->IsString() && target->GetStringLength() == 0))) {
            (void)b->SetInt(p + "/targetPort", number->GetInt());
          }
        }
      }
    }
  }
  void PrepareForCreate(const ResourceInfo&, api::ObjectBuilder* b,
                        const std::string&) const override {
    (void)b->SetJson("/status", R"({"loadBalancer":{}})");
  }
  void Validate(const ResourceInfo&, api::ObjectBuilder* b,
                std::vector<api::FieldError>* errors) const override {
    ValidateService(b->json(), errors);
  }
  void ValidateUpdate(const ResourceInfo&, const Value&, api::ObjectBuilder* b,
                      const std::string&,
                      std::vector<api::FieldError>* errors) const override {
    ValidateService(b->json(), errors);
  }
  // As kube-apiserver (patchAllocatedValues): an update that leaves out the
  // allocated clusterIP or a port's nodePort (kubectl replace of a manifest)
  // keeps the ones the Service holds.
  void PrepareForUpdate(const Value& live,
                        api::ObjectBuilder* b) const override {
    const Value* live_spec = Member(live, "spec");
    if (live_spec == nullptr || b->Find("/spec") == nullptr ||
        !b->Find("/spec")->IsObject()) {
      return;
    }
    const Value* type = b->Find("/spec/type");
    const bool external_name =
        type != nullptr && type->IsString() &&
        std::string_view(type->GetString()) == "ExternalName";
    if (!external_name) {
      for (const char* key :
           {"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"}) {
        const Value* v = Member(*live_spec, key);
        if (v != nullptr && b->Find(Cat("/spec/", key)) == nullptr) {
          (void)b->Set(Cat("/spec/", key), *v);
        }
      }
    }
    const Value* live_ports = Member(*live_spec, "ports");
    const Value* ports = b->Find("/spec/ports");
    if (live_ports == nullptr || !live_ports->IsArray() || ports == nullptr ||
        !ports->IsArray()) {
      return;
    }
    for (rapidjson::SizeType i = 0; i < ports->Size(); ++i) {
      const std::string p = Cat("/spec/ports/", i);
      const Value* port = b->Find(p);
      if (port == nullptr || !port->IsObject() ||
          b->Find(p + "/nodePort") != nullptr) {
        continue;
      }
      const Value* number = Member(*port, "port");
      const Value* protocol = Member(*port, "protocol");
      for (const auto& old : live_ports->GetArray()) {
        const Value* old_number = Member(old, "port");
        const Value* old_protocol = Member(old, "protocol");
        const Value* node_port = Member(old, "nodePort");
        if (node_port == nullptr || number == nullptr ||
            old_number == nullptr || !(*number == *old_number)) {
          continue;
        }
        // An absent protocol is TCP (the default comes after this).
        auto proto = [](const Value* v) {
          return v == nullptr || !v->IsString() || v->GetStringLength() == 0
                     ? std::string("TCP")
                     : std::string(v->GetString(), v->GetStringLength());
        };
        if (proto(protocol) != proto(old_protocol)) continue;
        (void)b->Set(p + "/nodePort", *node_port);
        break;
      }
    }
  }
  void ValidateName(std::string_view name,
                    std::vector<api::FieldError>* errors) const override {
    ValidateDns1035LabelName(name, errors);
  }
};

// Secrets: stringData is write-only, as kube-apiserver's conversion makes
// it: each of its values goes into data, base64-encoded (over any data
// entry of the same key), and the field itself is never stored. A value
// that is not a string stays behind for Validate to refuse.
class SecretStrategyImpl : public Strategy {
 public:
  void Default(api::ObjectBuilder* b) const override {
    SetIfAbsent(b, "/type", "Opaque");
    FoldStringData(b);
  }
  void Validate(const ResourceInfo&, api::ObjectBuilder* b,
                std::vector<api::FieldError>* errors) const override {
    ValidateStringData(*b, errors);
    ValidateSecret(b->json(), errors);
  }
  void ValidateUpdate(const ResourceInfo&, const Value& live,
                      api::ObjectBuilder* b, const std::string&,
                      std::vector<api::FieldError>* errors) const override {
    ValidateStringData(*b, errors);
    ValidateSecretUpdate(live, b->json(), errors);
    ValidateSecret(b->json(), errors);
  }

 private:
  static void FoldStringData(api::ObjectBuilder* b) {
    Value* string_data = b->json().IsObject()
                             ? const_cast<Value*>(b->Find("/stringData"))
                             : nullptr;
    if (string_data == nullptr) return;
    if (string_data->IsNull()) {
      b->Remove("/stringData");
      return;
    }
    if (!string_data->IsObject()) return;
    std::vector<std::pair<std::string, std::string>> folded;
    std::vector<std::string> kept;
    for (auto& m : string_data->GetObject()) {
      std::string key(m.name.GetString(), m.name.GetStringLength());
      if (m.value.IsString()) {
        folded.emplace_back(
            std::move(key),
            absl::Base64Escape(absl::string_view(m.value.GetString(),
                                                 m.value.GetStringLength())));
      } else {
        kept.push_back(std::move(key));
      }
    }
    if (!folded.empty()) {
      Value* data = const_cast<Value*>(b->Find("/data"));
      if (data == nullptr || !data->IsObject()) {
        (void)b->SetJson("/data", "{}");
      }
      for (const auto& [key, encoded] : folded) {
        (void)b->SetString(
            absl::StrCat("/data/", api::json_pointer::EscapeToken(key)),
            encoded);
      }
    }
    if (kept.empty()) {
      b->Remove("/stringData");
    } else {
      for (const auto& [key, encoded] : folded) {
        b->Remove(
            absl::StrCat("/stringData/", api::json_pointer::EscapeToken(key)));
      }
    }
  }

  static void ValidateStringData(const api::ObjectBuilder& b,
                                 std::vector<api::FieldError>* errors) {
    const Value* string_data = b.Find("/stringData");
    if (string_data == nullptr) return;
    if (!string_data->IsObject()) {
      errors->push_back({api::FieldError::Type::kInvalid, "stringData",
                         JsonTypeName(*string_data),
                         "must be a map of strings"});
      return;
    }
    for (const auto& m : string_data->GetObject()) {
      errors->push_back(
          {api::FieldError::Type::kInvalid,
           absl::StrCat(
               "stringData[",
               absl::string_view(m.name.GetString(), m.name.GetStringLength()),
               "]"),
           JsonTypeName(m.value), "must be a string"});
    }
  }
};

}  // namespace

const Strategy& NamespaceStrategy() {
  static const Strategy* const s = new NamespaceStrategyImpl();
  return *s;
}

const Strategy& PodStrategy() {
  static const Strategy* const s = new PodStrategyImpl();
  return *s;
}

const Strategy& ServiceStrategy() {
  static const Strategy* const s = new ServiceStrategyImpl();
  return *s;
}

const Strategy& ConfigMapStrategy() {
  static const Strategy* const s = new ConfigMapStrategyImpl();
  return *s;
}

const Strategy& SecretStrategy() {
  static const Strategy* const s = new SecretStrategyImpl();
  return *s;
}

void DropEmptyMaps(const ResourceInfo& r, api::ObjectBuilder* b) {
  auto drop = [b](const std::string& pointer) {
    const Value* v = b->Find(pointer);
    if (v == nullptr) return;
    if ((v->IsObject() && v->ObjectEmpty()) || (v->IsArray() && v->Empty())) {
      b->Remove(pointer);
    }
  };
  for (const char* m :
       {"labels", "annotations", "finalizers", "ownerReferences"}) {
    drop(Cat("/metadata/", m));
  }
  if (r.custom) return;
  const std::string& resource = r.resource();
  if (r.group().empty()) {
    if (resource == "configmaps") {
      drop("/data");
      drop("/binaryData");
    } else if (resource == "secrets") {
      drop("/data");
    } else if (resource == "pods") {
      drop("/spec/nodeSelector");
    } else if (resource == "services") {
      drop("/spec/selector");
    } else if (resource == "replicationcontrollers" ||
               resource == "podtemplates") {
      drop("/spec/selector");
    }
  }
  // Pod templates (Deployments, ReplicaSets, ..., ReplicationControllers).
  for (const char* m : {"labels", "annotations"}) {
    drop(Cat("/spec/template/metadata/", m));
  }
  drop("/spec/template/spec/nodeSelector");
}

void SetIfAbsent(api::ObjectBuilder* b, const std::string& pointer,
                 std::string_view value) {
  if (b->Find(pointer) == nullptr) (void)b->SetString(pointer, value);
}

namespace {

// The member `key` of object `o`, or null.
Value* MemberOf(Value& o, const char* key) {
  auto it = o.FindMember(key);
  return it == o.MemberEnd() ? nullptr : &it->value;
}

// Adds `key: value` to object `o` unless `key` is there.
void StringIfAbsent(Value& o, const char* key, std::string_view value,
                    Allocator& a) {
  if (MemberOf(o, key) != nullptr) return;
  o.AddMember(
      Value(key, a),
      Value(value.data(), static_cast<rapidjson::SizeType>(value.size()), a),
      a);
}

// Sets `key` of object `o` to `value`, in place when present.
void SetStringMember(Value& o, const char* key, std::string_view value,
                     Allocator& a) {
  Value v(value.data(), static_cast<rapidjson::SizeType>(value.size()), a);
  if (Value* cur = MemberOf(o, key)) {
    *cur = std::move(v);
  } else {
    o.AddMember(Value(key, a), std::move(v), a);
  }
}

std::string_view StringOf(const Value* v) {
  if (v == nullptr || !v->IsString()) return {};
  return std::string_view(v->GetString(), v->GetStringLength());
}

}  // namespace

// Works on the spec's tree in place: a pod spec is defaulted on every write
// of a Pod, ReplicaSet and Deployment, and a JSON pointer per field walked
// the tree from the root each time.
void DefaultPodSpec(api::ObjectBuilder* b, const std::string& spec) {
  Value* s = &b->json();
  for (std::string_view rest = spec; !rest.empty();) {
    rest.remove_prefix(1);  // '/'
    const size_t slash = rest.find('/');
    const std::string token(rest.substr(0, slash));
    rest = slash == std::string_view::npos ? std::string_view()
                                           : rest.substr(slash);
    if (!s->IsObject()) return;
    s = MemberOf(*s, token.c_str());
    if (s == nullptr) return;
  }
  if (!s->IsObject()) return;
  Allocator& a = b->allocator();
  StringIfAbsent(*s, "restartPolicy", "Always", a);
  StringIfAbsent(*s, "dnsPolicy", "ClusterFirst", a);
  StringIfAbsent(*s, "schedulerName", "default-scheduler", a);
  // Conversion: serviceAccountName, or the deprecated serviceAccount when
  // it is empty, and serviceAccount mirrors it.
  std::string account(StringOf(MemberOf(*s, "serviceAccountName")));
  if (account.empty())
    account = std::string(StringOf(MemberOf(*s, "serviceAccount")));
  if (!account.empty()) {
    SetStringMember(*s, "serviceAccountName", account, a);
    SetStringMember(*s, "serviceAccount", account, a);
  }
  if (MemberOf(*s, "terminationGracePeriodSeconds") == nullptr) {
    s->AddMember("terminationGracePeriodSeconds", Value(int64_t{30}), a);
  }
  if (MemberOf(*s, "securityContext") == nullptr) {
    s->AddMember("securityContext", Value(rapidjson::kObjectType), a);
  }
  for (const char* list : {"containers", "initContainers"}) {
    Value* cs = MemberOf(*s, list);
    if (cs == nullptr || !cs->IsArray()) continue;
    for (Value& c : cs->GetArray()) {
      if (!c.IsObject()) continue;
      StringIfAbsent(c, "terminationMessagePath", "/dev/termination-log", a);
      StringIfAbsent(c, "terminationMessagePolicy", "File", a);
      if (MemberOf(c, "imagePullPolicy") == nullptr) {
        const std::string_view image = StringOf(MemberOf(c, "image"));
        const bool latest =
            image.find(':') == std::string_view::npos ||
            absl::EndsWith(absl::string_view(image.data(), image.size()),
                           ":latest");
        c.AddMember("imagePullPolicy",
                    Value(latest ? "Always" : "IfNotPresent", a), a);
      }
      if (MemberOf(c, "resources") == nullptr) {
        c.AddMember("resources", Value(rapidjson::kObjectType), a);
      }
      // SetDefaults_ContainerPort.
      Value* ports = MemberOf(c, "ports");
      if (ports != nullptr && ports->IsArray()) {
        for (Value& port : ports->GetArray()) {
          if (port.IsObject()) StringIfAbsent(port, "protocol", "TCP", a);
        }
      }
    }
  }
}

}  // namespace apiserver
}  // namespace kcr
