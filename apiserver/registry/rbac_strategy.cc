#include "apiserver/registry/rbac_strategy.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_join.h"
#include "api/object_builder.h"
#include "api/types/field.h"
#include "apiserver/internal/object_fields.h"
#include "apiserver/registry/object_meta_validation.h"
#include "base/str_cat.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace {

using api::FieldError;
using rapidjson::Value;
namespace field = api::field;

size_t ListSize(const Value* object, const char* key) {
  const Value* v = field::Array(object, key);
  return v != nullptr ? v->Size() : 0;
}

// A list as Go's %#v prints a []string: []string{"a", "b"}.
std::string GoStrings(const Value* list) {
  std::vector<std::string> quoted;
  if (list != nullptr && list->IsArray()) {
    for (const auto& e : list->GetArray())
      quoted.push_back(Quote(e.IsString() ? field::View(e) : ""));
  }
  return Cat("[]string{", absl::StrJoin(quoted, ", "), "}");
}

std::string Supported(const std::vector<const char*>& values) {
  std::vector<std::string> quoted;
  for (const char* v : values) quoted.push_back(Quote(v));
  return Cat("supported values: ", absl::StrJoin(quoted, ", "));
}

// path.ValidatePathSegmentName, the rule for every RBAC object's name (and
// a roleRef's): anything but "." and "..", without '/' or '%'.
std::vector<std::string> PathSegmentNameProblems(std::string_view name) {
  if (name == ".") return {"may not be '.'"};
  if (name == "..") return {"may not be '..'"};
  std::vector<std::string> out;
  if (name.find('/') != std::string_view::npos) {
    out.push_back("may not contain '/'");
  }
  if (name.find('%') != std::string_view::npos) {
    out.push_back("may not contain '%'");
  }
  return out;
}

void ValidateRbacName(std::string_view name, std::vector<FieldError>* errors) {
  for (std::string& problem : PathSegmentNameProblems(name)) {
    errors->push_back(FieldErr(FieldError::Type::kInvalid, "metadata.name",
                               Quote(name), std::move(problem)));
  }
}

// ValidatePolicyRule for rules[i].
void ValidateRules(const Value& object, bool namespaced,
                   std::vector<FieldError>* errors) {
  const Value* rules = Member(object, "rules");
  if (rules == nullptr || !rules->IsArray()) return;
  for (rapidjson::SizeType i = 0; i < rules->Size(); ++i) {
    const Value& rule = (*rules)[i];
    const std::string path = Cat("rules[", i, "]");
    if (ListSize(&rule, "verbs") == 0) {
      errors->push_back(FieldErr(FieldError::Type::kRequired, path + ".verbs",
                                 "", "verbs must contain at least one value"));
    }
    if (ListSize(&rule, "nonResourceURLs") > 0) {
      const std::string urls = GoStrings(Member(rule, "nonResourceURLs"));
      if (namespaced) {
        errors->push_back(FieldErr(
            FieldError::Type::kInvalid, path + ".nonResourceURLs", urls,
            "namespaced rules cannot apply to non-resource URLs"));
      }
      if (ListSize(&rule, "apiGroups") > 0 ||
          ListSize(&rule, "resources") > 0 ||
          ListSize(&rule, "resourceNames") > 0) {
        errors->push_back(FieldErr(
            FieldError::Type::kInvalid, path + ".nonResourceURLs", urls,
            "rules cannot apply to both regular resources and non-resource "
            "URLs"));
      }
      continue;
    }
    if (ListSize(&rule, "apiGroups") == 0) {
      errors->push_back(
          FieldErr(FieldError::Type::kRequired, path + ".apiGroups", "",
                   "resource rules must supply at least one api group"));
    }
    if (ListSize(&rule, "resources") == 0) {
      errors->push_back(
          FieldErr(FieldError::Type::kRequired, path + ".resources", "",
                   "resource rules must supply at least one resource"));
    }
  }
}

