// TypedClient<T>: the RestClient bound to one kind and namespace, returning
// the typed views of api/types (PodView, DeploymentView, ...) or the CRD
// types of api/crd (crd::Nginx, CopyratorRule, LoadTest) instead of bare
// Objects, as client-go's typed clientsets (clientset.CoreV1().Pods(ns)).
//
//   client::TypedClient<api::PodView> pods(rest.get(), "default");
//   KCR_ASSIGN_OR_RETURN(api::PodView pod, pods.Get(ctx, "web-0"));
//
// Each call is the RestClient call on ResourceTraits<T>::Resource() in the
// bound namespace, followed by the conversion; an object of another kind
// in the answer is kInvalidArgument. Thread-safe as the RestClient is.
#ifndef KCR_RUNTIME_CLIENT_TYPED_CLIENT_H_
#define KCR_RUNTIME_CLIENT_TYPED_CLIENT_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "api/crd/copyrator_rule.h"
#include "api/crd/loadtest.h"
#include "api/crd/nginx.h"
#include "api/types/config_map.h"
#include "api/types/deployment.h"
#include "api/types/event.h"
#include "api/types/lease.h"
#include "api/types/namespace.h"
#include "api/types/pod.h"
#include "api/types/secret.h"
#include "runtime/base/status_macros.h"
#include "runtime/client/rest_client.h"

namespace kcr::client {

// Where each type lives on the server and how an Object becomes one.
template <typename T>
struct ResourceTraits;

namespace internal {
template <typename View>
struct ViewTraits {
  static absl::StatusOr<View> Convert(api::ObjectPtr object) {
    return View::Create(std::move(object));
  }
};
template <typename Crd>
struct CrdTraits {
  static api::GroupVersionResource Gvr() {
    return {Crd::kGroup, Crd::kVersion, Crd::kPlural};
  }
  static constexpr bool kNamespaced = true;
  static absl::StatusOr<Crd> Convert(api::ObjectPtr object) {
    return Crd::FromObject(*object);
  }
};
}  // namespace internal

template <>
struct ResourceTraits<api::PodView> : internal::ViewTraits<api::PodView> {
  static api::GroupVersionResource Gvr() { return {"", "v1", "pods"}; }
  static constexpr bool kNamespaced = true;
};
template <>
struct ResourceTraits<api::ConfigMapView>
    : internal::ViewTraits<api::ConfigMapView> {
  static api::GroupVersionResource Gvr() { return {"", "v1", "configmaps"}; }
  static constexpr bool kNamespaced = true;
};
template <>
struct ResourceTraits<api::SecretView> : internal::ViewTraits<api::SecretView> {
  static api::GroupVersionResource Gvr() { return {"", "v1", "secrets"}; }
  static constexpr bool kNamespaced = true;
};
template <>
struct ResourceTraits<api::NamespaceView>
    : internal::ViewTraits<api::NamespaceView> {
  static api::GroupVersionResource Gvr() { return {"", "v1", "namespaces"}; }
  static constexpr bool kNamespaced = false;
};
template <>
struct ResourceTraits<api::EventView> : internal::ViewTraits<api::EventView> {
  static api::GroupVersionResource Gvr() { return {"", "v1", "events"}; }
  static constexpr bool kNamespaced = true;
};
template <>
struct ResourceTraits<api::DeploymentView>
    : internal::ViewTraits<api::DeploymentView> {
  static api::GroupVersionResource Gvr() {
    return {"apps", "v1", "deployments"};
  }
  static constexpr bool kNamespaced = true;
};
template <>
struct ResourceTraits<api::LeaseView> : internal::ViewTraits<api::LeaseView> {
  static api::GroupVersionResource Gvr() {
    return {"coordination.k8s.io", "v1", "leases"};
  }
  static constexpr bool kNamespaced = true;
};
template <>
struct ResourceTraits<api::crd::Nginx> : internal::CrdTraits<api::crd::Nginx> {
};
template <>
struct ResourceTraits<api::crd::CopyratorRule>
    : internal::CrdTraits<api::crd::CopyratorRule> {};
template <>
struct ResourceTraits<api::crd::LoadTest>
    : internal::CrdTraits<api::crd::LoadTest> {};

// The Resource of T in `ns` ("" = all namespaces, or cluster-scoped).
template <typename T>
Resource ResourceFor(std::string ns = "") {
  using Traits = ResourceTraits<T>;
  return Traits::kNamespaced
             ? Resource::Namespaced(Traits::Gvr(), std::move(ns))
             : Resource::ClusterScoped(Traits::Gvr());
}

template <typename T>
class TypedClient {
 public:
  using Traits = ResourceTraits<T>;

