// Store: a keyed collection of objects, as client-go's cache.Store. The
// Reflector writes into one (a FIFO that feeds an informer, or a plain
// cache); informers and listers read from one.
//
// Keys are client-go's: "namespace/name", or "name" for cluster-scoped
// objects (MetaNamespaceKey). Objects are immutable and shared; nothing
// returned by a Store may be modified (api::Object cannot be).
#ifndef KCR_RUNTIME_CACHE_STORE_H_
#define KCR_RUNTIME_CACHE_STORE_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/object.h"

namespace kcr::cache {

// "namespace/name", or "name" when the object has no namespace (client-go's
// MetaNamespaceKeyFunc). kInvalidArgument when the object has no name.
absl::StatusOr<std::string> MetaNamespaceKey(const api::Object& object);

// Whether `key` is `object`'s MetaNamespaceKey, without building it.
bool MetaNamespaceKeyIs(const api::Object& object, std::string_view key);

// Splits a key made by MetaNamespaceKey into {namespace, name} ("" for a
// cluster-scoped key). kInvalidArgument for a key with more than one '/'
// or an empty name.
absl::StatusOr<std::pair<std::string, std::string>> SplitMetaNamespaceKey(
    std::string_view key);

// Every implementation is thread-safe.
class Store {
 public:
  virtual ~Store() = default;

  // Add and Update insert or replace the object under its key; Delete
  // removes the key. Errors only for an object without a key.
  virtual absl::Status Add(api::ObjectPtr object) = 0;
  virtual absl::Status Update(api::ObjectPtr object) = 0;
  virtual absl::Status Delete(api::ObjectPtr object) = 0;

  // Every object / every key, in no particular order.
  virtual std::vector<api::ObjectPtr> List() const = 0;
  virtual std::vector<std::string> ListKeys() const = 0;

  // The object under `key`, or null.
  virtual api::ObjectPtr GetByKey(std::string_view key) const = 0;
  // The object under `object`'s key, or null.
  api::ObjectPtr Get(const api::Object& object) const {
    absl::StatusOr<std::string> key = MetaNamespaceKey(object);
    return key.ok() ? GetByKey(*key) : nullptr;
  }

  // Replaces the whole contents with `objects`, atomically for readers.
  // `resource_version` is the version of the list they came from.
  virtual absl::Status Replace(std::vector<api::ObjectPtr> objects,
                               std::string resource_version) = 0;

  // A periodic resync (FIFOs queue a Sync for every known object); a
  // no-op for plain stores.
  virtual absl::Status Resync() = 0;

  // The writes between HoldWakeups and ReleaseWakeups come as one run (the
  // events one read of a watch brought): a store whose consumer waits for
  // writes (a FIFO) may wake it once, at ReleaseWakeups, rather than on
  // each write. Every write still applies at once, and is visible to
  // readers at once. The caller must release before it waits for anything
  // else, so that a held wake-up is never delayed by more than the run's
  // own writes. Calls pair up and may nest, from any thread; plain stores
  // ignore them.
  virtual void HoldWakeups() {}
  virtual void ReleaseWakeups() {}
};

}  // namespace kcr::cache

#endif  // KCR_RUNTIME_CACHE_STORE_H_
