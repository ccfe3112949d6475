// ShardFilter: the controller side of sharding (runtime/sharding's
// ShardOwnership). A sharded controller reconciles only the objects of the
// virtual shards its replica holds; the ShardFilter decides, for each key,
// whether it may be enqueued and whether it may be reconciled, and takes
// part in the hand-over of a shard (it is the controller's ShardListener).
//
// The shard of a key is the shard of the reconciled (For) object: of its
// metadata.uid, or of its namespace with ShardBy::kNamespace. An event of
// an owned object names its owner's shard through the owner reference's
// uid, so it needs no lookup. Any other key is looked up in the For
// resource's cache (a key whose object is not there, and that no event
// named, belongs to no shard this replica holds: it is not enqueued).
//
// What it guarantees:
//   - a reconcile never starts for a key whose shard is not held: Begin
//     checks at dequeue, under the same lock that OnReleasing takes to give
//     the shard up;
//   - OnReleasing returns once no reconcile of the shard is in flight, or
//     at its deadline (logged), after which keys of the shard still queued
//     are dropped when dequeued (Forgotten, not reconciled);
//   - OnAcquired enqueues the cached keys of the shard (at low priority, as
//     an initial list), and both tell the informer of the new held set
//     (on_held_changed), which narrows or widens its shardSelector.
//
// Thread-safe.
#ifndef KCR_RUNTIME_CONTROLLER_SHARD_FILTER_H_
#define KCR_RUNTIME_CONTROLLER_SHARD_FILTER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "runtime/cache/index.h"
#include "runtime/controller/handler.h"
#include "runtime/controller/reconciler.h"
#include "runtime/sharding/shard_ownership.h"

namespace kcr::controller {

struct ShardFilterOptions {
  // For logs.
  std::string controller;
  // Not owned; must outlive the filter. Its shards() and shard_by() are
  // read once.
  sharding::ShardOwnership* ownership = nullptr;
  // The For resource's cache: the shard of a key whose object is there is
  // that object's. Not owned; may be null (then only what events named).
  const cache::Indexer* for_cache = nullptr;
  // Told the shards held after each acquisition and release (on the
  // caller's thread, without the filter's lock), e.g. to set the For
  // informer's shardSelector.
  std::function<void(const std::vector<int>& held)> on_held_changed;
  // Null: the real clock.
  const Clock* clock = nullptr;
};

class ShardFilter final : public sharding::ShardListener {
 public:
  explicit ShardFilter(ShardFilterOptions options);

  // Where OnAcquired enqueues cached keys; set once, before the first
  // acquisition (the Controller does it).
  void SetQueue(std::shared_ptr<RequestQueue> queue) ABSL_LOCKS_EXCLUDED(mu_);

  int shards() const { return shards_; }
  sharding::ShardBy shard_by() const { return shard_by_; }

  // The shard of a reconciled object.
  int ShardOfObject(const api::Object& object) const;
  // The shards of the owners an object names (controller owner references
  // first), by their keys: what an owned object's event enqueues.
  void OwnerShards(const api::Object& object,
                   absl::flat_hash_map<Request, int>* shards) const;

  // Whether `request` may be enqueued: its shard (`hint` if given, else
  // looked up) is held. Remembers the shard of a key whose object is not
  // cached (a deletion, an owner not yet seen) for Begin.
  bool Admit(const Request& request, std::optional<int> hint)
      ABSL_LOCKS_EXCLUDED(mu_);
  // At dequeue: true, and the reconcile counts as in flight for its shard,
  // when the key's shard is held; false when it must be dropped.
  bool Begin(const Request& request) ABSL_LOCKS_EXCLUDED(mu_);
  // The reconcile Begin let start has returned.
  void End(const Request& request) ABSL_LOCKS_EXCLUDED(mu_);

  // ShardListener.
  void OnAcquired(int shard) override ABSL_LOCKS_EXCLUDED(mu_);
  void OnReleasing(int shard, absl::Time deadline) override
      ABSL_LOCKS_EXCLUDED(mu_);

  // The shards the filter lets through now, ascending.
  std::vector<int> Held() const ABSL_LOCKS_EXCLUDED(mu_);
  // Keys dropped at dequeue (their shard not held) and events' keys not
  // enqueued, since the start.
  int64_t dropped() const { return dropped_.load(); }
  int64_t filtered() const { return filtered_.load(); }

 private:
  // The shard of `request` from the For cache, else what was remembered.
  std::optional<int> LookUp(const Request& request) const
      ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<int> HeldLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string controller_;
  sharding::ShardOwnership* const ownership_;
  const int shards_;
  const sharding::ShardBy shard_by_;
  const cache::Indexer* const for_cache_;
  const std::function<void(const std::vector<int>&)> on_held_changed_;
  const Clock* const clock_;

  std::atomic<int64_t> dropped_{0};
  std::atomic<int64_t> filtered_{0};

  mutable Mutex mu_;
  CondVar released_cv_;
  std::shared_ptr<RequestQueue> queue_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<int> held_ ABSL_GUARDED_BY(mu_);
  // Shards of keys whose objects are not in the For cache.
  absl::flat_hash_map<Request, int> remembered_ ABSL_GUARDED_BY(mu_);
  // Reconciles in flight: per key its shard, and per shard how many.
  absl::flat_hash_map<Request, int> in_flight_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<int, int> in_flight_per_shard_ ABSL_GUARDED_BY(mu_);
};

// What a sharded watch's events say of their keys' shards: kFor, the
// reconciled objects (the key's shard is the object's); kOwned, objects
// owned by them (the shard of each owner reference's uid); kOther, nothing
// (the filter looks the key up).
enum class ShardedWatch { kFor, kOwned, kOther };

// The shardSelector that lists the `held` shards of `shards` by `by`: ""
// (everything) when all are held; one range of width 1 (practically
// nothing, filtered out on the client anyway) when none is.
std::string ShardSelectorFor(sharding::ShardBy by, const std::vector<int>& held,
                             int shards);

// Wraps `handler` so that only keys the filter admits reach the queue.
std::shared_ptr<EventHandler> ShardedEventHandler(
    std::shared_ptr<EventHandler> handler, std::shared_ptr<ShardFilter> filter,
    ShardedWatch watch);

}  // namespace kcr::controller

#endif  // KCR_RUNTIME_CONTROLLER_SHARD_FILTER_H_
