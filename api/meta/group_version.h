// Group, version, kind and resource: the names Kubernetes uses to address a
// type of object (GroupVersionKind, as written in an object's apiVersion and
// kind) and a collection on the API server (GroupVersionResource, as written
// in a URL path). Value types: copyable, comparable, hashable with absl.
//
// The core ("legacy") group is the empty string: apiVersion "v1" is
// GroupVersion{"", "v1"}, served under /api/v1 rather than /apis/<group>/v1.
#ifndef KCR_API_META_GROUP_VERSION_H_
#define KCR_API_META_GROUP_VERSION_H_

#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "absl/status/statusor.h"

namespace kcr {
namespace api {

// An API group and version, e.g. {"apps", "v1"} or {"", "v1"} (core).
struct GroupVersion {
  std::string group;
  std::string version;

  GroupVersion() = default;
  GroupVersion(std::string g, std::string v)
      : group(std::move(g)), version(std::move(v)) {}

  bool Empty() const { return group.empty() && version.empty(); }

  // The apiVersion form: "apps/v1", or "v1" for the core group.
  std::string ToString() const;
  std::string ApiVersion() const { return ToString(); }

  friend bool operator==(const GroupVersion& a, const GroupVersion& b) {
    return a.group == b.group && a.version == b.version;
  }
  friend bool operator!=(const GroupVersion& a, const GroupVersion& b) {
    return !(a == b);
  }
  friend bool operator<(const GroupVersion& a, const GroupVersion& b) {
    return std::tie(a.group, a.version) < std::tie(b.group, b.version);
  }
  template <typename H>
  friend H AbslHashValue(H h, const GroupVersion& gv) {
    return H::combine(std::move(h), gv.group, gv.version);
  }
};

// Parses an apiVersion string as apimachinery's schema.ParseGroupVersion
// does: "" is the empty GroupVersion, "v1" is the core group, "apps/v1" is
// {apps, v1}. More than one '/', or an empty version after the '/', is
// InvalidArgument.
absl::StatusOr<GroupVersion> ParseGroupVersion(std::string_view api_version);

// A kind within a group and version, e.g. apps/v1 Deployment.
struct GroupVersionKind {
  std::string group;
  std::string version;
  std::string kind;

  GroupVersionKind() = default;
  GroupVersionKind(std::string g, std::string v, std::string k)
      : group(std::move(g)), version(std::move(v)), kind(std::move(k)) {}
  GroupVersionKind(const GroupVersion& gv, std::string k)
      : group(gv.group), version(gv.version), kind(std::move(k)) {}

  GroupVersion GetGroupVersion() const { return {group, version}; }
  // The object's apiVersion field: "apps/v1" or "v1".
  std::string ApiVersion() const { return GetGroupVersion().ToString(); }
  // "apps/v1, Kind=Deployment"; "v1, Kind=Pod" for the core group.
  std::string ToString() const;

  friend bool operator==(const GroupVersionKind& a, const GroupVersionKind& b) {
    return a.group == b.group && a.version == b.version && a.kind == b.kind;
  }
  friend bool operator!=(const GroupVersionKind& a, const GroupVersionKind& b) {
    return !(a == b);
  }
  friend bool operator<(const GroupVersionKind& a, const GroupVersionKind& b) {
    return std::tie(a.group, a.version, a.kind) <
           std::tie(b.group, b.version, b.kind);
  }
  template <typename H>
  friend H AbslHashValue(H h, const GroupVersionKind& gvk) {
    return H::combine(std::move(h), gvk.group, gvk.version, gvk.kind);
  }
};

// The GroupVersionKind named by an object's apiVersion and kind fields.
// InvalidArgument if apiVersion does not parse or kind is empty.
absl::StatusOr<GroupVersionKind> GroupVersionKindFromApiVersion(
    std::string_view api_version, std::string_view kind);

// A resource (a plural, lower-case collection name) within a group and
// version, e.g. apps/v1 deployments.
struct GroupVersionResource {
  std::string group;
  std::string version;
  std::string resource;

  GroupVersionResource() = default;
  GroupVersionResource(std::string g, std::string v, std::string r)
      : group(std::move(g)), version(std::move(v)), resource(std::move(r)) {}
  GroupVersionResource(const GroupVersion& gv, std::string r)
      : group(gv.group), version(gv.version), resource(std::move(r)) {}

  GroupVersion GetGroupVersion() const { return {group, version}; }
  // "apps/v1, Resource=deployments"; "v1, Resource=pods" for the core group.
  std::string ToString() const;

  friend bool operator==(const GroupVersionResource& a,
                         const GroupVersionResource& b) {
    return a.group == b.group && a.version == b.version &&
           a.resource == b.resource;
  }
  friend bool operator!=(const GroupVersionResource& a,
                         const GroupVersionResource& b) {
    return !(a == b);
  }
  friend bool operator<(const GroupVersionResource& a,
                        const GroupVersionResource& b) {
    return std::tie(a.group, a.version, a.resource) <
           std::tie(b.group, b.version, b.resource);
  }
  template <typename H>
  friend H AbslHashValue(H h, const GroupVersionResource& gvr) {
    return H::combine(std::move(h), gvr.group, gvr.version, gvr.resource);
  }
};

// A resource (plural) within a group, any version, e.g. {"apps",
// "deployments"}: how errors and RBAC name a collection.
struct GroupResource {
  std::string group;
  std::string resource;

  // "deployments.apps", or "configmaps" for the core group (as
  // schema.GroupResource.String(); error messages use this form).
  std::string ToString() const;

  friend bool operator==(const GroupResource& a, const GroupResource& b) {
    return a.group == b.group && a.resource == b.resource;
  }
  friend bool operator!=(const GroupResource& a, const GroupResource& b) {
    return !(a == b);
  }
};

// A kind within a group, any version, e.g. {"apps", "Deployment"}.
struct GroupKind {
  std::string group;
  std::string kind;

  // "Deployment.apps", or "ConfigMap" for the core group (as
  // schema.GroupKind.String()).
  std::string ToString() const;

  friend bool operator==(const GroupKind& a, const GroupKind& b) {
    return a.group == b.group && a.kind == b.kind;
  }
  friend bool operator!=(const GroupKind& a, const GroupKind& b) {
    return !(a == b);
  }
};

// Orders versions as Kubernetes does for discovery and preferred versions
// (apimachinery's CompareKubeAwareVersionStrings): GA before beta before
// alpha ("v2" > "v1" > "v1beta2" > "v1beta1" > "v1alpha1"), higher numbers
// first within a class, and any version not of the form v<N>[(alpha|beta)<M>]
// after all of those, in lexical order. Returns true if `a` is preferred
// over `b`.
bool KubeVersionLess(std::string_view a, std::string_view b);

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_META_GROUP_VERSION_H_
