// Storage: the local API server's object store — what etcd plus the watch
// cache are to kube-apiserver. It keeps every object of every resource in
// memory, stamps each write with the next value of one global, strictly
// increasing resourceVersion, and records each write as an event in a
// bounded history from which watches are served.
//
// Storage knows nothing of Kubernetes semantics (uids, generations,
// finalizers, validation): that is the Registry's job (registry.h), which
// decides each write inside an UpdateFunc that Storage runs atomically. In-
// process controllers normally use the Registry; they may read Storage
// directly (Get, List, WaitForEvents) for speed.
//
// Collections are named by a storage key, "<group>/<resource>" ("/pods",
// "apps/deployments"); every served version of a resource shares one. Keys
// inside a collection are "<namespace>/<name>" ("/<name>" for cluster-scoped
// objects), so a listing comes out in etcd's order: namespace, then name.
//
// Every write produces exactly one event, so the events in the history have
// consecutive resourceVersions: event N is at index N - first_rv. Listing
// at a resourceVersion older than the history (after it filled up or was
// compacted) fails with 410 Expired "too old resource version: N (M)".
//
// Watches are per collection (watch_cache.h): each collection keeps its
// own events of the history, its own watchers and its own dispatcher. A
// write appends its event to its collection under the storage lock and,
// with the lock released, wakes that collection's dispatcher, which hands
// the event to the watchers whose namespace and selectors could match;
// nobody else is woken, writes never wait for watchers, and watchers never
// take the storage lock. A watch from before the newest evicted event of
// its collection gets 410.
//
// Objects of a collection given a time to live (StorageOptions::ttl, as
// kube-apiserver gives Events with --event-ttl through etcd leases) are
// deleted that long after their last write, creation or update, by a
// thread of Storage's own: a DELETED event like any other, so watchers see
// it. The deadlines sit in an ExpiryQueue (expiry_queue.h), one per object,
// moved by each write: nothing scans the objects.
//
// Thread safety: every method may be called from any thread. UpdateFuncs
// run with the storage lock held: they must not call back into Storage.
// Objects handed out are immutable and shared.
#ifndef KCR_APISERVER_STORAGE_STORAGE_H_
#define KCR_APISERVER_STORAGE_STORAGE_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "apiserver/storage/expiry_queue.h"
#include "apiserver/storage/watch_cache.h"
#include "base/clock.h"
#include "base/mutex.h"

namespace kcr {
namespace apiserver {

struct StorageOptions {
  // Events kept for watches. At least 1.
  size_t history_size = 10000;
  // The resourceVersion of an empty store; the first write gets the next.
  int64_t initial_resource_version = 1;
  // Events a watcher may have waiting before it is terminated (see
  // watch_cache.h). At least 1.
  size_t watch_queue_size = 4096;
  // The clock watchers wait on, and time-to-live deadlines are kept on.
  const Clock* clock = Clock::Real();
  // Collections (storage keys, "/events") whose objects are deleted this
  // long after their last write. A collection absent, or with a duration
  // <= 0, keeps its objects until they are deleted.
  absl::flat_hash_map<std::string, absl::Duration> ttl;
};

class Storage {
 public:
  // What an UpdateFunc decides to do with the object.
  struct Mutation {
    enum class Op { kKeep, kPut, kRemove };
    Op op = Op::kKeep;
    // For kPut: the new object (its resourceVersion is overwritten).
    std::optional<api::ObjectBuilder> object;

    static Mutation Keep() { return Mutation(); }
    static Mutation Put(api::ObjectBuilder object) {
      Mutation m;
      m.op = Op::kPut;
      m.object = std::move(object);
      return m;
    }
    static Mutation Remove() {
      Mutation m;
      m.op = Op::kRemove;
      return m;
    }
  };
  // Decides a write given the current object (null when absent). An error
  // aborts the write and is returned by Write.
  using UpdateFunc =
      std::function<absl::StatusOr<Mutation>(const api::ObjectPtr& current)>;

  struct WriteResult {
    // kKeep: the current object (null if absent); kPut: the stored object;
    // kRemove: the removed object stamped with the deletion's RV.
    api::ObjectPtr object;
    api::ObjectPtr previous;
    Mutation::Op op = Mutation::Op::kKeep;
    // The event recorded, or kAdded/0 for kKeep.
    EventType event = EventType::kAdded;
  };

  // One page of a listing.
  struct ListResult {
    std::vector<api::ObjectPtr> items;
    // The resourceVersion the listing reflects.
    int64_t resource_version = 0;
    // The key after the last item when `limit` cut the list short; empty
    // when the listing is complete.
    std::string continue_key;
    // Objects in range after this page (only counted without a filter).
    int64_t remaining = 0;
  };