// SetDefaults_Subject and SetDefaults_RoleBinding(RoleRef): the apiGroup a
// manifest may leave out.
void DefaultBinding(api::ObjectBuilder* b) {
  const Value* role_ref = b->Find("/roleRef");
  // roleRef is a struct, not a pointer, in Go: a missing one is defaulted
  // too (and then refused for its kind and name).
  if ((role_ref == nullptr || role_ref->IsObject()) &&
      field::String(role_ref, "apiGroup").empty()) {
    (void)b->SetString("/roleRef/apiGroup", kRbacGroup);
  }
  const Value* subjects = b->Find("/subjects");
  if (subjects == nullptr || !subjects->IsArray()) return;
  for (rapidjson::SizeType i = 0; i < subjects->Size(); ++i) {
    const Value& s = (*b->Find("/subjects"))[i];
    if (!s.IsObject() || !field::String(&s, "apiGroup").empty()) continue;
    const std::string_view kind = field::String(&s, "kind");
    const std::string pointer = Cat("/subjects/", i, "/apiGroup");
    // A ServiceAccount's is "", which Go leaves out (omitempty).
    if (kind == "User" || kind == "Group") {
      (void)b->SetString(pointer, kRbacGroup);
    }
  }
}

// ValidateRoleBindingSubject for subjects[i].
void ValidateSubjects(const Value& object, bool namespaced,
                      std::vector<FieldError>* errors) {
  const Value* subjects = Member(object, "subjects");
  if (subjects == nullptr || !subjects->IsArray()) return;
  for (rapidjson::SizeType i = 0; i < subjects->Size(); ++i) {
    const Value& s = (*subjects)[i];
    const std::string path = Cat("subjects[", i, "]");
    const std::string_view name = field::String(&s, "name");
    const std::string_view kind = field::String(&s, "kind");
    const std::string_view group = field::String(&s, "apiGroup");
    if (name.empty()) {
      errors->push_back(
          FieldErr(FieldError::Type::kRequired, path + ".name", "", ""));
    }
    if (kind == "ServiceAccount") {
      std::vector<FieldError> name_errors;
      ValidateSubdomainName(name, &name_errors);
      for (FieldError& e : name_errors) {
        e.field = path + ".name";
        errors->push_back(std::move(e));
      }
      if (!group.empty()) {
        errors->push_back(FieldErr(FieldError::Type::kNotSupported,
                                   path + ".apiGroup", Quote(group),
                                   Supported({""})));
      }
      if (!namespaced && field::String(&s, "namespace").empty()) {
        errors->push_back(
            FieldErr(FieldError::Type::kRequired, path + ".namespace", "", ""));
      }
    } else if (kind == "User" || kind == "Group") {
      if (group != kRbacGroup) {
        errors->push_back(FieldErr(FieldError::Type::kNotSupported,
                                   path + ".apiGroup", Quote(group),
                                   Supported({kRbacGroup})));
      }
    } else {
      errors->push_back(
          FieldErr(FieldError::Type::kNotSupported, path + ".kind", Quote(kind),
                   Supported({"ServiceAccount", "User", "Group"})));
    }
  }
}

// The roleRef checks of ValidateRoleBinding / ValidateClusterRoleBinding.
void ValidateRoleRef(const Value& object, bool namespaced,
                     std::vector<FieldError>* errors) {
  const Value* role_ref = Member(object, "roleRef");
  const std::string_view group = field::String(role_ref, "apiGroup");
  const std::string_view kind = field::String(role_ref, "kind");
  const std::string_view name = field::String(role_ref, "name");
  if (group != kRbacGroup) {
    errors->push_back(FieldErr(FieldError::Type::kNotSupported,
                               "roleRef.apiGroup", Quote(group),
                               Supported({kRbacGroup})));
  }
  if (namespaced && kind != "Role" && kind != "ClusterRole") {
    errors->push_back(FieldErr(FieldError::Type::kNotSupported, "roleRef.kind",
                               Quote(kind),
                               Supported({"Role", "ClusterRole"})));
  } else if (!namespaced && kind != "ClusterRole") {
    errors->push_back(FieldErr(FieldError::Type::kNotSupported, "roleRef.kind",
                               Quote(kind), Supported({"ClusterRole"})));
  }
  if (name.empty()) {
    errors->push_back(
        FieldErr(FieldError::Type::kRequired, "roleRef.name", "", ""));
  } else {
    for (std::string& problem : PathSegmentNameProblems(name)) {
      errors->push_back(FieldErr(FieldError::Type::kInvalid, "roleRef.name",
                                 Quote(name), std::move(problem)));
    }
  }
}

