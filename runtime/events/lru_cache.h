// LruCache: a map bounded to a number of entries that forgets the least
// recently used one when full, as the groupcache LRU client-go's event
// correlator keeps its state in. Not thread-safe: the correlator's owner
// serialises access.
//
// Not an API: an implementation detail of EventCorrelator
// (event_correlator.h), which includes it, and installed with it for that
// reason only.
#ifndef KCR_RUNTIME_EVENTS_LRU_CACHE_H_
#define KCR_RUNTIME_EVENTS_LRU_CACHE_H_

#include <cstddef>
#include <list>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace kcr::events::internal {

template <typename V>
class LruCache {
 public:
  // `capacity` > 0.
  explicit LruCache(size_t capacity) : capacity_(capacity) {}

  // The value for `key`, marked as most recently used; null when absent.
  // Valid until the next Add.
  V* Get(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    entries_.splice(entries_.begin(), entries_, it->second);
    return &it->second->second;
  }

  // Sets `key` to `value`, most recently used, evicting the least recently
  // used entry when the cache is full.
  void Add(const std::string& key, V value) {
    if (V* existing = Get(key)) {
      *existing = std::move(value);
      return;
    }
    entries_.emplace_front(key, std::move(value));
    index_[key] = entries_.begin();
    if (entries_.size() > capacity_) {
      index_.erase(entries_.back().first);
      entries_.pop_back();
    }
  }

  size_t size() const { return entries_.size(); }

 private:
  using Entry = std::pair<std::string, V>;
  const size_t capacity_;
  std::list<Entry> entries_;  // most recently used first
  absl::flat_hash_map<std::string, typename std::list<Entry>::iterator> index_;
};

}  // namespace kcr::events::internal

#endif  // KCR_RUNTIME_EVENTS_LRU_CACHE_H_