  struct ListOptions {
    // The namespace to list ("" lists every namespace).
    std::string ns;
    // List the state as of this resourceVersion (0: the current state). An
    // older state is rebuilt from the history; older than the history is
    // 410 Expired.
    int64_t at_resource_version = 0;
    // Start at this key (inclusive), as returned in continue_key.
    std::string start_key;
    // At most this many matching items (0: no limit).
    int64_t limit = 0;
    // Only objects for which this returns true (null: all).
    std::function<bool(const api::Object&)> filter;
  };

  explicit Storage(StorageOptions options = {});
  // StopExpiring()s.
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  // The key of an object within its collection.
  static std::string Key(std::string_view ns, std::string_view name);

  // A check of another object made in the write's own hold, before `fn`:
  // what it checks still holds when the write is stored (as kube's
  // NamespaceLifecycle admission: the namespace exists and is not
  // terminating when an object is created in it). An error aborts the
  // write and is returned by Write.
  struct Precondition {
    std::string_view collection;
    std::string_view ns;
    std::string_view name;
    std::function<absl::Status(const api::ObjectPtr& object)> check;
  };

  // Runs `fn` once on the current object under the lock and applies its
  // decision, recording an event for kPut and kRemove. With a
  // precondition, its check runs first in the same hold.
  absl::StatusOr<WriteResult> Write(std::string_view collection,
                                    std::string_view ns, std::string_view name,
                                    const UpdateFunc& fn,
                                    const Precondition* precondition = nullptr);

  // The object, or null.
  api::ObjectPtr Get(std::string_view collection, std::string_view ns,
                     std::string_view name) const;
  // The same by the object's key within its collection (Key(ns, name)), as
  // controllers queue them.
  api::ObjectPtr GetByKey(std::string_view collection,
                          std::string_view key) const;

  // Lists a collection (see ListOptions).
  absl::StatusOr<ListResult> List(std::string_view collection,
                                  const ListOptions& options) const;

  // Number of objects in a collection.
  size_t Count(std::string_view collection) const;

  // Every object of a collection in one namespace ("" for all), current
  // state, without filtering. For controllers.
  std::vector<api::ObjectPtr> Snapshot(std::string_view collection,
                                       std::string_view ns = "") const;

  // The resourceVersion of the latest write.
  int64_t CurrentResourceVersion() const;
  // The oldest resourceVersion a watch can start from.
  int64_t OldestResourceVersion() const;

  // Watches one collection: the events after resourceVersion `after` that
  // `filter` selects, first those still in the history, then each new one
  // as it is written (see CacheWatcher). 410 Expired when the history of
  // the collection no longer reaches `after`. Storage must outlive the
  // watcher.
  absl::StatusOr<std::unique_ptr<CacheWatcher>> Watch(
      std::string_view collection, int64_t after, WatchFilter filter);

  // Events of `collection` ("" for every collection) with resourceVersion
  // greater than `after`, at most `max`, for in-process controllers that
  // follow every collection at once (ControllerRunner). Blocks until at
  // least one event is available, `deadline` (real time) passes, or
  // `cancelled()` returns true after Interrupt(); then returns what is
  // available (possibly nothing). `*scanned_to` is set to the
  // resourceVersion up to which the history was examined: pass it as
  // `after` next time. 410 Expired when `after` is older than the history.
  absl::StatusOr<std::vector<StoredEventPtr>> WaitForEvents(
      std::string_view collection, int64_t after, absl::Time deadline,
      size_t max, const std::function<bool()>& cancelled,
      int64_t* scanned_to) const;

  // Wakes every WaitForEvents so it re-checks `cancelled`, and interrupts
  // every watcher (CacheWatcher::Interrupt).
  void Interrupt();

  // Drops the whole history: a watch from any resourceVersion before now
  // gets 410 (fault injection; kube-apiserver compacts etcd every 5 min).
  void Compact();

  // Events currently held.
  size_t HistorySize() const;

  // The values an object is filed under in an index (client-go's
  // IndexFunc), appended to `values`; none leaves the object out. Runs
  // under the storage lock on every write: it must be cheap and must not
  // call into Storage.
  using IndexFunc = std::function<void(const api::Object& object,
                                       std::vector<std::string>* values)>;

  // Files every object of every collection, those stored now and those
  // written later, under the values `fn` gives in index `name` (client-go's
  // AddIndexers). Returns false, and changes nothing, when an index of that
  // name exists already. Indexing what is stored costs one pass; each
  // later write costs `fn` on the object before and after it.
  bool AddIndex(std::string name, IndexFunc fn);