// The roleRef as Go's %#v prints rbac.RoleRef.
std::string GoRoleRef(const Value* role_ref) {
  return Cat(
      "rbac.RoleRef{APIGroup:", Quote(field::String(role_ref, "apiGroup")),
      ", Kind:", Quote(field::String(role_ref, "kind")),
      ", Name:", Quote(field::String(role_ref, "name")), "}");
}

bool SameRoleRef(const Value* a, const Value* b) {
  for (const char* key : {"apiGroup", "kind", "name"}) {
    if (field::String(a, key) != field::String(b, key)) return false;
  }
  return true;
}

class RoleStrategyImpl : public Strategy {
 public:
  explicit RoleStrategyImpl(bool namespaced) : namespaced_(namespaced) {}

  void ValidateName(std::string_view name,
                    std::vector<FieldError>* errors) const override {
    ValidateRbacName(name, errors);
  }
  void Validate(const ResourceInfo&, api::ObjectBuilder* b,
                std::vector<FieldError>* errors) const override {
    Check(b->json(), errors);
  }
  void ValidateUpdate(const ResourceInfo&, const Value&, api::ObjectBuilder* b,
                      const std::string&,
                      std::vector<FieldError>* errors) const override {
    Check(b->json(), errors);
  }

 private:
  void Check(const Value& object, std::vector<FieldError>* errors) const {
    ValidateRules(object, namespaced_, errors);
    // ValidateClusterRole: an aggregationRule needs a selector.
    const Value* aggregation = Member(object, "aggregationRule");
    if (!namespaced_ && aggregation != nullptr && aggregation->IsObject() &&
        ListSize(aggregation, "clusterRoleSelectors") == 0) {
      errors->push_back(
          FieldErr(FieldError::Type::kRequired, "aggregationRule", "",
                   "must have at least one cluster role selector"));
    }
  }

  const bool namespaced_;
};

class BindingStrategyImpl : public Strategy {
 public:
  explicit BindingStrategyImpl(bool namespaced) : namespaced_(namespaced) {}

  void Default(api::ObjectBuilder* b) const override { DefaultBinding(b); }
  void ValidateName(std::string_view name,
                    std::vector<FieldError>* errors) const override {
    ValidateRbacName(name, errors);
  }
  void Validate(const ResourceInfo&, api::ObjectBuilder* b,
                std::vector<FieldError>* errors) const override {
    ValidateRoleRef(b->json(), namespaced_, errors);
    ValidateSubjects(b->json(), namespaced_, errors);
  }
  void ValidateUpdate(const ResourceInfo&, const Value& live,
                      api::ObjectBuilder* b, const std::string&,
                      std::vector<FieldError>* errors) const override {
    ValidateRoleRef(b->json(), namespaced_, errors);
    ValidateSubjects(b->json(), namespaced_, errors);
    const Value* was = Member(live, "roleRef");
    const Value* now = Member(b->json(), "roleRef");
    if (!SameRoleRef(was, now)) {
      errors->push_back(FieldErr(FieldError::Type::kInvalid, "roleRef",
                                 GoRoleRef(now), "cannot change roleRef"));
    }
  }

 private:
  const bool namespaced_;
};

}  // namespace

const Strategy& RoleStrategy() {
  static const Strategy* const s = new RoleStrategyImpl(true);
  return *s;
}

const Strategy& ClusterRoleStrategy() {
  static const Strategy* const s = new RoleStrategyImpl(false);
  return *s;
}

const Strategy& RoleBindingStrategy() {
  static const Strategy* const s = new BindingStrategyImpl(true);
  return *s;
}

const Strategy& ClusterRoleBindingStrategy() {
  static const Strategy* const s = new BindingStrategyImpl(false);
  return *s;
}

}  // namespace apiserver
}  // namespace kcr
