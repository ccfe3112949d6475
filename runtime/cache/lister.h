// Listers: read-only access to an informer's cache by name, namespace and
// label selector, as client-go's generic listers (listers.ResourceIndexer,
// tools/cache/listers.go).
//
//   Lister pods(&indexer, {"", "pods"});
//   KCR_ASSIGN_OR_RETURN(api::ObjectPtr pod, pods.Get("default", "web-0"));
//   std::vector<api::ObjectPtr> web =
//       pods.Namespace("default").List(*api::LabelSelector::Parse("app=web"));
//
// A Lister never calls the API server: it reads what the informer has seen.
// Get's kNotFound is an API error (api::IsNotFound is true for it) with
// kube-apiserver's message, `pods "web-0" not found`, as client-go's
// listers return errors.NewNotFound.
//
// Listers are cheap values over an Indexer they do not own (it must outlive
// them), and thread-safe as the Indexer is. Returned objects are shared
// with the cache and immutable.
#ifndef KCR_RUNTIME_CACHE_LISTER_H_
#define KCR_RUNTIME_CACHE_LISTER_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "api/meta/group_version.h"
#include "api/object.h"
#include "api/selector/label_selector.h"
#include "runtime/cache/index.h"

namespace kcr::cache {

// Every object in `store` whose labels match `selector` (client-go's
// ListAll: a scan; an empty selector takes every object unmatched).
std::vector<api::ObjectPtr> ListAll(const Store& store,
                                    const api::LabelSelector& selector);

// Every object in namespace `ns` whose labels match `selector` (client-go's
// ListAllByNamespace): ListAll for "" (all namespaces), otherwise the
// namespace index, or a scan of the whole store when the indexer has no
// kNamespaceIndex.
std::vector<api::ObjectPtr> ListAllByNamespace(
    const Indexer& indexer, std::string_view ns,
    const api::LabelSelector& selector);

// The objects of one namespace.
class NamespaceLister {
 public:
  NamespaceLister(const Indexer* indexer, api::GroupResource resource,
                  std::string ns)
      : indexer_(indexer), resource_(std::move(resource)), ns_(std::move(ns)) {}

  std::vector<api::ObjectPtr> List(const api::LabelSelector& selector) const;
  // kNotFound (api::IsNotFound) when the cache has no such object.
  absl::StatusOr<api::ObjectPtr> Get(std::string_view name) const;

  const std::string& namespace_() const { return ns_; }

 private:
  const Indexer* indexer_;
  api::GroupResource resource_;
  std::string ns_;
};

// The objects of one resource, in every namespace.
class Lister {
 public:
  // `resource` names the objects in errors ({"apps", "deployments"}).
  Lister(const Indexer* indexer, api::GroupResource resource)
      : indexer_(indexer), resource_(std::move(resource)) {}

  std::vector<api::ObjectPtr> List(const api::LabelSelector& selector) const;
  // `ns` is "" for a cluster-scoped object. kNotFound (api::IsNotFound)
  // when the cache has no such object.
  absl::StatusOr<api::ObjectPtr> Get(std::string_view ns,
                                     std::string_view name) const;
  NamespaceLister Namespace(std::string ns) const {
    return NamespaceLister(indexer_, resource_, std::move(ns));
  }

  const api::GroupResource& resource() const { return resource_; }

 private:
  const Indexer* indexer_;
  api::GroupResource resource_;
};

}  // namespace kcr::cache

#endif  // KCR_RUNTIME_CACHE_LISTER_H_
