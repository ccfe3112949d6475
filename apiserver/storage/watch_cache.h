// WatchCache: one collection's recent events and the watchers of that
// collection, what kube-apiserver's Cacher (cacher.go, watch_cache.go,
// cache_watcher.go) is to one resource.
//
// Storage (storage.h) owns one WatchCache per collection. A write appends
// its event here with Append while it holds the storage lock; Append takes
// only this cache's short ring lock and wakes nobody. Once the storage lock
// is released, the writer calls Kick if Append asked for it, which wakes
// this cache's dispatcher thread (started with the first watcher) unless it
// is already at work. The dispatcher queues each event for the watchers of
// this collection whose namespace and selectors could match it, and wakes
// only those, once per batch. A watcher of pods is never woken by a write to
// configmaps, writers never wait for watchers, and nothing here takes the
// storage lock.
//
// Each CacheWatcher has its own bounded queue, drained by its owner's
// thread (an HTTP connection's), which filters, converts and writes the
// events without holding any lock but its own. The dispatcher never waits
// for a watcher: a watcher whose queue is full when an event arrives is
// terminated (its queue is dropped and its Next says so), as kube-apiserver
// terminates a watcher that cannot keep up. Its owner ends the stream; the
// client resumes from the last resourceVersion it got, or relists if the
// history no longer reaches it (Next then carries 410 Expired).
//
// History: the cache keeps the events of its collection that are still in
// the storage's bounded history (Storage evicts them in resourceVersion
// order), so a watch can start from a recent resourceVersion and gets them
// first; a watch from before the newest evicted event of this collection
// gets 410 Expired "too old resource version: N (M)".
//
// Time: Next waits on the injected Clock, so tests drive timeouts with
// test/fakes/fake_clock.h.
//
// Lock order: the storage lock, then a cache's ring lock; a cache's
// dispatch lock, then a watcher's lock, then the ring lock. The ring lock
// is innermost: nothing is called while it is held.
#ifndef KCR_APISERVER_STORAGE_WATCH_CACHE_H_
#define KCR_APISERVER_STORAGE_WATCH_CACHE_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/meta/watch_event_type.h"
#include "api/object.h"
#include "base/clock.h"
#include "base/mutex.h"

namespace kcr {
namespace apiserver {

// Stored events are ADDED, MODIFIED or DELETED.
using api::EventType;
using api::EventTypeName;

// One recorded write.
struct StoredEvent {
  EventType type = EventType::kAdded;
  int64_t resource_version = 0;
  std::string collection;
  // The object after the write; for kDeleted its last state, stamped with
  // the deletion's resourceVersion (as kube-apiserver sends it).
  api::ObjectPtr object;
  // The object before the write; null for kAdded.
  api::ObjectPtr previous;
};

// Events are immutable once recorded and shared by the history and every
// watcher that gets them.
using StoredEventPtr = std::shared_ptr<const StoredEvent>;

// What a watcher selects within its collection.
struct WatchFilter {
  // The namespace ("" for every namespace).
  std::string ns;
  // Label and field selectors (null: every object). Called on the writing
  // thread (to decide whom to wake) and on the watcher's; must be
  // thread-safe and must not call into Storage.
  std::function<bool(const api::Object&)> selects;

  bool Matches(const api::Object& o) const;
};

// One event as a watcher sends it: an object that starts matching the
// selectors comes as kAdded, one that stops matching as kDeleted (its
// previous state at the new resourceVersion), as kube-apiserver does.
struct WatchEvent {
  EventType type = EventType::kAdded;
  api::ObjectPtr object;
  int64_t resource_version = 0;
};

class WatchCache;

// One watch of one collection. Created by WatchCache::Watch (through
// Storage::Watch); destroying it unregisters it.
//
// Thread safety: Next is called by one thread at a time (the owner's);
// Interrupt, the counters and the destructor from any thread, but the
// destructor not concurrently with Next.
class CacheWatcher {
 public:
  struct Batch {
    // In resourceVersion order.
    std::vector<WatchEvent> events;
    // Every event up to this resourceVersion that the watcher selects has
    // been returned, in this batch or an earlier one: a bookmark may carry
    // it. Never decreases.
    int64_t resource_version = 0;
    // The watcher fell `queue_size` events behind and was terminated:
    // nothing more comes, end the stream.
    bool terminated = false;
    // With `terminated`: 410 Expired when the history no longer reaches
    // resource_version (the client must relist, so tell it); OK when the
    // client can resume from there (the stream just ends).
    absl::Status error;
  };

  ~CacheWatcher();
  CacheWatcher(const CacheWatcher&) = delete;
  CacheWatcher& operator=(const CacheWatcher&) = delete;

  // Waits until there are events, `deadline` passes on the clock, the
  // watcher is terminated, or Interrupt is called; then returns at most
  // `max` events (possibly none).
  Batch Next(absl::Time deadline, size_t max);

  // Makes the Next in progress, or the next one, return at once.
  void Interrupt();

  // Events queued for this watcher by dispatch, times dispatch woke its
  // owner, and whether dispatch terminated it. For tests and metrics.
  int64_t events_queued() const;
  int64_t wakeups() const;
  bool terminated() const;

 private:
  friend class WatchCache;
  CacheWatcher(WatchCache* cache, int64_t after, WatchFilter filter,
               const Clock* clock, size_t queue_size);