  // `client` is not owned and must outlive this object. `ns` is ignored
  // for cluster-scoped kinds.
  explicit TypedClient(RestClient* client, std::string ns = "")
      : client_(client), resource_(ResourceFor<T>(std::move(ns))) {}

  const Resource& resource() const { return resource_; }

  absl::StatusOr<T> Get(const Context& ctx, std::string_view name,
                        const GetOptions& options = {}) const {
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr obj,
                         client_->Get(ctx, resource_, name, options));
    return Traits::Convert(std::move(obj));
  }

  // One page (options.limit) or everything; the list's resourceVersion in
  // `*resource_version` when not null.
  absl::StatusOr<std::vector<T>> List(
      const Context& ctx, const ListOptions& options = {},
      std::string* resource_version = nullptr) const {
    KCR_ASSIGN_OR_RETURN(ObjectList list,
                         client_->List(ctx, resource_, options));
    if (resource_version != nullptr) *resource_version = list.resource_version;
    std::vector<T> out;
    out.reserve(list.items.size());
    for (auto& item : list.items) {
      KCR_ASSIGN_OR_RETURN(T value, Traits::Convert(std::move(item)));
      out.push_back(std::move(value));
    }
    return out;
  }

  absl::StatusOr<std::unique_ptr<WatchStream>> Watch(
      const Context& ctx, const ListOptions& options = {}) const {
    return client_->Watch(ctx, resource_, options);
  }

  absl::StatusOr<T> Create(const Context& ctx, const api::Object& object,
                           const CreateOptions& options = {}) const {
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr obj,
                         client_->Create(ctx, resource_, object, options));
    return Traits::Convert(std::move(obj));
  }

  absl::StatusOr<T> Update(const Context& ctx, const api::Object& object,
                           const UpdateOptions& options = {}) const {
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr obj,
                         client_->Update(ctx, resource_, object, options));
    return Traits::Convert(std::move(obj));
  }

  absl::StatusOr<T> UpdateStatus(const Context& ctx, const api::Object& object,
                                 const UpdateOptions& options = {}) const {
    KCR_ASSIGN_OR_RETURN(
        api::ObjectPtr obj,
        client_->UpdateStatus(ctx, resource_, object, options));
    return Traits::Convert(std::move(obj));
  }

  absl::StatusOr<T> Patch(const Context& ctx, std::string_view name,
                          PatchType type, std::string_view patch,
                          const PatchOptions& options = {},
                          std::string_view subresource = "") const {
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr obj,
                         client_->Patch(ctx, resource_, name, type, patch,
                                        options, subresource));
    return Traits::Convert(std::move(obj));
  }

  absl::Status Delete(const Context& ctx, std::string_view name,
                      const DeleteOptions& options = {}) const {
    return client_->Delete(ctx, resource_, name, options);
  }

  absl::Status DeleteCollection(const Context& ctx,
                                const DeleteOptions& options,
                                const ListOptions& list_options) const {
    return client_->DeleteCollection(ctx, resource_, options, list_options);
  }

 private:
  RestClient* const client_;
  const Resource resource_;
};

}  // namespace kcr::client

#endif  // KCR_RUNTIME_CLIENT_TYPED_CLIENT_H_
