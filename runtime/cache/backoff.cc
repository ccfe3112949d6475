#include "runtime/cache/backoff.h"

#include <memory>
#include <random>
#include <utility>

namespace kcr::cache {

RandomFunc SeededRandom(uint64_t seed) {
  auto engine = std::make_shared<std::mt19937_64>(seed);
  return [engine] {
    return std::uniform_real_distribution<double>(0.0, 1.0)(*engine);
  };
}

RandomFunc NewRandom() { return SeededRandom(std::random_device{}()); }

BackoffManager::BackoffManager(BackoffOptions options, const Clock* clock,
                               RandomFunc random)
    : options_(options),
      clock_(clock != nullptr ? clock : Clock::Real()),
      random_(random != nullptr ? std::move(random) : NewRandom()),
      duration_(options.initial) {}

absl::Duration BackoffManager::Next() {
  const absl::Time now = clock_->Now();
  if (now - last_start_ > options_.reset_after) {
    duration_ = options_.initial;
    capped_ = false;
  }
  last_start_ = now;

  absl::Duration delay = duration_;
  // Step, as wait.Backoff.Step: the next base delay grows by `factor`
  // until it passes the cap, which then holds for ever.
  if (!capped_ && options_.factor != 0) {
    duration_ = duration_ * options_.factor;
    if (options_.cap > absl::ZeroDuration() && duration_ > options_.cap) {
      duration_ = options_.cap;
      capped_ = true;
    }
  }
  if (options_.jitter > 0) {
    delay += delay * (random_() * options_.jitter);
  }
  return delay;
}

absl::Status BackoffManager::Wait(const Context& ctx) {
  return clock_->Sleep(ctx, Next());
}

}  // namespace kcr::cache
