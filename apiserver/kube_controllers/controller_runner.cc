#include "apiserver/kube_controllers/controller_runner.h"

#include <algorithm>
#include <vector>

#include "apiserver/internal/write_context.h"
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

std::string BuiltinIdentity(std::string_view controller) {
  return "kcr-builtin/" + std::string(controller);
}

void ControllerRunner::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void ControllerRunner::Stop() {
  {
    MutexLock l(&mu_);
    stopping_ = true;
    cv_.SignalAll();
  }
  controller_->RequestStop();
  storage_->Interrupt();
  if (thread_.joinable()) thread_.join();
}

void ControllerRunner::Loop() {
  VLOG(2) << "controller started name=" << controller_->Name();
  // The identity the write log gives this controller's writes.
  const std::string identity = BuiltinIdentity(controller_->Name());
  ScopedWriteContext context({.user_agent = identity});
  int64_t after = storage_->CurrentResourceVersion();
  absl::Time next = controller_->Sync();
  absl::Time last_pass = absl::Now();
  absl::Time last_look = absl::InfinitePast();
  while (true) {
    // The store is looked at no more often than min_interval, like the
    // passes: under a burst of writes the thread wakes a few times a
    // second and takes each batch of events at once, instead of being
    // woken (and taking the storage lock) for every write, wanted or not.
    {
      MutexLock l(&mu_);
      const absl::Time earliest = last_look + options_.min_interval;
      while (!stopping_ && absl::Now() < earliest) {
        cv_.WaitWithDeadline(&mu_, earliest);
      }
      if (stopping_) break;
    }
    // Wait (in real time) for a write, the controller's next due time, or
    // the resync period, whichever comes first.
    absl::Duration wait = std::max(last_pass + options_.resync - absl::Now(),
                                   absl::ZeroDuration());
    if (next != absl::InfiniteFuture()) {
      wait =
          std::min(wait, std::max(next - clock_->Now(), absl::ZeroDuration()));
    }
    int64_t scanned = after;
    absl::StatusOr<std::vector<StoredEventPtr>> events =
        storage_->WaitForEvents(
            "", after, absl::Now() + wait, 4096, [this] { return stopped(); },
            &scanned);
    last_look = absl::Now();
    looks_.fetch_add(1, std::memory_order_relaxed);
    bool wanted = false;
    if (events.ok()) {
      after = scanned;
      for (const StoredEventPtr& e : *events) {
        if (controller_->Wants(*e)) {
          wanted = true;
          break;
        }
      }
    } else {
      // The history moved past us (compaction): start from now; the pass
      // reads the whole state anyway.
      after = storage_->CurrentResourceVersion();
      wanted = true;
    }
    const bool due =
        (next != absl::InfiniteFuture() && clock_->Now() >= next) ||
        absl::Now() >= last_pass + options_.resync;
    if (!wanted && !due) continue;

    // Never more often than min_interval.
    {
      MutexLock l(&mu_);
      const absl::Time earliest = last_pass + options_.min_interval;
      while (!stopping_ && absl::Now() < earliest) {
        cv_.WaitWithDeadline(&mu_, earliest);
      }
      if (stopping_) break;
    }
    next = controller_->Sync();
    last_pass = absl::Now();
  }
  VLOG(2) << "controller stopped name=" << controller_->Name();
}

}  // namespace apiserver
}  // namespace kcr
