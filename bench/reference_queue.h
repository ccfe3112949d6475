// ReferenceQueue: client-go's util/workqueue algorithm (v0.26) written in
// C++, for comparison only: one mutex and condition variable for everything,
// a FIFO of items, a "dirty" set (added, not yet handed out) and a
// "processing" set. The work-queue benchmark runs the same scenarios on it
// in the same process, so that kcr's figures can be read against this
// design on the same machine at the same moment, whatever the machine is
// doing; the published client-go figures remain the reference.
#ifndef KCR_BENCH_REFERENCE_QUEUE_H_
#define KCR_BENCH_REFERENCE_QUEUE_H_

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>

#include "absl/container/flat_hash_set.h"

namespace kcr::bench {

class ReferenceQueue {
 public:
  void Add(const std::string& item) {
    std::lock_guard<std::mutex> lock(mu_);
    if (shutting_down_ || dirty_.contains(item)) return;
    dirty_.insert(item);
    if (processing_.contains(item)) return;
    queue_.push_back(item);
    cv_.notify_one();
  }

  std::optional<std::string> Get() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !queue_.empty() || shutting_down_; });
    if (queue_.empty()) return std::nullopt;
    std::string item = std::move(queue_.front());
    queue_.pop_front();
    processing_.insert(item);
    dirty_.erase(item);
    return item;
  }

  void Done(const std::string& item) {
    std::lock_guard<std::mutex> lock(mu_);
    processing_.erase(item);
    if (dirty_.contains(item)) {
      queue_.push_back(item);
      cv_.notify_one();
    }
  }

  void ShutDown() {
    std::lock_guard<std::mutex> lock(mu_);
    shutting_down_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  absl::flat_hash_set<std::string> dirty_;
  absl::flat_hash_set<std::string> processing_;
  bool shutting_down_ = false;
};

}  // namespace kcr::bench

#endif  // KCR_BENCH_REFERENCE_QUEUE_H_
