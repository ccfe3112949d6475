#include "test/apiserver/controller_runner.h"

#include <algorithm>
#include <vector>

#include "glog/logging.h"

namespace kcr {
namespace apiserver {

ControllerRunner::ControllerRunner(Storage* storage, const Clock* clock,
                                   SyncedController* controller,
                                   ControllerRunnerOptions options)
    : storage_(storage),
      clock_(clock),
      controller_(controller),
      options_(options) {}

ControllerRunner::~ControllerRunner() { Stop(); }

void ControllerRunner::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void ControllerRunner::Stop() {
  {
    MutexLock l(&mu_);
    stopping_ = true;
    cv_.SignalAll();
  }
  storage_->Interrupt();
  if (thread_.joinable()) thread_.join();
}

void ControllerRunner::Loop() {
  VLOG(2) << "controller started name=" << controller_->Name();
  int64_t after = storage_->CurrentResourceVersion();
  while (!stopped()) {
    const absl::Time started = absl::Now();
    const absl::Time next = controller_->Sync();

    // Wait (in real time) for a write, the controller's next due time, or
    // the resync period, whichever comes first.
    absl::Duration wait = options_.resync;
    if (next != absl::InfiniteFuture()) {
      wait = std::min(wait, std::max(next - clock_->Now(), absl::ZeroDuration()));
    }
    const absl::Time deadline = absl::Now() + wait;
    int64_t scanned = after;
    absl::StatusOr<std::vector<StoredEvent>> events = storage_->WaitForEvents(
        "", after, deadline, 4096, [this] { return stopped(); }, &scanned);
    if (events.ok()) {
      after = scanned;
    } else {
      // The history moved past us (compaction): start from now; the next
      // Sync reads the whole state anyway.
      after = storage_->CurrentResourceVersion();
    }

    // Never more often than min_interval.
    MutexLock l(&mu_);
    const absl::Time earliest = started + options_.min_interval;
    while (!stopping_ && absl::Now() < earliest) {
      cv_.WaitWithDeadline(&mu_, earliest);
    }
  }
  VLOG(2) << "controller stopped name=" << controller_->Name();
}

}  // namespace apiserver
}  // namespace kcr
