// Typed listers: the generic Lister (runtime/cache/lister.h) returning the
// typed views of api/types, as client-go's generated listers
// (listers/core/v1/pod.go) over listers.ResourceIndexer.
//
//   PodLister pods(&indexer);
//   KCR_ASSIGN_OR_RETURN(api::PodView pod,
//                        pods.Namespace("default").Get("web-0"));
//
// `View` is a TypedView with kGroup, kPlural and a static Create(ObjectPtr)
// that checks the kind. An object the view rejects (another kind in the
// cache: a programming error in the informer's wiring) is an error from Get
// and is left out, with a log line, from List.
//
// Thread-safe, and the Indexer must outlive the lister, as for Lister.
#ifndef KCR_RUNTIME_CACHE_TYPED_LISTER_H_
#define KCR_RUNTIME_CACHE_TYPED_LISTER_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "api/meta/group_version.h"
#include "api/object.h"
#include "api/selector/label_selector.h"
#include "api/types/config_map.h"
#include "api/types/deployment.h"
#include "api/types/event.h"
#include "api/types/lease.h"
#include "api/types/namespace.h"
#include "api/types/pod.h"
#include "api/types/secret.h"
#include "glog/logging.h"
#include "runtime/cache/index.h"
#include "runtime/cache/lister.h"

namespace kcr::cache {
namespace internal_lister {

template <typename View>
std::vector<View> ToViews(std::vector<api::ObjectPtr> objects) {
  std::vector<View> views;
  views.reserve(objects.size());
  for (api::ObjectPtr& object : objects) {
    absl::StatusOr<View> view = View::Create(std::move(object));
    if (view.ok()) {
      views.push_back(*std::move(view));
    } else {
      LOG(ERROR) << "lister: skipping object resource=" << View::kPlural
                 << " error=" << view.status();
    }
  }
  return views;
}

template <typename View>
absl::StatusOr<View> ToView(absl::StatusOr<api::ObjectPtr> object) {
  if (!object.ok()) return object.status();
  return View::Create(*std::move(object));
}

template <typename View>
api::GroupResource ResourceOf() {
  return api::GroupResource{View::kGroup, View::kPlural};
}

}  // namespace internal_lister

template <typename View>
class TypedNamespaceLister {
 public:
  explicit TypedNamespaceLister(NamespaceLister lister)
      : lister_(std::move(lister)) {}

  std::vector<View> List(const api::LabelSelector& selector) const {
    return internal_lister::ToViews<View>(lister_.List(selector));
  }
  // kNotFound (api::IsNotFound) when the cache has no such object.
  absl::StatusOr<View> Get(std::string_view name) const {
    return internal_lister::ToView<View>(lister_.Get(name));
  }

 private:
  NamespaceLister lister_;
};

template <typename View>
class TypedLister {
 public:
  explicit TypedLister(const Indexer* indexer)
      : lister_(indexer, internal_lister::ResourceOf<View>()) {}

  std::vector<View> List(const api::LabelSelector& selector) const {
    return internal_lister::ToViews<View>(lister_.List(selector));
  }
  // `ns` is "" for a cluster-scoped object.
  absl::StatusOr<View> Get(std::string_view ns, std::string_view name) const {
    return internal_lister::ToView<View>(lister_.Get(ns, name));
  }
  TypedNamespaceLister<View> Namespace(std::string ns) const {
    return TypedNamespaceLister<View>(lister_.Namespace(std::move(ns)));
  }

 private:
  Lister lister_;
};

using PodLister = TypedLister<api::PodView>;
using DeploymentLister = TypedLister<api::DeploymentView>;
using ConfigMapLister = TypedLister<api::ConfigMapView>;
using SecretLister = TypedLister<api::SecretView>;
// Not "NamespaceLister": that is the lister of one namespace's objects.
using NamespaceViewLister = TypedLister<api::NamespaceView>;
using LeaseLister = TypedLister<api::LeaseView>;
using EventLister = TypedLister<api::EventView>;

}  // namespace kcr::cache

#endif  // KCR_RUNTIME_CACHE_TYPED_LISTER_H_
