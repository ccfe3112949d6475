// TypedClient<T>: the RestClient bound to one kind and namespace, returning
// T instead of bare Objects, as client-go's typed clientsets
// (clientset.CoreV1().Pods(ns)).
//
//   client::TypedClient<api::PodView> pods(rest.get(), "default");
//   KCR_ASSIGN_OR_RETURN(api::PodView pod, pods.Get(ctx, "web-0"));
//
// T is any type that says, beside itself, where it lives on the server and
// how an Object becomes one (the views of api/types and the custom
// resources' types beside their controllers do):
//   static constexpr char kGroup[], kVersion[], kPlural[];  // its GVR
//   static constexpr bool kNamespaced;
//   static absl::StatusOr<T> Create(api::ObjectPtr);        // a view, or
//   static absl::StatusOr<T> FromObject(const api::Object&);  // a value
// ResourceTraits<T> reads these; specialize it for a type that cannot
// declare them itself.
//
// Each call is the RestClient call on ResourceFor<T>() in the bound
// namespace, followed by the conversion; an object of another kind in the
// answer is kInvalidArgument. Thread-safe as the RestClient is.
#ifndef KCR_RUNTIME_CLIENT_TYPED_CLIENT_H_
#define KCR_RUNTIME_CLIENT_TYPED_CLIENT_H_

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "api/meta/group_version.h"
#include "api/object.h"
#include "base/status_macros.h"
#include "runtime/client/rest_client.h"

namespace kcr::client {

namespace internal {
// Whether T converts with T::Create(api::ObjectPtr), as the views do.
template <typename T, typename = void>
struct IsView : std::false_type {};
template <typename T>
struct IsView<T,
              std::void_t<decltype(T::Create(std::declval<api::ObjectPtr>()))>>
    : std::true_type {};
}  // namespace internal

// Where T lives on the server and how an Object becomes one.
template <typename T>
struct ResourceTraits {
  static api::GroupVersionResource Gvr() {
    return {T::kGroup, T::kVersion, T::kPlural};
  }
  static constexpr bool kNamespaced = T::kNamespaced;
  static absl::StatusOr<T> Convert(api::ObjectPtr object) {
    if constexpr (internal::IsView<T>::value) {
      return T::Create(std::move(object));
    } else {
      return T::FromObject(*object);
    }
  }
};

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
