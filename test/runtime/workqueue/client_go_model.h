// ClientGoModel: client-go's util/workqueue algorithm (queue.go and
// delaying_queue.go), step by step and single-threaded, as the reference
// the differential tests hold kcr's queues to: a FIFO, a dirty set (added,
// not yet handed out) and a processing set; a waiting set ordered by ready
// time, where a second AddAfter keeps the earlier time; and the counts its
// metrics record (adds and depth).
#ifndef KCR_TEST_RUNTIME_WORKQUEUE_CLIENT_GO_MODEL_H_
#define KCR_TEST_RUNTIME_WORKQUEUE_CLIENT_GO_MODEL_H_

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace kcr::workqueue::model {

template <typename T>
class ClientGoModel {
 public:
  // queue.go Add.
  void Add(const T& item) {
    if (shutting_down_ || dirty_.count(item) != 0) return;
    ++adds_;
    ++depth_;
    dirty_.insert(item);
    if (processing_.count(item) != 0) return;
    queue_.push_back(item);
  }

  // queue.go Get, without blocking: nullopt when nothing is queued.
  std::optional<T> Get() {
    if (queue_.empty()) return std::nullopt;
    T item = queue_.front();
    queue_.pop_front();
    --depth_;
    processing_.insert(item);
    dirty_.erase(item);
    return item;
  }

  // queue.go Done. (kcr ignores Done for an item not being processed, a
  // documented deviation; the tests call Done only for processed items.)
  void Done(const T& item) {
    processing_.erase(item);
    if (dirty_.count(item) != 0) queue_.push_back(item);
  }

  size_t Len() const { return queue_.size(); }
  bool Processing(const T& item) const { return processing_.count(item) != 0; }
  const std::set<T>& processing() const { return processing_; }

  void ShutDown() { shutting_down_ = true; }

  // delaying_queue.go AddAfter at time `now` (nanoseconds): at once if the
  // delay is not positive, else waiting until now + delay, or until the
  // earlier ready time of the same item already waiting.
  void AddAfter(const T& item, int64_t now, int64_t delay) {
    if (shutting_down_) return;
    if (delay <= 0) {
      Add(item);
      return;
    }
    const int64_t ready = now + delay;
    auto it = ready_of_.find(item);
    if (it != ready_of_.end()) {
      if (ready >= it->second) return;
      waiting_.erase({it->second, item});
      it->second = ready;
    } else {
      ready_of_.emplace(item, ready);
    }
    waiting_.insert({ready, item});
  }

  // delaying_queue.go's loop at time `now`: adds every item whose ready
  // time has come, in ready order.
  void AdvanceTo(int64_t now) {
    while (!waiting_.empty() && waiting_.begin()->first <= now) {
      const T item = waiting_.begin()->second;
      waiting_.erase(waiting_.begin());
      ready_of_.erase(item);
      Add(item);
    }
  }

  size_t WaitingLen() const { return waiting_.size(); }

  // What client-go's metrics record: adds counted, items queued or dirty.
  int64_t adds() const { return adds_; }
  int64_t depth() const { return depth_; }

 private:
  std::deque<T> queue_;
  std::set<T> dirty_;
  std::set<T> processing_;
  std::set<std::pair<int64_t, T>> waiting_;
  std::map<T, int64_t> ready_of_;
  bool shutting_down_ = false;
  int64_t adds_ = 0;
  int64_t depth_ = 0;
};

}  // namespace kcr::workqueue::model

#endif  // KCR_TEST_RUNTIME_WORKQUEUE_CLIENT_GO_MODEL_H_
