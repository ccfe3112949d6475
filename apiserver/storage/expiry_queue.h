// ExpiryQueue: the deadlines of objects that live for a time after their
// last write — what etcd's leases are to kube-apiserver's --event-ttl.
//
// One deadline per (collection, key): setting it again replaces the old
// one, so the queue holds exactly one entry per object that has a TTL and
// never grows with updates. The earliest deadline is found in O(1) and
// every operation is O(log n): nothing ever scans the objects.
//
// Not thread-safe: Storage keeps it under its lock.
#ifndef KCR_APISERVER_STORAGE_EXPIRY_QUEUE_H_
#define KCR_APISERVER_STORAGE_EXPIRY_QUEUE_H_

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"

namespace kcr {
namespace apiserver {

class ExpiryQueue {
 public:
  // An object: its collection and its key within it.
  using Entry = std::pair<std::string, std::string>;

  // Sets (or moves) the deadline of the object.
  void Set(std::string_view collection, std::string_view key,
           absl::Time deadline);
  // Forgets the object (deleted by someone else). No-op when absent.
  void Erase(std::string_view collection, std::string_view key);

  // Removes and returns, earliest first, every object whose deadline is
  // at or before `now`.
  std::vector<Entry> PopDue(absl::Time now);

  // The earliest deadline; nullopt when empty.
  std::optional<absl::Time> NextDeadline() const;

  size_t size() const { return by_object_.size(); }

 private:
  // (deadline, collection, key), earliest first.
  using Item = std::tuple<absl::Time, std::string, std::string>;
  std::set<Item> by_deadline_;
  // collection + '\0' + key -> its deadline, to find its Item.
  absl::flat_hash_map<std::string, absl::Time> by_object_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_STORAGE_EXPIRY_QUEUE_H_
