// FakeShardOwnership: a sharding::ShardOwnership whose held shards a test
// sets, telling the listeners as the Lease coordinator would (Acquire
// calls OnAcquired, Release calls OnReleasing and returns when it did).
#ifndef KCR_TEST_RUNTIME_CONTROLLER_FAKE_SHARD_OWNERSHIP_H_
#define KCR_TEST_RUNTIME_CONTROLLER_FAKE_SHARD_OWNERSHIP_H_

#include <algorithm>
#include <set>
#include <vector>

#include "absl/time/time.h"
#include "base/mutex.h"
#include "runtime/sharding/shard_ownership.h"

namespace kcr::testing {

class FakeShardOwnership final : public sharding::ShardOwnership {
 public:
  FakeShardOwnership(int shards, sharding::ShardBy by)
      : shards_(shards), by_(by) {}

  int shards() const override { return shards_; }
  sharding::ShardBy shard_by() const override { return by_; }
  bool Holds(int shard) const override {
    MutexLock lock(&mu_);
    return held_.count(shard) > 0;
  }
  std::vector<int> Held() const override {
    MutexLock lock(&mu_);
    return std::vector<int>(held_.begin(), held_.end());
  }
  void AddListener(sharding::ShardListener* listener) override {
    MutexLock lock(&mu_);
    listeners_.push_back(listener);
  }
  bool Settled() const override {
    MutexLock lock(&mu_);
    return settled_;
  }

  // Holds `shard` and tells the listeners.
  void Acquire(int shard) {
    std::vector<sharding::ShardListener*> listeners;
    {
      MutexLock lock(&mu_);
      held_.insert(shard);
      listeners = listeners_;
    }
    for (sharding::ShardListener* l : listeners) l->OnAcquired(shard);
  }
  // Tells the listeners `shard` goes (with `deadline`), then drops it.
  void Release(int shard, absl::Time deadline) {
    std::vector<sharding::ShardListener*> listeners;
    {
      MutexLock lock(&mu_);
      listeners = listeners_;
    }
    for (sharding::ShardListener* l : listeners)
      l->OnReleasing(shard, deadline);
    MutexLock lock(&mu_);
    held_.erase(shard);
  }
  // Holds `shards` from the start, telling no one (before AddListener).
  void Hold(const std::vector<int>& shards) {
    MutexLock lock(&mu_);
    held_.insert(shards.begin(), shards.end());
  }
  void SetSettled(bool settled) {
    MutexLock lock(&mu_);
    settled_ = settled;
  }

 private:
  const int shards_;
  const sharding::ShardBy by_;
  mutable Mutex mu_;
  std::set<int> held_ ABSL_GUARDED_BY(mu_);
  std::vector<sharding::ShardListener*> listeners_ ABSL_GUARDED_BY(mu_);
  bool settled_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace kcr::testing

#endif  // KCR_TEST_RUNTIME_CONTROLLER_FAKE_SHARD_OWNERSHIP_H_
