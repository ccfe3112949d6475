// IncrementalController: a built-in controller that, like the informer-fed
// loops of kube-controller-manager, syncs only the keys the store's writes
// touch. Each pass
//   1. reads the writes recorded since the previous pass (Storage's history)
//      and lets the controller map each to the keys it calls for
//      (OnEvent), so a pod's write queues its owner, not every owner;
//   2. syncs the queued keys due now (SyncKey), each looking only at the
//      objects of its key through Storage's indexes (controller_indexes.h),
//      for at most `pass_budget` of real time, so that a pass never keeps
//      the controller from the history for long, and returns early when the
//      runner stops.
// Every key is queued (EnqueueAll) on the first pass, when the history has
// moved past the controller (410: writes were missed), and every
// `full_resync` — kube's informer resync, not a scan per write.
//
// Tests call Sync() directly: a pass reads the history itself, so no runner
// is needed.
//
// Thread safety: Sync is not reentrant; run one pass at a time.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_INCREMENTAL_CONTROLLER_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_INCREMENTAL_CONTROLLER_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "apiserver/kube_controllers/controller_runner.h"
#include "apiserver/kube_controllers/work_set.h"
#include "apiserver/registry/registry.h"
#include "apiserver/storage/storage.h"
#include "base/clock.h"

namespace kcr {
namespace apiserver {

struct IncrementalControllerOptions {
  // Real time one pass may spend on keys before it returns (due at once)
  // to read the history again.
  absl::Duration pass_budget = absl::Milliseconds(200);
  // How often every key is queued again, on the controller's clock.
  absl::Duration full_resync = absl::Minutes(10);
};

class IncrementalController : public SyncedController {
 public:
  // Reads the new writes, syncs the keys due. Returns when a key next comes
  // due (the controller's clock), now when keys are left over, or
  // InfiniteFuture.
  absl::Time Sync() final;

  // Keys synced since construction (tests check that a write costs the
  // keys it touches).
  uint64_t keys_synced() const { return keys_synced_; }

 protected:
  // `registry` and `clock` must outlive the controller.
  IncrementalController(Registry* registry, const Clock* clock,
                        IncrementalControllerOptions options = {});

  // Queues the keys `event` calls for (Enqueue / EnqueueAt).
  virtual void OnEvent(const StoredEvent& event) = 0;
  // Queues every key.
  virtual void EnqueueAll() = 0;
  // Syncs one key at `now`. Returns when the key needs another pass though
  // nothing changes (InfiniteFuture for never).
  virtual absl::Time SyncKey(const std::string& key, absl::Time now) = 0;

  void Enqueue(const std::string& key) { work_.Add(key); }
  void EnqueueAt(const std::string& key, absl::Time at) {
    work_.AddAt(key, at);
  }

  Registry* registry() const { return registry_; }
  Storage* storage() const { return registry_->storage(); }
  const Clock* clock() const { return clock_; }

 private:
  // Feeds the writes since the last pass to OnEvent; EnqueueAll when they
  // are no longer in the history.
  void CatchUp();

  Registry* const registry_;
  const Clock* const clock_;
  const IncrementalControllerOptions options_;
  WorkSet work_;
  bool started_ = false;
  // The resourceVersion up to which writes were read.
  int64_t after_ = 0;
  absl::Time last_full_ = absl::InfinitePast();
  uint64_t keys_synced_ = 0;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_INCREMENTAL_CONTROLLER_H_