  // The dispatcher, with the cache's dispatch lock held: queues `e`.
  // Never blocks on the owner. Returns whether the owner must be woken
  // (WakeUp, once the batch is queued).
  bool Push(const StoredEventPtr& e);
  void WakeUp();

  WatchCache* const cache_;
  const WatchFilter filter_;
  const Clock* const clock_;
  const size_t queue_size_;
  // Events at or before this resourceVersion are not wanted.
  const int64_t after_;

  mutable Mutex mu_;
  CondVar cv_;
  // History events taken when the watch started, then the live queue.
  std::vector<StoredEventPtr> replay_ ABSL_GUARDED_BY(mu_);
  size_t replay_next_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<StoredEventPtr> queue_ ABSL_GUARDED_BY(mu_);
  int64_t position_ ABSL_GUARDED_BY(mu_);
  bool waiting_ ABSL_GUARDED_BY(mu_) = false;
  // A wake-up is on its way: further pushes need not signal again.
  bool notified_ ABSL_GUARDED_BY(mu_) = false;
  bool interrupted_ ABSL_GUARDED_BY(mu_) = false;
  bool terminated_ ABSL_GUARDED_BY(mu_) = false;
  int64_t events_queued_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t wakeups_ ABSL_GUARDED_BY(mu_) = 0;
};

struct WatchCacheOptions {
  // Events a watcher may have waiting before it is terminated. At least 1.
  size_t queue_size = 4096;
  const Clock* clock = Clock::Real();
};

class WatchCache {
 public:
  // `current_rv` is the storage's latest resourceVersion, published after
  // each write's Append; a watch from before `evicted_through` gets 410.
  WatchCache(std::string collection, const std::atomic<int64_t>* current_rv,
             int64_t evicted_through, WatchCacheOptions options);
  // Every watcher must be gone.
  ~WatchCache();
  WatchCache(const WatchCache&) = delete;
  WatchCache& operator=(const WatchCache&) = delete;

  const std::string& collection() const { return collection_; }

  // The write path, with the storage lock held, in resourceVersion order.
  // Append records `e`; it returns whether Kick must follow once the
  // storage lock is released (not when nobody watches, nor when the
  // dispatcher is at work already). Evict drops the oldest event, which
  // has resourceVersion `rv`. Compact drops every event: a watch from
  // before `rv` gets 410.
  bool Append(StoredEventPtr e);
  void Evict(int64_t rv);
  void Compact(int64_t rv);

  // Wakes the dispatcher.
  void Kick();

  // A watcher of the events after resourceVersion `after` that `filter`
  // selects: first those still in the history, then each new one. 410
  // Expired when the history no longer reaches `after`. The cache must
  // outlive the watcher.
  absl::StatusOr<std::unique_ptr<CacheWatcher>> Watch(int64_t after,
                                                      WatchFilter filter);

  // Interrupts every watcher (see CacheWatcher::Interrupt).
  void InterruptAll();

  // Events held, and watchers registered.
  size_t Size() const;
  size_t WatcherCount() const;

 private:
  friend class CacheWatcher;

  // The dispatcher thread: queues undispatched events for the watchers
  // that could want them, a batch at a time, until the cache goes.
  void DispatchLoop();
  absl::Status TooOldLocked(int64_t rv) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(ring_mu_);
  // 410 if a watch from `rv` would miss events, else OK.
  absl::Status CheckWatchable(int64_t rv) const;
  // Every event up to the returned resourceVersion has been queued for
  // every registered watcher that could want it.
  int64_t Progress() const;
  void Remove(CacheWatcher* w);
  std::vector<CacheWatcher*>* Bucket(std::string_view ns)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(dispatch_mu_);

  const std::string collection_;
  const std::atomic<int64_t>* const current_rv_;
  const WatchCacheOptions options_;

  // Serialises dispatch and (un)registration of watchers.
  mutable Mutex dispatch_mu_ ABSL_ACQUIRED_BEFORE(ring_mu_);
  // Watchers by namespace; "" for those of every namespace.
  absl::flat_hash_map<std::string, std::vector<CacheWatcher*>> watchers_
      ABSL_GUARDED_BY(dispatch_mu_);
  // Started with the first watcher.
  std::thread dispatcher_ ABSL_GUARDED_BY(dispatch_mu_);

  mutable Mutex ring_mu_;
  // This collection's events still in the storage's history, oldest first.
  std::deque<StoredEventPtr> ring_ ABSL_GUARDED_BY(ring_mu_);
  // Appended, not yet dispatched (never evicted).
  std::vector<StoredEventPtr> undispatched_ ABSL_GUARDED_BY(ring_mu_);
  int64_t evicted_through_ ABSL_GUARDED_BY(ring_mu_);
  int64_t appended_rv_ ABSL_GUARDED_BY(ring_mu_) = 0;
  int64_t dispatched_rv_ ABSL_GUARDED_BY(ring_mu_) = 0;
  // Mirrors the number of registered watchers, for Append's fast path.
  size_t watcher_count_ ABSL_GUARDED_BY(ring_mu_) = 0;
  // The dispatcher waits here, with the ring lock, for undispatched events.
  CondVar dispatch_cv_;
  // The dispatcher waits, and nobody has kicked it yet.
  bool dispatcher_idle_ ABSL_GUARDED_BY(ring_mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(ring_mu_) = false;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_STORAGE_WATCH_CACHE_H_
