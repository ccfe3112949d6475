#include "api/meta/rest_mapper.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/string_view.h"

namespace kcr {
namespace api {
namespace {

RESTMapping Builtin(std::string group, std::string resource, std::string kind,
                    std::string singular, std::vector<std::string> short_names,
                    ResourceScope scope,
                    std::vector<std::string> subresources) {
  RESTMapping m;
  m.resource = GroupVersionResource(group, "v1", std::move(resource));
  m.list_kind = kind + "List";
  m.kind = GroupVersionKind(std::move(group), "v1", std::move(kind));
  m.singular = std::move(singular);
  m.short_names = std::move(short_names);
  m.scope = scope;
  m.subresources = std::move(subresources);
  return m;
}

std::string Join(absl::string_view path, absl::string_view name) {
  if (path.empty()) return std::string(name);
  return absl::StrCat(path, ".", name);
}

// Field accessors that name the field on failure. `path` is the dotted path
// of `obj` itself, used in messages.
absl::StatusOr<const rapidjson::Value*> Member(const rapidjson::Value& obj,
                                               absl::string_view path,
                                               const char* name,
                                               bool required) {
  if (!obj.IsObject()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": must be an object"));
  }
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || it->value.IsNull()) {
    if (required) {
      return absl::InvalidArgumentError(
          absl::StrCat(Join(path, name), ": Required value"));
    }
    return nullptr;
  }
  return &it->value;
}

absl::StatusOr<std::string> StringMember(const rapidjson::Value& obj,
                                         absl::string_view path,
                                         const char* name, bool required) {
  auto v = Member(obj, path, name, required);
  if (!v.ok()) return v.status();
  if (*v == nullptr) return std::string();
  if (!(*v)->IsString()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Join(path, name), ": must be a string"));
  }
  std::string s((*v)->GetString(), (*v)->GetStringLength());
  if (required && s.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Join(path, name), ": Required value"));
  }
  return s;
}

absl::StatusOr<bool> BoolMember(const rapidjson::Value& obj,
                                absl::string_view path, const char* name,
                                bool default_value) {
  auto v = Member(obj, path, name, false);
  if (!v.ok()) return v.status();
  if (*v == nullptr) return default_value;
  if (!(*v)->IsBool()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Join(path, name), ": must be a boolean"));
  }
  return (*v)->GetBool();
}

absl::StatusOr<std::vector<std::string>> StringListMember(
    const rapidjson::Value& obj, absl::string_view path, const char* name) {
  auto v = Member(obj, path, name, false);
  if (!v.ok()) return v.status();
  std::vector<std::string> out;
  if (*v == nullptr) return out;
  if (!(*v)->IsArray()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Join(path, name), ": must be a list of strings"));
  }
  for (const auto& e : (*v)->GetArray()) {
    if (!e.IsString()) {
      return absl::InvalidArgumentError(
          absl::StrCat(Join(path, name), ": must be a list of strings"));
    }
    out.emplace_back(e.GetString(), e.GetStringLength());
  }
  return out;
}

}  // namespace

bool RESTMapping::HasSubresource(std::string_view name) const {
  return std::find(subresources.begin(), subresources.end(), name) !=
         subresources.end();
}

std::unique_ptr<RESTMapper> RESTMapper::NewDefault() {
  auto mapper = std::make_unique<RESTMapper>();
  constexpr ResourceScope kNs = ResourceScope::kNamespaced;
  constexpr ResourceScope kCluster = ResourceScope::kCluster;
  std::vector<RESTMapping> builtins = {
      Builtin("", "pods", "Pod", "pod", {"po"}, kNs,
              {"attach", "binding", "ephemeralcontainers", "eviction", "exec",
               "log", "portforward", "proxy", "status"}),
      Builtin("", "configmaps", "ConfigMap", "configmap", {"cm"}, kNs, {}),
      Builtin("", "secrets", "Secret", "secret", {}, kNs, {}),
      Builtin("", "namespaces", "Namespace", "namespace", {"ns"}, kCluster,
              {"finalize", "status"}),
      Builtin("", "services", "Service", "service", {"svc"}, kNs,
              {"proxy", "status"}),
      Builtin("", "serviceaccounts", "ServiceAccount", "serviceaccount", {"sa"},
              kNs, {"token"}),
      Builtin("", "events", "Event", "event", {"ev"}, kNs, {}),
      Builtin("apps", "deployments", "Deployment", "deployment", {"deploy"},
              kNs, {"scale", "status"}),
      Builtin("coordination.k8s.io", "leases", "Lease", "lease", {}, kNs, {}),
      Builtin("apiextensions.k8s.io", "customresourcedefinitions",
              "CustomResourceDefinition", "customresourcedefinition",
              {"crd", "crds"}, kCluster, {"status"}),
  };
  MutexLock lock(&mapper->mu_);
  for (auto& m : builtins) mapper->AddLocked(std::move(m));
  return mapper;
}

