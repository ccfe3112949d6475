#include "apiserver/core_strategy.h"

#include "absl/strings/match.h"
#include "api/object_builder.h"
#include "apiserver/object_fields.h"
#include "apiserver/object_meta_validation.h"
#include "apiserver/str_util.h"

namespace kcr {
namespace apiserver {
namespace {

using rapidjson::Value;

constexpr char kNamespaceNameLabel[] = "kubernetes.io/metadata.name";

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
  }
  void PrepareForCreate(const ResourceInfo&, api::ObjectBuilder* b,
                        const std::string&) const override {
    (void)b->SetJson("/status",
                     R"({"phase":"Pending","qosClass":"BestEffort"})");
  }
};

// Services: named as DNS-1035 labels.
class ServiceStrategyImpl : public Strategy {
 public:
  void Default(api::ObjectBuilder* b) const override {
    if (b->Find("/spec") != nullptr) {
      SetIfAbsent(b, "/spec/type", "ClusterIP");
      SetIfAbsent(b, "/spec/sessionAffinity", "None");
    }
  }
  void PrepareForCreate(const ResourceInfo&, api::ObjectBuilder* b,
                        const std::string&) const override {
    (void)b->SetJson("/status", R"({"loadBalancer":{}})");
  }
  void ValidateName(std::string_view name,
                    std::vector<api::FieldError>* errors) const override {
    ValidateDns1035LabelName(name, errors);
  }
};

class SecretStrategyImpl : public Strategy {
 public:
  void Default(api::ObjectBuilder* b) const override {
    SetIfAbsent(b, "/type", "Opaque");
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

const Strategy& SecretStrategy() {
  static const Strategy* const s = new SecretStrategyImpl();
  return *s;
}

void SetIfAbsent(api::ObjectBuilder* b, const std::string& pointer,
                 std::string_view value) {
  if (b->Find(pointer) == nullptr) (void)b->SetString(pointer, value);
}

void DefaultPodSpec(api::ObjectBuilder* b, const std::string& spec) {
  const Value* s = b->Find(spec);
  if (s == nullptr || !s->IsObject()) return;
  SetIfAbsent(b, spec + "/restartPolicy", "Always");
  SetIfAbsent(b, spec + "/dnsPolicy", "ClusterFirst");
  SetIfAbsent(b, spec + "/schedulerName", "default-scheduler");
  if (b->Find(spec + "/terminationGracePeriodSeconds") == nullptr) {
    (void)b->SetInt(spec + "/terminationGracePeriodSeconds", 30);
  }
  if (b->Find(spec + "/securityContext") == nullptr) {
    (void)b->SetJson(spec + "/securityContext", "{}");
  }
  for (const char* list : {"/containers", "/initContainers"}) {
    const Value* cs = b->Find(spec + list);
    if (cs == nullptr || !cs->IsArray()) continue;
    for (rapidjson::SizeType i = 0; i < cs->Size(); ++i) {
      std::string c = Cat(spec, list, "/", i);
      const Value* cv = b->Find(c);
      if (cv == nullptr || !cv->IsObject()) continue;
      SetIfAbsent(b, c + "/terminationMessagePath", "/dev/termination-log");
      SetIfAbsent(b, c + "/terminationMessagePolicy", "File");
      if (b->Find(c + "/imagePullPolicy") == nullptr) {
        std::string image = StringAt(*b, (c + "/image").c_str());
        bool latest = image.find(':') == std::string::npos ||
                      absl::EndsWith(image, ":latest");
        (void)b->SetString(c + "/imagePullPolicy",
                           latest ? "Always" : "IfNotPresent");
      }
      if (b->Find(c + "/resources") == nullptr) {
        (void)b->SetJson(c + "/resources", "{}");
      }
    }
  }
}

}  // namespace apiserver
}  // namespace kcr
