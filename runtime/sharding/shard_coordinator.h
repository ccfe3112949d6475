// LeaseShardCoordinator: a replica's ShardOwnership kept through Leases.
//
// Each of a controller's S virtual shards is a coordination.k8s.io/v1
// Lease `<controller>-shard-<i>` in one namespace, held by at most one
// replica; each replica also keeps a membership Lease
// `<controller>-member-<16 hex digits of the identity's hash>` alive
// (holderIdentity = its identity), so every replica can count the live
// members. Every round (retry_period, jittered up to 20%) a coordinator
//   1. renews its membership Lease and every shard it holds;
//   2. lists the controller's Leases and judges each one as leader
//      election does: a Lease is alive while it changed less than its
//      leaseDurationSeconds ago on this replica's clock (the writer's
//      renewTime is never compared with our clock);
//   3. decides with the assignment rule (assignment.h): the fair share
//      among the live members, extras given back, free or expired shards
//      taken while below the share;
//   4. gives back extras in order: ShardListener::OnReleasing (bounded by
//      drain_timeout), then the Lease is released (holder cleared, as
//      leader election's release on cancel does);
//   5. takes shards with a write conditional on the version it listed,
//      then calls ShardListener::OnAcquired.
// A shard whose renewal has not succeeded for renew_deadline (counted from
// the start of the last successful write) is lost: OnReleasing is called
// at once, before the Lease can expire for anybody else, and the Lease is
// left to expire. When Run's context ends every shard is given back (in
// order, as in 4), then the membership Lease is released.
//
// A Lease with an unusable duration (absent, <= 0, or more than ten times
// lease_duration) is judged with this coordinator's lease_duration. A
// shard held by a replica that is not a live member is taken only once
// its Lease has expired, like any other. See docs/sharding.md for why no
// two replicas act on one shard at once.
#ifndef KCR_RUNTIME_SHARDING_SHARD_COORDINATOR_H_
#define KCR_RUNTIME_SHARDING_SHARD_COORDINATOR_H_

#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/context.h"
#include "base/mutex.h"
#include "runtime/sharding/assignment.h"
#include "runtime/sharding/lease_client.h"
#include "runtime/sharding/metrics.h"
#include "runtime/sharding/shard_ownership.h"

namespace kcr::sharding {

struct ShardCoordinatorOptions {
  // The sharded controller's name: the prefix of its Leases and the
  // `controller` label of its metrics. Required.
  std::string controller;
  // Where the Leases live. Required.
  std::string lease_namespace;
  // This replica, unique among the replicas (leaderelection::NewIdentity).
  // Required.
  std::string identity;
  // Virtual shards, in [1, 65536]. Every replica must agree.
  int shards = 32;
  ShardBy shard_by = ShardBy::kUid;
  // As leader election's (client-go's defaults):
  // lease_duration > renew_deadline > retry_period * 1.2.
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
  // How long OnReleasing may wait for in-flight reconciles when a shard is
  // given back; less than renew_deadline - 1.2 * retry_period, so that the
  // shards kept are renewed in time.
  absl::Duration drain_timeout = absl::Seconds(5);
  // How long a free shard preferred by another member stays free before
  // this replica takes it (0: 3 * retry_period).
  absl::Duration free_grace = absl::ZeroDuration();
  // Null: the real clock.
  const Clock* clock = nullptr;
  // Null: the global provider (metrics.h), if any.
  MetricsProvider* metrics = nullptr;
};

// InvalidArgument naming the first option out of range.
absl::Status ValidateOptions(const ShardCoordinatorOptions& options);

class LeaseShardCoordinator final : public ShardOwnership {
 public:
  static absl::StatusOr<std::unique_ptr<LeaseShardCoordinator>> Create(
      ShardCoordinatorOptions options, std::unique_ptr<LeaseClient> leases);
  ~LeaseShardCoordinator() override;

  // ShardOwnership; thread-safe.
  int shards() const override { return options_.shards; }
  ShardBy shard_by() const override { return options_.shard_by; }
  bool Holds(int shard) const override;
  std::vector<int> Held() const override;
  void AddListener(ShardListener* listener) override;
  // True once a round ended holding the fair share, or after
  // lease_duration + 3 * retry_period of rounds (by then every share the
  // others will give is free), whichever is first; stays true.
  bool Settled() const override;

  // Rounds until `ctx` ends, each starting at NextRound(), then gives
  // every shard back and releases the membership Lease. Blocks. Listeners
  // are called on this thread.
  void Run(const Context& ctx);