absl::Status RESTMapper::Add(RESTMapping mapping) {
  if (mapping.resource.resource.empty() || mapping.resource.version.empty()) {
    return absl::InvalidArgumentError(
        "RESTMapping: resource and version must not be empty");
  }
  if (mapping.kind.kind.empty() || mapping.kind.version.empty()) {
    return absl::InvalidArgumentError(
        "RESTMapping: kind and version must not be empty");
  }
  MutexLock lock(&mu_);
  AddLocked(std::move(mapping));
  return absl::OkStatus();
}

void RESTMapper::AddLocked(RESTMapping mapping) {
  // Drop whatever the new mapping supersedes, so the two indexes stay
  // inverse to each other.
  auto old_kind = by_kind_.find(mapping.kind);
  if (old_kind != by_kind_.end()) {
    by_resource_.erase(old_kind->second);
    by_kind_.erase(old_kind);
  }
  auto old_res = by_resource_.find(mapping.resource);
  if (old_res != by_resource_.end()) {
    by_kind_.erase(old_res->second.kind);
    by_resource_.erase(old_res);
  }
  if (mapping.singular.empty()) {
    mapping.singular = absl::AsciiStrToLower(mapping.kind.kind);
  }
  if (mapping.list_kind.empty()) mapping.list_kind = mapping.kind.kind + "List";
  std::sort(mapping.subresources.begin(), mapping.subresources.end());
  mapping.subresources.erase(
      std::unique(mapping.subresources.begin(), mapping.subresources.end()),
      mapping.subresources.end());
  by_kind_[mapping.kind] = mapping.resource;
  GroupVersionResource key = mapping.resource;
  by_resource_.emplace(std::move(key), std::move(mapping));
}

absl::Status RESTMapper::AddFromCRD(const rapidjson::Value& crd) {
  if (!crd.IsObject()) {
    return absl::InvalidArgumentError(
        "CustomResourceDefinition: must be a JSON object");
  }
  auto kind_field = StringMember(crd, "", "kind", false);
  if (!kind_field.ok()) return kind_field.status();
  if (!kind_field->empty() && *kind_field != "CustomResourceDefinition") {
    return absl::InvalidArgumentError(absl::StrCat(
        "kind: expected CustomResourceDefinition, got \"", *kind_field, "\""));
  }
  auto spec = Member(crd, "", "spec", true);
  if (!spec.ok()) return spec.status();
  const rapidjson::Value& s = **spec;
  auto group = StringMember(s, "spec", "group", true);
  if (!group.ok()) return group.status();
  auto names = Member(s, "spec", "names", true);
  if (!names.ok()) return names.status();
  auto plural = StringMember(**names, "spec.names", "plural", true);
  if (!plural.ok()) return plural.status();
  auto singular = StringMember(**names, "spec.names", "singular", false);
  if (!singular.ok()) return singular.status();
  auto kind = StringMember(**names, "spec.names", "kind", true);
  if (!kind.ok()) return kind.status();
  auto list_kind = StringMember(**names, "spec.names", "listKind", false);
  if (!list_kind.ok()) return list_kind.status();
  auto short_names = StringListMember(**names, "spec.names", "shortNames");
  if (!short_names.ok()) return short_names.status();
  auto scope = StringMember(s, "spec", "scope", true);
  if (!scope.ok()) return scope.status();
  if (*scope != "Namespaced" && *scope != "Cluster") {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.scope: Unsupported value: \"", *scope,
                     "\": supported values: \"Cluster\", \"Namespaced\""));
  }
  auto versions = Member(s, "spec", "versions", true);
  if (!versions.ok()) return versions.status();
  if (!(*versions)->IsArray() || (*versions)->Empty()) {
    return absl::InvalidArgumentError(
        "spec.versions: must be a non-empty list");
  }
  std::vector<RESTMapping> mappings;
  int i = 0;
  for (const auto& v : (*versions)->GetArray()) {
    std::string path = absl::StrCat("spec.versions[", i++, "]");
    auto name = StringMember(v, path, "name", true);
    if (!name.ok()) return name.status();
    // apiextensions/v1 requires `served`; a missing one is read as served so
    // hand-written test CRDs stay short.
    auto served = BoolMember(v, path, "served", true);
    if (!served.ok()) return served.status();
    auto subs = Member(v, path, "subresources", false);
    if (!subs.ok()) return subs.status();
    RESTMapping m;
    m.resource = GroupVersionResource(*group, *name, *plural);
    m.kind = GroupVersionKind(*group, *name, *kind);
    m.singular = *singular;
    m.short_names = *short_names;
    m.list_kind = *list_kind;
    m.scope = *scope == "Cluster" ? ResourceScope::kCluster
                                  : ResourceScope::kNamespaced;
    if (*subs != nullptr) {
      if (!(*subs)->IsObject()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ".subresources: must be an object"));
      }
      for (const char* sub : {"status", "scale"}) {
        if ((*subs)->HasMember(sub)) m.subresources.push_back(sub);
      }
    }
    if (*served) mappings.push_back(std::move(m));
  }
  MutexLock lock(&mu_);
  for (auto& m : mappings) AddLocked(std::move(m));
  return absl::OkStatus();
}

