// ControllerRunner: runs one of the local API server's built-in controllers
// (garbage collector, namespace controller, simulated node) on its own
// thread, in process, against Storage — the way kube-controller-manager's
// loops run against kube-apiserver, without the HTTP hop.
//
// A controller is level-triggered: Sync() looks at the current state of the
// store, makes the writes it calls for, and says when it next needs to run
// even if nothing changes (a simulated pod due to start, say). The runner
// calls Sync() when the store records writes the controller Wants, when
// that time comes, and at least every `resync` period, but never more often
// than `min_interval`, so a burst of writes (a 50,000-pod benchmark) costs a
// few passes rather than one per write. It also looks at the store for new
// writes no more often than `min_interval`: a burst of writes wakes it a
// few times, not once per write (the first write after a quiet spell is
// seen at once).
//
// Tests drive a controller by calling its Sync() directly with a fake
// clock; the runner is for servers.
//
// Thread safety: Start and Stop may be called from any thread, once each;
// the destructor stops the runner.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_CONTROLLER_RUNNER_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_CONTROLLER_RUNNER_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>

#include "absl/time/time.h"
#include "apiserver/storage/storage.h"
#include "base/clock.h"
#include "base/mutex.h"

namespace kcr {
namespace apiserver {

// What the runner runs.
class SyncedController {
 public:
  virtual ~SyncedController() = default;
  // One level-triggered pass. Returns when the controller next needs a pass
  // if the store does not change (absl::InfiniteFuture() for never), on its
  // clock.
  virtual absl::Time Sync() = 0;
  // For logs ("garbage-collector").
  virtual std::string Name() const = 0;
  // Whether a recorded write may call for a pass. Writes nobody wants do
  // not wake the controller before its due time or the resync period, so a
  // burst of unrelated writes costs nothing. Called on the runner's thread,
  // between passes.
  virtual bool Wants(const StoredEvent& event) const { return true; }

  // Asks a pass in progress to return early (the runner does on Stop):
  // passes that work through many objects check stopping() between them.
  // Any thread.
  void RequestStop() { stopping_.store(true, std::memory_order_relaxed); }
  bool stopping() const { return stopping_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> stopping_{false};
};

// The identity ("kcr-builtin/<controller>") under which a built-in
// controller's writes are logged, as a client's User-Agent is.
std::string BuiltinIdentity(std::string_view controller);

struct ControllerRunnerOptions {
  absl::Duration min_interval = absl::Milliseconds(20);
  absl::Duration resync = absl::Seconds(1);
};

class ControllerRunner {
 public:
  // `storage`, `clock` and `controller` must outlive the runner.
  ControllerRunner(Storage* storage, const Clock* clock,
                   SyncedController* controller,
                   ControllerRunnerOptions options = {});
  ~ControllerRunner();
  ControllerRunner(const ControllerRunner&) = delete;
  ControllerRunner& operator=(const ControllerRunner&) = delete;

  void Start();
  // Stops the thread and waits for the pass in progress. Idempotent.
  void Stop();

  // How many times the runner has looked at the store for new writes (at
  // most once per min_interval). Any thread.
  int64_t looks() const { return looks_.load(std::memory_order_relaxed); }

 private:
  void Loop();
  bool stopped() const {
    MutexLock l(&mu_);
    return stopping_;
  }

  Storage* const storage_;
  const Clock* const clock_;
  SyncedController* const controller_;
  const ControllerRunnerOptions options_;
  mutable Mutex mu_;
  CondVar cv_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<int64_t> looks_{0};
  std::thread thread_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_CONTROLLER_RUNNER_H_
