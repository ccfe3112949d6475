// ThreadSafeStore: the Indexer informers keep their cache in, as
// client-go's threadSafeMap plus storeIndex (tools/cache/
// thread_safe_store.go).
//
// Objects are kept by MetaNamespaceKey; every named index maps each value
// its IndexFunc returns to the set of objects indexed under it. Index sets
// that become empty are dropped, so ListIndexFuncValues only reports values
// some object still has. An update whose index values are unchanged does
// not touch that index.
//
// Concurrency: every method is thread-safe. Readers (Get, ByIndex, List,
// ...) share a reader-writer lock and never block each other; writers hold
// it alone for a hash-map update plus the index functions of the old and
// new object. Two operations are built so that they never hold the lock in
// proportion to the store's size:
//   - Replace/ReplaceAll build the new contents and indexes outside the
//     lock and swap them in (O(1) under the lock); readers see the old
//     contents or the new, never a mix. The old objects are released
//     outside the lock as well.
//   - List/ListKeys copy a snapshot of the store's chunk table under the
//     read lock (one pointer per 256 objects) and expand it after
//     releasing the lock. A writer that next changes a chunk a snapshot
//     shares copies that chunk first (256 pointers), so snapshots stay
//     immutable.
// AddIndexers indexes the existing objects under the write lock, as
// client-go does: it is meant for start-up.
//
// Index functions run under the lock; they must be fast and must not call
// back into the store.
//
// Ownership: objects are immutable and shared; what the store returns stays
// valid after the store drops or replaces it. Objects passed in must not be
// null.
#ifndef KCR_RUNTIME_CACHE_THREAD_SAFE_STORE_H_
#define KCR_RUNTIME_CACHE_THREAD_SAFE_STORE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/object.h"
#include "base/rw_mutex.h"
#include "runtime/cache/index.h"

namespace kcr::cache {

class ThreadSafeStore : public Indexer {
 public:
  // Objects by key, as ReplaceAll hands back the previous contents.
  using ItemMap = absl::flat_hash_map<std::string, api::ObjectPtr>;

  // Informers pass {{kNamespaceIndex, MetaNamespaceIndexFunc()}}.
  explicit ThreadSafeStore(Indexers indexers = {});
  ~ThreadSafeStore() override;
  ThreadSafeStore(const ThreadSafeStore&) = delete;
  ThreadSafeStore& operator=(const ThreadSafeStore&) = delete;

  // Store. Add and Update are the same operation (Upsert);
  // kInvalidArgument for an object without a name. Delete of an unknown
  // key is a no-op.
  absl::Status Add(api::ObjectPtr object) override;
  absl::Status Update(api::ObjectPtr object) override;
  absl::Status Delete(api::ObjectPtr object) override;
  std::vector<api::ObjectPtr> List() const override;
  std::vector<std::string> ListKeys() const override;
  api::ObjectPtr GetByKey(std::string_view key) const override;
  // ReplaceAll; kInvalidArgument (after storing the rest) when some objects
  // had no name. The resource version is not kept.
  absl::Status Replace(std::vector<api::ObjectPtr> objects,
                       std::string resource_version) override;
  // A no-op, as for client-go's plain stores.
  absl::Status Resync() override;

  // Indexer. ByIndex, IndexKeys and Index return kNotFound for an unknown
  // index name.
  absl::StatusOr<std::vector<api::ObjectPtr>> ByIndex(
      std::string_view index_name, std::string_view value) const override;
  absl::StatusOr<std::vector<std::string>> IndexKeys(
      std::string_view index_name, std::string_view value) const override;
  absl::StatusOr<std::vector<api::ObjectPtr>> Index(
      std::string_view index_name, const api::Object& object) const override;
  std::vector<std::string> ListIndexFuncValues(
      std::string_view index_name) const override;
  // kAlreadyExists (and nothing added) when any name is already an index.
  absl::Status AddIndexers(Indexers indexers) override;
  std::vector<std::string> IndexNames() const override;

  // What the informer uses to tell adds from updates.
  //
  // Inserts or replaces `object` under its key and returns the object that
  // was there (null if none). An object without a name cannot be keyed:
  // it is logged and not stored, and null is returned (callers that need
  // the error use Add, or key the object first as the FIFO does). The key
  // is read from the object, never copied into a string.
  api::ObjectPtr Upsert(api::ObjectPtr object);
  // Removes `key` and returns what was there (null if none).
  api::ObjectPtr Remove(std::string_view key);
  // Replaces the whole contents with `objects` and returns the previous
  // contents. A later object with the same key as an earlier one wins.
  // Objects without a name are left out (and logged).
  ItemMap ReplaceAll(std::vector<api::ObjectPtr> objects);

  // The number of objects.
  size_t size() const;

  // Opaque outside thread_safe_store.cc.
  struct State;

 private:
  // The epoch a chunk must carry to be written in place (see List).
  uint64_t WriteEpoch() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return list_epoch_.load(std::memory_order_relaxed);
  }
  // ReplaceAll, counting the objects left out.
  ItemMap ReplaceCounting(std::vector<api::ObjectPtr> objects, size_t* skipped);

  mutable RwMutex mu_;
  Indexers indexers_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<State> state_ ABSL_GUARDED_BY(mu_);
  // Bumped by every List snapshot (under the read lock, hence atomic). A
  // chunk whose epoch differs may be shared with a snapshot, and a writer
  // copies it before changing it.
  mutable std::atomic<uint64_t> list_epoch_{1};
};

}  // namespace kcr::cache

#endif  // KCR_RUNTIME_CACHE_THREAD_SAFE_STORE_H_
