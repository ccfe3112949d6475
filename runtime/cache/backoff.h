// BackoffManager: the reflector's exponential backoff with jitter, as
// client-go's wait.NewExponentialBackoffManager (the reflector's until
// v0.36): each delay doubles from `initial` up to `cap`, each is stretched
// by a random jitter, and the sequence starts over once `reset_after` has
// passed since the last delay was taken.
//
// With the defaults the delays are 0.8, 1.6, 3.2, 6.4, 12.8, 25.6 s and
// then 30 s for ever, each multiplied by a random factor in [1, 2)
// (jitter 1.0), about 0.22 requests per second to an unhealthy server.
#ifndef KCR_RUNTIME_CACHE_BACKOFF_H_
#define KCR_RUNTIME_CACHE_BACKOFF_H_

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/context.h"

namespace kcr::cache {

// A source of uniform random numbers in [0, 1). Called from one thread at a
// time.
using RandomFunc = std::function<double()>;

// A RandomFunc on a Mersenne Twister seeded with `seed` (the same seed,
// the same sequence), for tests and for anyone who wants reproducible
// jitter.
RandomFunc SeededRandom(uint64_t seed);
// A RandomFunc seeded from std::random_device.
RandomFunc NewRandom();

struct BackoffOptions {
  absl::Duration initial = absl::Milliseconds(800);
  absl::Duration cap = absl::Seconds(30);
  double factor = 2.0;
  // Each delay d becomes d + random * jitter * d; 0 for none.
  double jitter = 1.0;
  // A delay taken more than this long after the previous one starts the
  // sequence over.
  absl::Duration reset_after = absl::Minutes(2);
};

// Thread-compatible: one reflector thread uses it.
class BackoffManager {
 public:
  // `clock` is not owned and must outlive the manager; null: the real
  // clock. `random` null: NewRandom().
  BackoffManager(BackoffOptions options, const Clock* clock,
                 RandomFunc random = nullptr);

  // The next delay (client-go's getNextBackoff), advancing the sequence.
  absl::Duration Next();

  // Waits Next() on the clock. OK after the delay, ctx.Err() when `ctx`
  // ends first.
  absl::Status Wait(const Context& ctx);

 private:
  const BackoffOptions options_;
  const Clock* const clock_;
  RandomFunc random_;
  // The un-jittered delay the next step starts from; once it reaches the
  // cap, every later step is the cap (client-go's Steps = 0).
  absl::Duration duration_;
  bool capped_ = false;
  // When Next was last called; InfinitePast before the first call.
  absl::Time last_start_ = absl::InfinitePast();
};

}  // namespace kcr::cache

#endif  // KCR_RUNTIME_CACHE_BACKOFF_H_