  // The current objects of `collection` filed under `value` in index
  // `name`, in key order (none when there is no such index). Costs the
  // objects returned, not the collection.
  std::vector<api::ObjectPtr> ByIndex(std::string_view collection,
                                      std::string_view name,
                                      std::string_view value) const;

  // The same across every collection, as (collection, object) pairs in
  // collection, then key order.
  std::vector<std::pair<std::string, api::ObjectPtr>> ByIndexAll(
      std::string_view name, std::string_view value) const;
  // Objects waiting for their time to live to run out.
  size_t PendingExpiries() const;

  // Stops expiring objects and joins the thread that does it (nothing
  // expires after). Idempotent; the destructor calls it.
  void StopExpiring();

  // The seams through which the server sees every write (its write log and
  // fault injection). Each runs on the writing thread; unset members cost
  // nothing.
  struct WriteObserver {
    // Before each Write's precondition and UpdateFunc, under the storage
    // lock: an error refuses the write and is what Write returns.
    std::function<absl::Status()> admit;
    // Each event, under the storage lock, in resourceVersion order, before
    // any watcher can see it.
    std::function<void(const StoredEvent& event)> recorded;
    // After a Write (or an expiry pass) that recorded events, with the lock
    // released, before Write returns.
    std::function<void()> written;
  };
  // Set once, before the Storage is shared between threads. `admit` and
  // `recorded` must be cheap and must not call into Storage.
  void SetWriteObserver(WriteObserver observer) {
    observer_ = std::move(observer);
  }

 private:
  // Ordered by key (a listing's order); looked up by string_view.
  using Collection = std::map<std::string, api::ObjectPtr, std::less<>>;
  struct Recorded {
    StoredEventPtr event;
    WatchCache* cache;
  };

  absl::StatusOr<WriteResult> WriteLocked(std::string_view collection,
                                          std::string_view ns,
                                          std::string_view name,
                                          const UpdateFunc& fn,
                                          WatchCache** dispatch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  api::ObjectPtr GetLocked(std::string_view collection,
                           std::string_view key) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The message kube-apiserver's watch cache gives for a too old RV.
  absl::Status TooOld(int64_t rv) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records `event` in the history and its collection's watch cache; sets
  // `*dispatch` to the cache when its dispatcher must be kicked.
  void Record(StoredEvent event, WatchCache** dispatch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  WatchCache* CacheLocked(std::string_view collection)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The time to live of `collection`'s objects; zero for none.
  absl::Duration TtlOf(std::string_view collection) const;
  // The expiry thread: waits for the earliest deadline, deletes what is due.
  void ExpireLoop();
  // Deletes every object whose deadline has passed; adds the watch caches
  // to kick to `dispatch`.
  void ExpireDueLocked(std::vector<WatchCache*>* dispatch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // One index: value -> (collection, key) of the objects filed under it.
  struct Index {
    IndexFunc fn;
    absl::flat_hash_map<std::string,
                        absl::btree_set<std::pair<std::string, std::string>>>
        entries;
  };
  // Moves the object at (collection, key) from the values `before` is
  // filed under to those of `after` (either null) in every index.
  void ReindexLocked(const std::string& collection, const std::string& key,
                     const api::Object* before, const api::Object* after)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const StorageOptions options_;
  mutable Mutex mu_;
  // WaitForEvents waits here; signalled after the lock is released.
  mutable CondVar events_cv_;
  absl::flat_hash_map<std::string, Collection> collections_
      ABSL_GUARDED_BY(mu_);
  int64_t resource_version_ ABSL_GUARDED_BY(mu_);
  // resource_version_, published after each write's event is in its
  // watch cache (read by watchers without the lock).
  std::atomic<int64_t> published_rv_;
  // One per collection ever written or watched; never removed. After
  // published_rv_, which they read, so that they go first.
  absl::flat_hash_map<std::string, std::unique_ptr<WatchCache>> caches_
      ABSL_GUARDED_BY(mu_);
  // history_[i] has resourceVersion first_rv_ + i.
  std::deque<Recorded> history_ ABSL_GUARDED_BY(mu_);
  int64_t first_rv_ ABSL_GUARDED_BY(mu_);
  // A watch cache created now gets 410 before this (the last compaction).
  int64_t compacted_through_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Index, std::less<>> indexes_ ABSL_GUARDED_BY(mu_);

  // Time to live: the deadlines, and the expiry thread's wake-up (a write
  // that moved the earliest deadline, or the destructor).
  ExpiryQueue expiry_ ABSL_GUARDED_BY(mu_);
  CondVar expiry_cv_;
  bool expiry_moved_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  WriteObserver observer_;
  // Last: started once everything above is built (only with a ttl).
  std::thread expirer_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_STORAGE_STORAGE_H_
