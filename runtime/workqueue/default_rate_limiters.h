// The rate limiters of client-go's default_rate_limiters.go.
//
//  ItemExponentialFailureRateLimiter  base * 2^failures per item, capped
//  BucketRateLimiter                  one token bucket for the whole queue
//  ItemFastSlowRateLimiter            fast delay for N attempts, then slow
//  MaxOfRateLimiter                   asks every limiter, returns the longest
//  WithMaxWaitRateLimiter             caps another limiter's delay
//  DefaultControllerRateLimiter()     MaxOf(exponential 5 ms..1000 s,
//                                           bucket 10 qps / burst 100)
//
// Remember to call Forget when an item succeeds: per-item limiters keep a
// failure count for every item until then.
#ifndef KCR_RUNTIME_WORKQUEUE_DEFAULT_RATE_LIMITERS_H_
#define KCR_RUNTIME_WORKQUEUE_DEFAULT_RATE_LIMITERS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "base/token_bucket.h"
#include "runtime/workqueue/rate_limiter.h"

namespace kcr::workqueue {

namespace internal {

// How many times each item has been rate limited since it was forgotten:
// the bookkeeping the per-item limiters share. Thread-safe.
template <typename T, typename Hash, typename Eq>
class FailureCounts {
 public:
  // Counts one more failure; returns the count before it.
  int Increment(const T& item) {
    MutexLock lock(&mu_);
    int& failures = failures_[item];
    const int before = failures;
    if (failures < std::numeric_limits<int>::max()) ++failures;
    return before;
  }

  void Forget(const T& item) {
    MutexLock lock(&mu_);
    failures_.erase(item);
  }

  int Get(const T& item) {
    MutexLock lock(&mu_);
    auto it = failures_.find(item);
    return it == failures_.end() ? 0 : it->second;
  }

 private:
  Mutex mu_;
  absl::flat_hash_map<T, int, Hash, Eq> failures_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal

// Per item: base * 2^(failures so far), capped at `max_delay`. The first
// call for an item returns `base`. Never overflows, whatever the count.
template <typename T = std::string, typename Hash = absl::Hash<T>,
          typename Eq = std::equal_to<T>>
class ItemExponentialFailureRateLimiter final : public RateLimiter<T> {
 public:
  ItemExponentialFailureRateLimiter(absl::Duration base,
                                    absl::Duration max_delay)
      : base_(base), max_delay_(max_delay) {}

  absl::Duration When(const T& item) override {
    const int exp = failures_.Increment(item);
    // In floating point the product saturates instead of wrapping; 2^1000 is
    // still finite, so a zero base stays zero rather than becoming NaN.
    const double backoff_ns =
        absl::ToDoubleNanoseconds(base_) * std::ldexp(1.0, std::min(exp, 1000));
    if (backoff_ns >=
            static_cast<double>(std::numeric_limits<int64_t>::max()) ||
        backoff_ns >= absl::ToDoubleNanoseconds(max_delay_)) {
      return max_delay_;
    }
    return absl::Nanoseconds(static_cast<int64_t>(backoff_ns));
  }

  void Forget(const T& item) override { failures_.Forget(item); }
  int NumRequeues(const T& item) override { return failures_.Get(item); }

 private:
  const absl::Duration base_;
  const absl::Duration max_delay_;
  internal::FailureCounts<T, Hash, Eq> failures_;
};

// One token bucket for every item: `qps` sustained, `burst` at once. Items
// are not tracked, so Forget does nothing and NumRequeues is 0.
template <typename T = std::string>
class BucketRateLimiter final : public RateLimiter<T> {
 public:
  BucketRateLimiter(double qps, int burst, const Clock* clock = nullptr)
      : bucket_(qps, burst, clock) {}

  absl::Duration When(const T& item) override { return bucket_.Reserve(); }
  void Forget(const T& item) override {}
  int NumRequeues(const T& item) override { return 0; }

 private:
  TokenBucket bucket_;
};

// `fast` for the first `max_fast_attempts` failures of an item, then `slow`.
template <typename T = std::string, typename Hash = absl::Hash<T>,
          typename Eq = std::equal_to<T>>
class ItemFastSlowRateLimiter final : public RateLimiter<T> {
 public:
  ItemFastSlowRateLimiter(absl::Duration fast, absl::Duration slow,
                          int max_fast_attempts)
      : fast_(fast), slow_(slow), max_fast_attempts_(max_fast_attempts) {}

  absl::Duration When(const T& item) override {
    // Attempts 1..max_fast_attempts are fast: fewer than that came before.
    return attempts_.Increment(item) < max_fast_attempts_ ? fast_ : slow_;
  }

  void Forget(const T& item) override { attempts_.Forget(item); }
  int NumRequeues(const T& item) override { return attempts_.Get(item); }

 private:
  const absl::Duration fast_;
  const absl::Duration slow_;
  const int max_fast_attempts_;
  internal::FailureCounts<T, Hash, Eq> attempts_;
};

// Asks every limiter (so each one counts the failure) and returns the
// longest delay; NumRequeues is the largest count; Forget forwards to all.
// With a bucket inside, the bucket's burst can seem exceeded, as in client-go.
template <typename T = std::string>
class MaxOfRateLimiter final : public RateLimiter<T> {
 public:
  explicit MaxOfRateLimiter(
      std::vector<std::unique_ptr<RateLimiter<T>>> limiters)
      : limiters_(std::move(limiters)) {}

  absl::Duration When(const T& item) override {
    absl::Duration longest = absl::ZeroDuration();
    for (auto& limiter : limiters_)
      longest = std::max(longest, limiter->When(item));
    return longest;
  }

  void Forget(const T& item) override {
    for (auto& limiter : limiters_) limiter->Forget(item);
  }

  int NumRequeues(const T& item) override {
    int most = 0;
    for (auto& limiter : limiters_)
      most = std::max(most, limiter->NumRequeues(item));
    return most;
  }

 private:
  const std::vector<std::unique_ptr<RateLimiter<T>>> limiters_;
};

// Another limiter's delay, but never more than `max_delay`.
template <typename T = std::string>
class WithMaxWaitRateLimiter final : public RateLimiter<T> {
 public:
  WithMaxWaitRateLimiter(std::unique_ptr<RateLimiter<T>> limiter,
                         absl::Duration max_delay)
      : limiter_(std::move(limiter)), max_delay_(max_delay) {}

  absl::Duration When(const T& item) override {
    return std::min(limiter_->When(item), max_delay_);
  }
  void Forget(const T& item) override { limiter_->Forget(item); }
  int NumRequeues(const T& item) override {
    return limiter_->NumRequeues(item);
  }

 private:
  const std::unique_ptr<RateLimiter<T>> limiter_;
  const absl::Duration max_delay_;
};

// client-go's DefaultControllerRateLimiter: per-item exponential backoff from
// 5 ms to 1000 s, and an overall 10 qps / burst 100 bucket for retries.
template <typename T = std::string>
std::unique_ptr<RateLimiter<T>> DefaultControllerRateLimiter(
    const Clock* clock = nullptr) {
  std::vector<std::unique_ptr<RateLimiter<T>>> limiters;
  limiters.push_back(std::make_unique<ItemExponentialFailureRateLimiter<T>>(
      absl::Milliseconds(5), absl::Seconds(1000)));
  limiters.push_back(std::make_unique<BucketRateLimiter<T>>(10, 100, clock));
  return std::make_unique<MaxOfRateLimiter<T>>(std::move(limiters));
}

}  // namespace kcr::workqueue

#endif  // KCR_RUNTIME_WORKQUEUE_DEFAULT_RATE_LIMITERS_H_
