// RateLimitingQueue: a delaying queue whose retries are paced by a
// RateLimiter, the queue controllers use.
//
// A worker that fails on an item calls AddRateLimited(item) (the limiter
// decides the delay) and Done(item); one that succeeds calls Forget(item)
// and Done(item). Forget only clears the limiter's memory of the item.
#ifndef KCR_RUNTIME_WORKQUEUE_RATE_LIMITING_QUEUE_H_
#define KCR_RUNTIME_WORKQUEUE_RATE_LIMITING_QUEUE_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/time/time.h"
#include "glog/logging.h"
#include "runtime/workqueue/default_rate_limiters.h"
#include "runtime/workqueue/delaying_queue.h"
#include "runtime/workqueue/queue.h"
#include "runtime/workqueue/rate_limiter.h"

namespace kcr::workqueue {

template <typename T>
class RateLimitingInterface : public DelayingInterface<T> {
 public:
  // AddAfter(item, limiter.When(item)).
  virtual void AddRateLimited(const T& item) = 0;
  // The limiter stops tracking `item`. Done is still required.
  virtual void Forget(const T& item) = 0;
  // How many times `item` has been rate limited since it was forgotten.
  virtual int NumRequeues(const T& item) = 0;
};

template <typename T = std::string, typename Hash = absl::Hash<T>,
          typename Eq = std::equal_to<T>>
class RateLimitingQueue final : public RateLimitingInterface<T> {
 public:
  using Options = QueueOptions;

  // `limiter` null means DefaultControllerRateLimiter() on the queue's clock.
  explicit RateLimitingQueue(std::unique_ptr<RateLimiter<T>> limiter = nullptr,
                             Options options = {})
      : limiter_(limiter != nullptr
                     ? std::move(limiter)
                     : DefaultControllerRateLimiter<T>(options.clock)),
        queue_(std::move(options)) {}

  RateLimitingQueue(const RateLimitingQueue&) = delete;
  RateLimitingQueue& operator=(const RateLimitingQueue&) = delete;

  void Add(const T& item) override { queue_.Add(item); }
  void Add(T&& item) override { queue_.Add(std::move(item)); }
  size_t Len() const override { return queue_.Len(); }
  std::optional<T> Get() override { return queue_.Get(); }
  void Done(const T& item) override { queue_.Done(item); }
  void ShutDown() override { queue_.ShutDown(); }
  void ShutDownWithDrain() override { queue_.ShutDownWithDrain(); }
  bool ShuttingDown() const override { return queue_.ShuttingDown(); }
  void AddAfter(const T& item, absl::Duration delay) override {
    queue_.AddAfter(item, delay);
  }

  void AddRateLimited(const T& item) override {
    queue_.AddAfter(item, limiter_->When(item));
  }
  void Forget(const T& item) override { limiter_->Forget(item); }
  int NumRequeues(const T& item) override {
    return limiter_->NumRequeues(item);
  }

  size_t WaitingLen() const { return queue_.WaitingLen(); }

 private:
  const std::unique_ptr<RateLimiter<T>> limiter_;
  DelayingQueue<T, Hash, Eq> queue_;
};

}  // namespace kcr::workqueue

#endif  // KCR_RUNTIME_WORKQUEUE_RATE_LIMITING_QUEUE_H_
