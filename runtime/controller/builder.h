// ControllerBuilder: wires a controller into a Manager in one statement
// (controller-runtime's pkg/builder).
//
//   absl::Status s = ControllerBuilder(mgr)
//       .For(configmaps)                        // reconcile these
//       .Owns(secrets)                          // and wake their owner when
//                                               // an owned Secret changes
//       .Watches(namespaces, EnqueueRequestsFromMapFunc(...))
//       .WithEventFilter(ResourceVersionChanged())
//       .Complete(std::make_shared<MyReconciler>());
//
// Informers come from the Manager's SharedInformerFactory: every controller
// watching one resource (with the same selectors) shares one informer.
// For installs EnqueueRequestForObject; Owns installs
// EnqueueRequestForOwner for the For resource's kind, counting only the
// controller owner reference. WithEventFilter predicates apply to every
// watch, before the watch's own.
//
// The controller is named with Named, else after the For resource's kind in
// lower case ("configmap"), as controller-runtime names it; names must be
// unique in a Manager. Validation errors come back from Complete:
// InvalidArgument (no For, For twice, a bad name or option),
// AlreadyExists (a name in use), NotFound (Owns on a For resource whose kind
// the Manager's RESTMapper does not know).
//
// Not thread-safe; use one builder per controller, on one thread.
#ifndef KCR_RUNTIME_CONTROLLER_BUILDER_H_
#define KCR_RUNTIME_CONTROLLER_BUILDER_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/cache/list_watch.h"
#include "runtime/client/options.h"
#include "runtime/client/typed_client.h"
#include "runtime/controller/controller.h"
#include "runtime/controller/handler.h"
#include "runtime/controller/manager.h"
#include "runtime/controller/predicate.h"
#include "runtime/controller/reconciler.h"
#include "runtime/sharding/shard_ownership.h"

namespace kcr::controller {

class ControllerBuilder {
 public:
  // `manager` must outlive the builder.
  explicit ControllerBuilder(Manager& manager) : manager_(manager) {}

  // The resource the controller reconciles; required, once.
  ControllerBuilder& For(const client::Resource& resource,
                         std::vector<Predicate> predicates = {});
  // A resource whose objects the For resource's objects own (through a
  // controller ownerReference): a change to one enqueues its owner.
  ControllerBuilder& Owns(const client::Resource& resource,
                          std::vector<Predicate> predicates = {});
  // Any resource, with any handler.
  ControllerBuilder& Watches(const client::Resource& resource,
                             std::shared_ptr<EventHandler> handler,
                             std::vector<Predicate> predicates = {});
  // Any resource, enqueueing what `map` returns for each changed object.
  ControllerBuilder& Watches(const client::Resource& resource, MapFunc map,
                             std::vector<Predicate> predicates = {});
  // For, Owns and Watches of the resource that T declares (kGroup,
  // kVersion, kPlural, kNamespaced: a typed view of api/types or a custom
  // resource's type), in every namespace the Manager's cache holds.
  template <typename T>
  ControllerBuilder& For(std::vector<Predicate> predicates = {}) {
    return For(client::ResourceFor<T>(), std::move(predicates));
  }
  template <typename T>
  ControllerBuilder& Owns(std::vector<Predicate> predicates = {}) {
    return Owns(client::ResourceFor<T>(), std::move(predicates));
  }
  template <typename T>
  ControllerBuilder& Watches(std::shared_ptr<EventHandler> handler,
                             std::vector<Predicate> predicates = {}) {
    return Watches(client::ResourceFor<T>(), std::move(handler),
                   std::move(predicates));
  }
  template <typename T>
  ControllerBuilder& Watches(MapFunc map,
                             std::vector<Predicate> predicates = {}) {
    return Watches(client::ResourceFor<T>(), std::move(map),
                   std::move(predicates));
  }
  // The informer options (label and field selectors, metadata only) of the
  // watch added last; watches with different options get different
  // informers.
  ControllerBuilder& WithListWatchOptions(cache::ListWatchOptions options);
  // A predicate for every watch.
  ControllerBuilder& WithEventFilter(Predicate predicate);
  ControllerBuilder& Named(std::string name);
  // Workers, rate limiter, timeouts... Unset clock and metrics providers
  // become the Manager's; the name comes from Named or the default.
  ControllerBuilder& WithOptions(ControllerOptions options);
  // Shards the controller: it reconciles only the objects of the shards
  // `ownership` gives this replica (see shard_filter.h), runs without the
  // Manager's leader election, lists and watches the For resource with the
  // shardSelector of those shards, and is ready (/readyz
  // "shards-<name>") once `ownership` settled and that list is in.
  // With ShardBy::kNamespace the owned namespaced kinds are listed and
  // watched by the held shards too (an owned object shares its owner's
  // namespace); with kUid they, and other watched resources, are filtered
  // on the client (the server cannot select by an owner's uid). These
  // informers are the Manager's shared ones: whatever else reads them (a
  // lister of the same resource) sees only the held shards' objects too.
  // `ownership` is not owned and must outlive the Manager; null leaves the
  // controller unsharded. When not given, the Manager's
  // ShardOwnershipFor(name) decides.
  ControllerBuilder& Sharded(sharding::ShardOwnership* ownership);
  ControllerBuilder& Unsharded();

  // Builds the controller, starts its watches and adds it to the Manager.
  absl::Status Complete(std::shared_ptr<Reconciler> reconciler);
  // As Complete, returning the controller (owned by the Manager).
  absl::StatusOr<Controller*> Build(std::shared_ptr<Reconciler> reconciler);

 private:
  struct WatchSpec {
    client::Resource resource;
    std::shared_ptr<EventHandler> handler;  // null for Owns: made in Build
    std::vector<Predicate> predicates;
    cache::ListWatchOptions list_watch;
    bool is_for = false;
    bool owns = false;
  };

  // The filter of a sharded controller named `name`: sets the For
  // informer's shardSelector and adds the readiness check.
  absl::StatusOr<std::shared_ptr<ShardFilter>> NewShardFilter(
      const std::string& name, const WatchSpec& for_watch,
      const std::vector<const WatchSpec*>& owned,
      sharding::ShardOwnership* ownership);

  Manager& manager_;
  // In the order given; at most one is_for.
  std::vector<WatchSpec> watches_;
  std::vector<Predicate> global_predicates_;
  std::string name_;
  ControllerOptions options_;
  bool options_given_ = false;
  // Set by Sharded / Unsharded; unset: the Manager's choice.
  std::optional<sharding::ShardOwnership*> ownership_;
  // Misuse noticed while chaining, reported by Complete.
  std::vector<std::string> errors_;
  bool built_ = false;
};

}  // namespace kcr::controller

#endif  // KCR_RUNTIME_CONTROLLER_BUILDER_H_
