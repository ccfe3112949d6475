// ReadySchedule: the ready times of the items a delaying queue keeps
// waiting, earliest first. The queue stores a waiting item in its own
// index (slot_index.h) with the ready time in its entry; the
// schedule holds (ready time, slot) pairs to find the next one due.
//
// Not an API: an implementation detail of the public queue templates
// (queue.h, delaying_queue.h), which include it, and installed with them
// for that reason only.
#ifndef KCR_RUNTIME_WORKQUEUE_READY_SCHEDULE_H_
#define KCR_RUNTIME_WORKQUEUE_READY_SCHEDULE_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

namespace kcr::workqueue::internal {

// (ready, slot) pairs usually arrive in non-decreasing ready order (the
// same delay for every item) and are appended to a sorted run in O(1); only
// out-of-order times go to a binary heap. A pair may be stale (its entry
// was given an earlier time since): the owner compares the pair's time
// with its entry's and skips it. Not thread-safe: the owner's lock guards
// it.
class ReadySchedule {
 public:
  struct Pending {
    int64_t ready;  // Unix nanoseconds
    uint32_t slot;
  };

  void Push(Pending p) {
    if (sorted_.empty() || p.ready >= sorted_.back().ready) {
      sorted_.push_back(p);
    } else {
      heap_.push_back(p);
      std::push_heap(heap_.begin(), heap_.end(), LaterFirst());
    }
  }

  // The earliest ready time (stale pairs included), or nullopt when empty.
  std::optional<int64_t> NextReady() const {
    if (sorted_.empty() && heap_.empty()) return std::nullopt;
    if (sorted_.empty()) return heap_.front().ready;
    if (heap_.empty()) return sorted_.front().ready;
    return std::min(sorted_.front().ready, heap_.front().ready);
  }

  // Removes and returns the pair due first. Not empty.
  Pending Pop() {
    Pending p;
    if (heap_.empty() ||
        (!sorted_.empty() && sorted_.front().ready <= heap_.front().ready)) {
      p = sorted_.front();
      sorted_.pop_front();
    } else {
      std::pop_heap(heap_.begin(), heap_.end(), LaterFirst());
      p = heap_.back();
      heap_.pop_back();
    }
    return p;
  }

 private:
  struct LaterFirst {
    bool operator()(const Pending& a, const Pending& b) const {
      return a.ready > b.ready;
    }
  };

  std::deque<Pending> sorted_;
  std::vector<Pending> heap_;
};

}  // namespace kcr::workqueue::internal

#endif  // KCR_RUNTIME_WORKQUEUE_READY_SCHEDULE_H_
