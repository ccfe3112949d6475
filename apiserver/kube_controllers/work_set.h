// WorkSet: the keys an incremental built-in controller has yet to sync —
// kube-controller-manager's work queue without its threads. A key is held
// once: added again while waiting it keeps its place; added for later it
// comes due at the earliest time asked for. Keys due now come out in the
// order they were added.
//
// Thread safety: none; one controller's thread owns it.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_WORK_SET_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_WORK_SET_H_

#include <cstddef>
#include <deque>
#include <string>
#include <utility>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"

namespace kcr {
namespace apiserver {

class WorkSet {
 public:
  // Due now.
  void Add(const std::string& key) {
    if (ready_set_.insert(key).second) ready_.push_back(key);
  }

  // Due at `at` (now if it has passed), unless it is due sooner already.
  void AddAt(const std::string& key, absl::Time at) {
    if (ready_set_.count(key) > 0) return;
    auto [it, inserted] = due_at_.try_emplace(key, at);
    if (!inserted) {
      if (it->second <= at) return;
      later_.erase({it->second, key});
      it->second = at;
    }
    later_.insert({at, key});
  }

  // Moves the keys due at `now` to the ready ones, then hands out the
  // first ready key; false when none is ready.
  bool Next(absl::Time now, std::string* key) {
    while (!later_.empty() && later_.begin()->first <= now) {
      auto first = later_.begin();
      due_at_.erase(first->second);
      Add(first->second);
      later_.erase(first);
    }
    if (ready_.empty()) return false;
    *key = std::move(ready_.front());
    ready_.pop_front();
    ready_set_.erase(*key);
    return true;
  }

  // When the first key waiting for later comes due, or InfiniteFuture;
  // InfinitePast while keys are ready.
  absl::Time NextDue() const {
    if (!ready_.empty()) return absl::InfinitePast();
    return later_.empty() ? absl::InfiniteFuture() : later_.begin()->first;
  }

  size_t ready() const { return ready_.size(); }
  size_t waiting() const { return later_.size(); }

 private:
  std::deque<std::string> ready_;
  absl::flat_hash_set<std::string> ready_set_;
  absl::btree_set<std::pair<absl::Time, std::string>> later_;
  absl::flat_hash_map<std::string, absl::Time> due_at_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_WORK_SET_H_
