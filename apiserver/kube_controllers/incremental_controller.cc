#include "apiserver/kube_controllers/incremental_controller.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "glog/logging.h"

namespace kcr {
namespace apiserver {

IncrementalController::IncrementalController(
    Registry* registry, const Clock* clock,
    IncrementalControllerOptions options)
    : registry_(registry), clock_(clock), options_(options) {}

void IncrementalController::CatchUp() {
  Storage* s = storage();
  if (!started_) {
    started_ = true;
    after_ = s->CurrentResourceVersion();
    last_full_ = clock_->Now();
    EnqueueAll();
    return;
  }
  while (true) {
    int64_t scanned = after_;
    absl::StatusOr<std::vector<StoredEventPtr>> events = s->WaitForEvents(
        "", after_, absl::InfinitePast(), 4096, nullptr, &scanned);
    if (!events.ok()) {
      // The history moved past us: whatever was missed, every key is
      // looked at again.
      VLOG(1) << Name() << ": writes missed (" << events.status()
              << "), queueing every key";
      after_ = s->CurrentResourceVersion();
      EnqueueAll();
      return;
    }
    after_ = scanned;
    if (events->empty()) return;
    for (const StoredEventPtr& e : *events) OnEvent(*e);
  }
}

absl::Time IncrementalController::Sync() {
  CatchUp();
  absl::Time now = clock_->Now();
  if (now - last_full_ >= options_.full_resync) {
    last_full_ = now;
    EnqueueAll();
  }
  const absl::Time budget_end = absl::Now() + options_.pass_budget;
  std::string key;
  while (work_.Next(now, &key)) {
    const absl::Time again = SyncKey(key, now);
    ++keys_synced_;
    // A key due again at once waits for the next pass, so one pass never
    // spins on it.
    if (again != absl::InfiniteFuture()) {
      EnqueueAt(key, std::max(again, now + absl::Milliseconds(1)));
    }
    if (stopping() || absl::Now() >= budget_end) return now;
  }
  return work_.NextDue();
}

}  // namespace apiserver
}  // namespace kcr
