// LeaderElector: Lease-based leader election among the replicas of a
// controller (client-go's tools/leaderelection.LeaderElector).
//
// Candidates share one lock (a Lease, lease_lock.h). The holder renews it
// every retry_period; the others poll it and take it over once it has not
// changed for lease_duration, measured on their own clock from when they
// saw it change (never from the renewTime written in it, so clock skew
// between machines does not matter, only their rates).
//
//   auto lock = std::make_shared<LeaseLock>(client, "kube-system",
//                                           "my-controller", *identity);
//   LeaderElectionConfig config;
//   config.lock = lock;
//   config.name = "my-controller";
//   config.release_on_cancel = true;
//   config.callbacks.on_started_leading = [&](const Context& ctx) {
//     RunControllers(ctx);  // returns soon after ctx is done
//   };
//   config.callbacks.on_stopped_leading = [] { LOG(INFO) << "stopped"; };
//   auto elector = LeaderElector::Create(std::move(config));
//   (*elector)->Run(ctx);  // blocks until ctx is done or leadership is lost
//
// No two leaders act at once: the leading context is cancelled (and
// on_stopped_leading called) at the latest renew_deadline after the start
// of the last successful renewal, which is before any other candidate can
// take the lock over (docs/leader-election.md gives the argument). The
// code in on_started_leading must stop acting when its context is done.
#ifndef KCR_RUNTIME_LEADERELECTION_LEADER_ELECTOR_H_
#define KCR_RUNTIME_LEADERELECTION_LEADER_ELECTOR_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/context.h"
#include "base/mutex.h"
#include "runtime/leaderelection/metrics.h"
#include "runtime/leaderelection/resource_lock.h"

namespace kcr::leaderelection {

// How far the acquire loop's waits stretch: retry_period up to
// retry_period * (1 + kJitterFactor), as client-go.
inline constexpr double kJitterFactor = 1.2;

struct LeaderCallbacks {
  // Required. Runs on a thread of its own once leadership is acquired;
  // `ctx` is cancelled when leadership ends (lost, or Run's context done).
  // It must stop acting and return soon after: Run waits for it before
  // it releases the lock and returns.
  std::function<void(const Context& ctx)> on_started_leading;
  // Required. Called on Run's thread when Run ends, whether or not it led
  // (as client-go); when it led, right after the leading context is
  // cancelled, before Run waits for on_started_leading to return.
  std::function<void()> on_stopped_leading;
  // Optional. Called on Run's thread when the holder seen on the lock
  // changes, with the new holder ("" after a release), this candidate
  // included. Must be quick: renewals wait for it.
  std::function<void(const std::string& identity)> on_new_leader;
};

// Defaults are client-go's (and controller-runtime's).
struct LeaderElectionConfig {
  // Required. Shared so that the caller may keep using it; it must not be
  // used by another elector at the same time.
  std::shared_ptr<ResourceLock> lock;
  // How long a non-leader waits, from when it last saw the lock change,
  // before it takes the lock over. Written to the lock in whole seconds,
  // rounded up.
  absl::Duration lease_duration = absl::Seconds(15);
  // How long the leader keeps leading without a successful renewal.
  absl::Duration renew_deadline = absl::Seconds(10);
  // Wait between attempts to acquire or renew.
  absl::Duration retry_period = absl::Seconds(2);
  // When Run's context ends, give the lock up (holder "" and a lease of
  // one second) so that another candidate takes over at once. Only set it
  // when the code in on_started_leading is done once it returns.
  bool release_on_cancel = false;
  // For logs and metrics (the `name` label).
  std::string name;
  LeaderCallbacks callbacks;
  // Not owned; null means the real clock.
  const Clock* clock = nullptr;
  // Null: the global provider (metrics.h); nothing is recorded without
  // a name.
  MetricsProvider* metrics = nullptr;
};

// Checks the config as client-go's NewLeaderElector does:
// lease_duration > renew_deadline > retry_period * kJitterFactor, all
// > 0, both required callbacks and a lock with an identity.
absl::Status ValidateConfig(const LeaderElectionConfig& config);

class LeaderElector {
 public:
  // InvalidArgument when ValidateConfig fails.
  static absl::StatusOr<std::unique_ptr<LeaderElector>> Create(
      LeaderElectionConfig config);

  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Tries to acquire the lock until it succeeds or `ctx` is done; then
  // starts on_started_leading and renews the lock until a renewal fails
  // for renew_deadline or `ctx` is done. Returns when leadership ended (or
  // was never had), after on_started_leading returned, the lock was
  // released (release_on_cancel) and on_stopped_leading was called. Not
  // to be called twice at once; it may be called again after it returns.
  void Run(const Context& ctx);

  // Whether this candidate holds the lock as last observed. Thread-safe.
  bool IsLeader() const;
  // The holder of the lock as last observed ("" when none). Thread-safe.
  std::string GetLeader() const;

  // For a liveness probe (client-go's HealthzAdaptor): an error when this
  // candidate believes it leads but has not renewed for longer than
  // lease_duration + `max_tolerable_expired_lease`. Thread-safe.
  absl::Status Check(absl::Duration max_tolerable_expired_lease) const;

 private:
  explicit LeaderElector(LeaderElectionConfig config);

  // Loops until the lock is acquired (true) or `ctx` is done (false). On
  // success sets `*renewed_at` to when the successful attempt started.
  bool Acquire(const Context& ctx, absl::Time* renewed_at);
  // Renews until a renewal round misses its deadline or `ctx` (the leading
  // context) is done. `watchdog` cancels the leading context at
  // renewed_at + renew_deadline; each success moves it on.
  void Renew(const Context& ctx, absl::Time renewed_at, Timer* watchdog);
  // One attempt, as client-go's tryAcquireOrRenew.
  bool TryAcquireOrRenew(const Context& ctx);
  // Gives the lock up if this candidate holds it.
  void Release();
  // Calls on_new_leader when the observed holder changed.
  void MaybeReportTransition();

  absl::Time Now() const;
  absl::Duration Jittered(absl::Duration d);
  void SetObservedRecord(const LeaderElectionRecord& record)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool IsLeaderLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool IsLeaseValidLocked(absl::Time now) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const LeaderElectionConfig config_;
  const Clock* const clock_;
  // The whole seconds written to the lock.
  const int32_t lease_duration_seconds_;
  std::unique_ptr<SwitchMetric> leader_metric_;
  std::unique_ptr<CounterMetric> slowpath_metric_;

  mutable Mutex mu_;
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  // The record as last read or written, and when (on clock_) it was last
  // seen to change.
  LeaderElectionRecord observed_record_ ABSL_GUARDED_BY(mu_);
  std::string observed_raw_record_ ABSL_GUARDED_BY(mu_);
  absl::Time observed_time_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // The holder last reported to on_new_leader.
  std::string reported_leader_ ABSL_GUARDED_BY(mu_);
  absl::BitGen gen_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kcr::leaderelection

#endif  // KCR_RUNTIME_LEADERELECTION_LEADER_ELECTOR_H_