absl::Status RESTMapper::AddFromDiscovery(
    const rapidjson::Value& api_resource_list) {
  const rapidjson::Value& doc = api_resource_list;
  if (!doc.IsObject()) {
    return absl::InvalidArgumentError("APIResourceList: must be a JSON object");
  }
  auto gv_string = StringMember(doc, "", "groupVersion", true);
  if (!gv_string.ok()) return gv_string.status();
  auto gv = ParseGroupVersion(*gv_string);
  if (!gv.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("groupVersion: ", gv.status().message()));
  }
  auto resources = Member(doc, "", "resources", false);
  if (!resources.ok()) return resources.status();
  std::vector<RESTMapping> mappings;
  if (*resources != nullptr) {
    if (!(*resources)->IsArray()) {
      return absl::InvalidArgumentError("resources: must be a list");
    }
    // Two passes: a subresource entry may come before its parent.
    std::vector<std::pair<std::string, std::string>> subresources;
    int i = 0;
    for (const auto& r : (*resources)->GetArray()) {
      std::string path = absl::StrCat("resources[", i++, "]");
      auto name = StringMember(r, path, "name", true);
      if (!name.ok()) return name.status();
      size_t slash = name->find('/');
      if (slash != std::string::npos) {
        subresources.emplace_back(name->substr(0, slash),
                                  name->substr(slash + 1));
        continue;
      }
      auto kind = StringMember(r, path, "kind", true);
      if (!kind.ok()) return kind.status();
      auto singular = StringMember(r, path, "singularName", false);
      if (!singular.ok()) return singular.status();
      auto namespaced = BoolMember(r, path, "namespaced", false);
      if (!namespaced.ok()) return namespaced.status();
      auto short_names = StringListMember(r, path, "shortNames");
      if (!short_names.ok()) return short_names.status();
      RESTMapping m;
      m.resource = GroupVersionResource(*gv, *name);
      m.kind = GroupVersionKind(*gv, *kind);
      m.singular = *singular;
      m.short_names = *short_names;
      m.scope =
          *namespaced ? ResourceScope::kNamespaced : ResourceScope::kCluster;
      mappings.push_back(std::move(m));
    }
    for (const auto& [parent, sub] : subresources) {
      for (auto& m : mappings) {
        if (m.resource.resource == parent) m.subresources.push_back(sub);
      }
    }
  }
  MutexLock lock(&mu_);
  for (auto& m : mappings) AddLocked(std::move(m));
  return absl::OkStatus();
}

absl::StatusOr<GroupVersionKind> RESTMapper::KindFor(
    const GroupVersionResource& resource) const {
  absl::StatusOr<RESTMapping> m = MappingForResource(resource);
  if (!m.ok()) return m.status();
  return m->kind;
}

absl::StatusOr<GroupVersionResource> RESTMapper::ResourceFor(
    const GroupVersionKind& kind) const {
  absl::StatusOr<RESTMapping> m = MappingFor(kind);
  if (!m.ok()) return m.status();
  return m->resource;
}

absl::StatusOr<RESTMapping> RESTMapper::MappingFor(
    const GroupVersionKind& kind) const {
  MutexLock lock(&mu_);
  auto it = by_kind_.find(kind);
  if (it == by_kind_.end()) {
    // client-go's NoKindMatchError wording.
    return absl::NotFoundError(
        absl::StrCat("no matches for kind \"", kind.kind, "\" in version \"",
                     kind.GetGroupVersion().ToString(), "\""));
  }
  return by_resource_.at(it->second);
}