  // What Run does, one step at a time, for tests and tools that drive
  // time themselves; call them from one thread at a time, never beside
  // Run. RunOnce is one round; Stop gives everything back as Run does at
  // its end.
  void RunOnce(const Context& ctx);
  void Stop();
  // When the round after the last one starts: retry_period (jittered)
  // from now, or earlier at a held shard's renew deadline, or at the
  // moment a Lease held by another replica runs out (as this replica
  // judges it, and not before its holder's membership runs out too), so
  // that a dead replica's shards are taken at once rather than up to a
  // round later. Same thread as RunOnce.
  absl::Time NextRound();

  const std::string& identity() const { return options_.identity; }
  // The fair share of the last round.
  int target() const;
  // The live members of the last round, sorted (self included).
  std::vector<std::string> members() const;
  std::string ShardLeaseName(int shard) const;
  std::string MemberLeaseName() const;

 private:
  // What the round loop knows of one shard's Lease.
  struct ShardLease {
    std::optional<ObservedLease> lease;             // as last listed or written
    absl::Time observed_at = absl::InfinitePast();  // when raw last changed
    // When it was first seen free, expired or absent (InfiniteFuture while
    // alive).
    absl::Time free_since = absl::InfiniteFuture();
    // Held: the start of the last successful write.
    absl::Time renewed_at = absl::InfinitePast();
    // Held: a renewal met a Conflict; the next listing says whether the
    // Lease still names us.
    bool stale = false;
  };
  struct MemberLease {
    std::string raw;
    absl::Time observed_at;
    leaderelection::LeaderElectionRecord record;
  };

  LeaseShardCoordinator(ShardCoordinatorOptions options,
                        std::unique_ptr<LeaseClient> leases);

  absl::Time Now() const { return clock_->Now(); }
  absl::Duration Jittered();
  // How long a Lease written with `seconds` is judged alive.
  absl::Duration LeaseLife(int32_t seconds) const;
  // The deadline of the next request: retry_period from now, and never
  // past the renew deadline of a held shard.
  absl::Time RequestDeadline();
  // The earliest renew deadline of a held shard (InfiniteFuture: none).
  absl::Time EarliestRenewDeadline() const;
  // The earliest future moment at which a shard Lease another replica
  // holds, and that replica's membership Lease, have both run out
  // (InfiniteFuture: none).
  absl::Time EarliestForeignExpiry() const;

  void RenewMembership(const Context& ctx);
  void RenewHeld(const Context& ctx);
  // Gives up every held shard whose renew deadline has passed (and, since
  // nothing is renewed during the drain, every one whose deadline falls
  // within it).
  void CheckDeadlines();
  bool ListAndObserve(const Context& ctx);
  std::vector<ShardState> States(absl::Time now) const;
  void TryAcquire(const Context& ctx, int shard);
  // OnReleasing for every shard in `shards` (the listeners given until
  // `deadline`), then, unless `lost`, the release of each Lease.
  enum class Reason { kRebalance, kLost, kStop };
  void GiveBack(const std::vector<int>& shards, Reason reason,
                absl::Time deadline);
  void SetHeld(int shard, bool held);

  const ShardCoordinatorOptions options_;
  const std::unique_ptr<LeaseClient> leases_;
  const Clock* const clock_;
  const int32_t lease_duration_seconds_;
  const std::string shard_prefix_;
  const std::string member_name_;

  // The round loop's own state: one thread at a time (Run or the caller
  // of RunOnce/Stop), never shared.
  Assigner assigner_;
  std::vector<ShardLease> shard_leases_;
  std::map<std::string, MemberLease> member_leases_;
  std::optional<ObservedLease> member_lease_;
  absl::Time started_ = absl::InfinitePast();
  absl::Time last_renewal_ = absl::InfinitePast();

  std::unique_ptr<GaugeMetric> held_metric_;
  std::unique_ptr<CounterMetric> acquisitions_metric_;
  std::unique_ptr<CounterMetric> rebalance_metric_;
  std::unique_ptr<CounterMetric> lost_metric_;
  std::unique_ptr<CounterMetric> stop_metric_;
  std::unique_ptr<HistogramMetric> handover_metric_;

  mutable Mutex mu_;
  std::vector<bool> held_ ABSL_GUARDED_BY(mu_);
  int held_count_ ABSL_GUARDED_BY(mu_) = 0;
  int target_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> members_ ABSL_GUARDED_BY(mu_);
  bool settled_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<ShardListener*> listeners_ ABSL_GUARDED_BY(mu_);
  std::mt19937_64 gen_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kcr::sharding

#endif  // KCR_RUNTIME_SHARDING_SHARD_COORDINATOR_H_
