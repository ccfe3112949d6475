#include "apiserver/registry/crd_strategy.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

#include "api/object_builder.h"
#include "apiserver/internal/object_fields.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace {

using rapidjson::Value;

class CRDStrategyImpl : public Strategy {
 public:
  void PrepareForCreate(const ResourceInfo&, api::ObjectBuilder* b,
                        const std::string& now) const override {
    b->AddFinalizer(kCrdCleanupFinalizer);
    b->Remove("/status");
    SetCRDStatus(b, nullptr, now);
  }
  void Validate(const ResourceInfo&, api::ObjectBuilder* b,
                std::vector<api::FieldError>* errors) const override {
    (void)ResourceRegistry::FromCRD(b->json(), errors);
  }
  void ValidateUpdate(const ResourceInfo&, const Value& live,
                      api::ObjectBuilder* b, const std::string& now,
                      std::vector<api::FieldError>* errors) const override {
    (void)ResourceRegistry::FromCRD(b->json(), errors);
    if (errors->empty()) SetCRDStatus(b, Member(live, "status"), now);
  }
  void PrepareForDelete(const Value& live, api::ObjectBuilder* b,
                        const std::string& now) const override {
    SetCRDStatus(b, Member(live, "status"), now);
  }
};

}  // namespace

bool IsCRDResource(const ResourceInfo& r) {
  return r.group() == "apiextensions.k8s.io" &&
         r.resource() == "customresourcedefinitions";
}

const Strategy& CRDStrategy() {
  static const Strategy* const s = new CRDStrategyImpl();
  return *s;
}

void SetCRDStatus(api::ObjectBuilder* b, const Value* old_status,
                  const std::string& now) {
  const Value* names = b->Find("/spec/names");
  rapidjson::Document accepted(rapidjson::kObjectType);
  auto& a = accepted.GetAllocator();
  std::string kind, plural;
  if (names != nullptr && names->IsObject()) {
    accepted.CopyFrom(*names, a);
    kind = StringAt(*b, "/spec/names/kind");
    plural = StringAt(*b, "/spec/names/plural");
    if (!accepted.HasMember("singular") && !kind.empty()) {
      std::string s = kind;
      for (char& c : s) c = static_cast<char>(tolower(c));
      accepted.AddMember("singular", Value(s.c_str(), a), a);
    }
    if (!accepted.HasMember("listKind") && !kind.empty()) {
      accepted.AddMember("listKind", Value((kind + "List").c_str(), a), a);
    }
  }
  (void)b->Set("/status/acceptedNames", accepted);
  // Keep a condition's lastTransitionTime while its status is unchanged.
  auto transition = [&](std::string_view type, std::string_view status) {
    if (old_status != nullptr) {
      const Value* conds = Member(*old_status, "conditions");
      if (conds != nullptr && conds->IsArray()) {
        for (const auto& c : conds->GetArray()) {
          const Value* t = Member(c, "type");
          const Value* s = Member(c, "status");
          const Value* ltt = Member(c, "lastTransitionTime");
          if (t && t->IsString() && t->GetString() == type && s &&
              s->IsString() && s->GetString() == status && ltt &&
              ltt->IsString()) {
            return std::string(ltt->GetString());
          }
        }
      }
    }
    return now;
  };
  bool deleting = b->Find("/metadata/deletionTimestamp") != nullptr;
  std::string conds = Cat(
      R"([{"type":"NamesAccepted","status":"True","lastTransitionTime":")",
      transition("NamesAccepted", "True"),
      R"(","reason":"NoConflicts","message":"no conflicts found"},)",
      R"({"type":"Established","status":"True","lastTransitionTime":")",
      transition("Established", "True"),
      R"(","reason":"InitialNamesAccepted","message":"the initial names have been accepted"})");
  if (deleting) {
    CatAppend(
        &conds,
        R"(,{"type":"Terminating","status":"True","lastTransitionTime":")",
        transition("Terminating", "True"),
        R"(","reason":"InstanceDeletionInProgress","message":"CustomResource deletion is in progress"})");
  }
  conds += "]";
  (void)b->SetJson("/status/conditions", conds);
  // storedVersions: every version ever stored, plus the current storage one.
  std::vector<std::string> stored;
  if (old_status != nullptr) {
    const Value* sv = Member(*old_status, "storedVersions");
    if (sv != nullptr && sv->IsArray()) {
      for (const auto& v : sv->GetArray()) {
        if (v.IsString()) stored.emplace_back(v.GetString());
      }
    }
  }
  const Value* versions = b->Find("/spec/versions");
  if (versions != nullptr && versions->IsArray()) {
    for (const auto& v : versions->GetArray()) {
      const Value* st = Member(v, "storage");
      const Value* n = Member(v, "name");
      if (st && st->IsBool() && st->GetBool() && n && n->IsString() &&
          std::find(stored.begin(), stored.end(), n->GetString()) ==
              stored.end()) {
        stored.emplace_back(n->GetString());
      }
    }
  }
  rapidjson::Document sv(rapidjson::kArrayType);
  for (const std::string& s : stored) {
    sv.PushBack(Value(s.c_str(), sv.GetAllocator()), sv.GetAllocator());
  }
  (void)b->Set("/status/storedVersions", sv);
}

}  // namespace apiserver
}  // namespace kcr
