#include "runtime/controller/controllerutil/retry.h"

#include <memory>
#include <random>

#include "api/errors/errors.h"
#include "base/status_macros.h"

namespace kcr::controller::controllerutil {

absl::Status RetryOnConflict(const Context& ctx, const RetryOptions& options,
                             const std::function<absl::Status()>& fn) {
  std::function<double()> random = options.random;
  if (!random) {
    auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
    random = [engine] {
      return std::uniform_real_distribution<double>(0.0, 1.0)(*engine);
    };
  }
  const Clock* clock = options.clock != nullptr ? options.clock : Clock::Real();
  const Backoff& b = options.backoff;
  absl::Duration duration = b.duration;
  for (int step = 1;; ++step) {
    absl::Status status = fn();
    if (!api::IsConflict(status) || step >= b.steps) return status;
    // wait.Backoff.Step: jitter this wait, grow the next one.
    absl::Duration wait = duration;
    if (b.jitter > 0) wait += duration * (b.jitter * random());
    if (b.factor != 0) {
      duration = duration * b.factor;
      if (b.cap > absl::ZeroDuration() && duration > b.cap) duration = b.cap;
    }
    if (options.sleep) {
      options.sleep(wait);
    } else {
      KCR_RETURN_IF_ERROR(clock->Sleep(ctx, wait));
    }
    KCR_RETURN_IF_ERROR(ctx.Err());
  }
}

}  // namespace kcr::controller::controllerutil
