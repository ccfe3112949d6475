// ShardOwnership: which of a sharded controller's virtual shards this
// replica owns, and the hand-over protocol between the owner (the Lease
// coordinator, shard_coordinator.h) and the controller that acts on the
// shards' objects.
//
// A sharded controller divides the 64-bit hash space into `shards()` equal
// ranges (api::ShardRange::Of); an object belongs to the shard whose range
// holds the FNV-1a hash (api::Fnv1a64) of its metadata.uid, or of its
// namespace (ShardBy::kNamespace); an owned object belongs to its
// controller owner's shard (the owner's uid is in its ownerReference).
//
// Hand-over, per shard, in this order:
//   acquire:  the replica holds the shard's Lease, then calls
//             ShardListener::OnAcquired: the controller starts enqueueing
//             the shard's keys (and enqueues those it already has cached);
//   release:  (a shard given back to balance, or a Lease about to expire
//             unrenewed) ShardListener::OnReleasing: the controller stops
//             enqueueing the shard's keys, and returns once no reconcile of
//             the shard is in flight, or at `deadline`; only then is the
//             Lease released (or left to expire), so no other replica
//             reconciles the shard's objects while this one still does.
//
// Thread safety: implementations are thread-safe; Holds and ShardOf are
// cheap and called on every event.
#ifndef KCR_RUNTIME_SHARDING_SHARD_OWNERSHIP_H_
#define KCR_RUNTIME_SHARDING_SHARD_OWNERSHIP_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "api/selector/shard_selector.h"

namespace kcr::sharding {

// What an object's shard is computed from.
enum class ShardBy { kUid, kNamespace };

// Told of the shards a replica gains and gives up; see the hand-over above.
class ShardListener {
 public:
  virtual ~ShardListener() = default;
  // The replica holds `shard` from now on (until OnReleasing).
  virtual void OnAcquired(int shard) = 0;
  // The replica is giving `shard` up: stop enqueueing its keys, wait (at
  // most until `deadline`) for its in-flight reconciles to end, and return.
  virtual void OnReleasing(int shard, absl::Time deadline) = 0;
};

class ShardOwnership {
 public:
  virtual ~ShardOwnership() = default;

  // How many virtual shards the hash space is divided into.
  virtual int shards() const = 0;
  virtual ShardBy shard_by() const = 0;

  // Whether this replica holds `shard` now.
  virtual bool Holds(int shard) const = 0;
  // The shards held now, ascending.
  virtual std::vector<int> Held() const = 0;

  // Adds a listener (before Run); it is told of every later change.
  virtual void AddListener(ShardListener* listener) = 0;

  // True once the replica has taken its first share (or knows it gets
  // none), for /readyz.
  virtual bool Settled() const = 0;
};

// The shard whose api::ShardRange::Of(shard, shards) holds `hash`
// (shards > 0).
int ShardOfHash(uint64_t hash, int shards);

// The shard of an object (its uid, or its namespace with kNamespace; for
// an owned object pass the controller owner's uid).
int ShardOf(ShardBy by, std::string_view uid, std::string_view ns, int shards);

// The shardSelector of `held` shards among `shards`: adjacent shards joined
// into one range, ranges joined by ||. Empty (matches all) is never
// returned for an empty `held`: callers list nothing then. (What is
// returned then is one zero-width range, which matches no hash and is not
// a selector the server accepts.) `held` need not be sorted; duplicates
// and shards outside [0, shards) are ignored.
api::ShardSelector SelectorFor(ShardBy by, const std::vector<int>& held,
                               int shards);

}  // namespace kcr::sharding

#endif  // KCR_RUNTIME_SHARDING_SHARD_OWNERSHIP_H_