absl::StatusOr<RESTMapping> RESTMapper::MappingForResource(
    const GroupVersionResource& resource) const {
  MutexLock lock(&mu_);
  auto it = by_resource_.find(resource);
  if (it == by_resource_.end()) {
    // client-go's NoResourceMatchError wording.
    return absl::NotFoundError(
        absl::StrCat("no matches for ", resource.ToString()));
  }
  return it->second;
}

absl::StatusOr<RESTMapping> RESTMapper::Resolve(
    std::string_view user_input) const {
  const std::string input = absl::AsciiStrToLower(ToAbsl(user_input));
  const absl::Status not_found = absl::NotFoundError(absl::StrCat(
      "the server doesn't have a resource type \"", ToAbsl(user_input), "\""));
  if (input.empty()) return not_found;

  struct Query {
    std::string name;
    std::string version;  // empty: any
    std::string group;
    bool any_group;
  };
  std::vector<Query> queries;
  std::vector<std::string> parts = absl::StrSplit(input, '.');
  if (parts.size() == 1) {
    queries.push_back({input, "", "", true});
  } else {
    // "<name>.<version>.<group>" is tried before "<name>.<group>", as
    // kubectl does.
    if (parts.size() >= 3) {
      queries.push_back({parts[0], parts[1],
                         absl::StrJoin(parts.begin() + 2, parts.end(), "."),
                         false});
    }
    queries.push_back({parts[0], "",
                       absl::StrJoin(parts.begin() + 1, parts.end(), "."),
                       false});
  }

  MutexLock lock(&mu_);
  for (const Query& q : queries) {
    // Matches at the best tier seen so far: 0 plural, 1 singular, 2 short
    // name, 3 kind.
    int best_tier = 4;
    std::vector<const RESTMapping*> matches;
    for (const auto& [gvr, m] : by_resource_) {
      if (!q.any_group && m.resource.group != q.group) continue;
      if (!q.version.empty() && m.resource.version != q.version) continue;
      int tier = 4;
      if (m.resource.resource == q.name) {
        tier = 0;
      } else if (absl::AsciiStrToLower(m.singular) == q.name) {
        tier = 1;
      } else if (std::any_of(m.short_names.begin(), m.short_names.end(),
                             [&](const std::string& s) {
                               return absl::AsciiStrToLower(s) == q.name;
                             })) {
        tier = 2;
      } else if (absl::AsciiStrToLower(m.kind.kind) == q.name) {
        tier = 3;
      }
      if (tier > best_tier || tier == 4) continue;
      if (tier < best_tier) {
        best_tier = tier;
        matches.clear();
      }
      matches.push_back(&m);
    }
    if (matches.empty()) continue;
    bool has_core = std::any_of(
        matches.begin(), matches.end(),
        [](const RESTMapping* m) { return m->resource.group.empty(); });
    std::vector<const RESTMapping*> chosen;
    for (const RESTMapping* m : matches) {
      if (!has_core || m->resource.group.empty()) chosen.push_back(m);
    }
    // Every candidate must be one group and resource at several versions.
    for (const RESTMapping* m : chosen) {
      if (m->resource.group != chosen[0]->resource.group ||
          m->resource.resource != chosen[0]->resource.resource) {
        std::vector<std::string> names;
        for (const RESTMapping* c : chosen) {
          names.push_back(absl::StrCat(c->resource.resource, ".",
                                       c->resource.version, ".",
                                       c->resource.group));
        }
        return absl::InvalidArgumentError(
            absl::StrCat("resource type \"", ToAbsl(user_input),
                         "\" is ambiguous: ", absl::StrJoin(names, ", ")));
      }
    }
    const RESTMapping* preferred = chosen[0];
    for (const RESTMapping* m : chosen) {
      if (KubeVersionLess(m->resource.version, preferred->resource.version)) {
        preferred = m;
      }
    }
    return *preferred;
  }
  return not_found;
}

std::vector<RESTMapping> RESTMapper::Mappings() const {
  MutexLock lock(&mu_);
  std::vector<RESTMapping> out;
  out.reserve(by_resource_.size());
  for (const auto& [gvr, m] : by_resource_) out.push_back(m);
  return out;
}

}  // namespace api
}  // namespace kcr
