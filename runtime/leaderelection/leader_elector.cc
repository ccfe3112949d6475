#include "runtime/leaderelection/leader_elector.h"

#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/errors/errors.h"
#include "glog/logging.h"

namespace kcr::leaderelection {
namespace {

// Lock times travel as metav1.MicroTime: keep ours to the microsecond so
// that what we remember equals what the server gives back.
absl::Time TruncateToMicros(absl::Time t) {
  return absl::UnixEpoch() +
         absl::Floor(t - absl::UnixEpoch(), absl::Microseconds(1));
}

// client-go truncates; rounding up never tells the other candidates a
// shorter lease than the one this elector keeps its promise by.
int32_t CeilSeconds(absl::Duration d) {
  int64_t seconds = absl::ToInt64Seconds(d);
  if (absl::Seconds(seconds) < d) ++seconds;
  return static_cast<int32_t>(seconds);
}

}  // namespace

absl::Status ValidateConfig(const LeaderElectionConfig& config) {
  if (config.lease_duration <= config.renew_deadline) {
    return absl::InvalidArgumentError(
        "leaseDuration must be greater than renewDeadline");
  }
  if (config.renew_deadline <= config.retry_period * kJitterFactor) {
    return absl::InvalidArgumentError(
        "renewDeadline must be greater than retryPeriod*JitterFactor");
  }
  if (config.lease_duration <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "leaseDuration must be greater than zero");
  }
  if (config.renew_deadline <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "renewDeadline must be greater than zero");
  }
  if (config.retry_period <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("retryPeriod must be greater than zero");
  }
  if (!config.callbacks.on_started_leading) {
    return absl::InvalidArgumentError(
        "OnStartedLeading callback must not be nil");
  }
  if (!config.callbacks.on_stopped_leading) {
    return absl::InvalidArgumentError(
        "OnStoppedLeading callback must not be nil");
  }
  if (config.lock == nullptr) {
    return absl::InvalidArgumentError("Lock must not be nil");
  }
  if (config.lock->Identity().empty()) {
    return absl::InvalidArgumentError("Lock identity is empty");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<LeaderElector>> LeaderElector::Create(
    LeaderElectionConfig config) {
  if (absl::Status s = ValidateConfig(config); !s.ok()) return s;
  return std::unique_ptr<LeaderElector>(new LeaderElector(std::move(config)));
}

LeaderElector::LeaderElector(LeaderElectionConfig config)
    : config_(std::move(config)),
      clock_(config_.clock != nullptr ? config_.clock : Clock::Real()),
      lease_duration_seconds_(CeilSeconds(config_.lease_duration)) {
  if (MetricsProvider* provider =
          ResolveMetricsProvider(config_.metrics, config_.name)) {
    leader_metric_ = provider->NewLeaderMetric(config_.name);
    slowpath_metric_ = provider->NewSlowpathMetric(config_.name);
    leader_metric_->Off();
  }
}

LeaderElector::~LeaderElector() = default;

void LeaderElector::Run(const Context& ctx) {
  {
    MutexLock lock(&mu_);
    CHECK(!running_) << "LeaderElector::Run called twice at once";
    running_ = true;
  }
  absl::Time renewed_at;
  if (Acquire(ctx, &renewed_at)) {
    auto [leading_ctx, cancel_leading] = WithCancel(ctx);
    // Ends leadership renew_deadline after the last successful renewal
    // started, however long a request in flight takes to give up.
    std::unique_ptr<Timer> watchdog = clock_->AfterFunc(
        renewed_at + config_.renew_deadline - Now(), cancel_leading);
    if (leader_metric_ != nullptr) leader_metric_->On();
    std::thread leader([this, leading = leading_ctx] {
      config_.callbacks.on_started_leading(leading);
    });
    Renew(leading_ctx, renewed_at, watchdog.get());
    cancel_leading();
    watchdog->Stop();
    if (leader_metric_ != nullptr) leader_metric_->Off();
    config_.callbacks.on_stopped_leading();
    leader.join();
    // Only now that the leader's code has returned may a successor start.
    if (config_.release_on_cancel) Release();
  } else {
    config_.callbacks.on_stopped_leading();
  }
  MutexLock lock(&mu_);
  running_ = false;
}

bool LeaderElector::Acquire(const Context& ctx, absl::Time* renewed_at) {
  const std::string desc = config_.lock->Describe();
  LOG(INFO) << "attempting to acquire leader lease " << desc;
  while (!ctx.done()) {
    const absl::Time start = Now();
    bool acquired;
    {
      // Bounded so that a hung request cannot win the lock after its
      // renew_deadline has already gone by.
      auto [attempt_ctx, cancel] =
          WithTimeout(ctx, config_.renew_deadline, clock_);
      acquired = TryAcquireOrRenew(attempt_ctx);
      cancel();
    }
    MaybeReportTransition();
    if (acquired) {
      LOG(INFO) << "successfully acquired lease " << desc;
      *renewed_at = start;
      return true;
    }
    VLOG(4) << "failed to acquire lease " << desc;
    if (!clock_->Sleep(ctx, Jittered(config_.retry_period)).ok()) break;
  }
  return false;
}

void LeaderElector::Renew(const Context& ctx, absl::Time renewed_at,
                          Timer* watchdog) {
  const std::string desc = config_.lock->Describe();
  while (clock_->Sleep(ctx, config_.retry_period).ok()) {
    // One round: attempts every retry_period until one succeeds or the
    // deadline, counted from the start of the last success, passes.
    auto [round_ctx, cancel] =
        WithDeadline(ctx, renewed_at + config_.renew_deadline, clock_);
    bool renewed = false;
    while (true) {
      const absl::Time start = Now();
      renewed = TryAcquireOrRenew(round_ctx);
      MaybeReportTransition();
      if (renewed) {
        renewed_at = start;
        watchdog->Reset(renewed_at + config_.renew_deadline - Now());
        break;
      }
      if (!clock_->Sleep(round_ctx, config_.retry_period).ok()) break;
    }
    cancel();
    if (!renewed) {
      if (!ctx.done()) LOG(INFO) << "failed to renew lease " << desc;
      return;
    }
    VLOG(5) << "successfully renewed lease " << desc;
  }
}

bool LeaderElector::TryAcquireOrRenew(const Context& ctx) {
  const absl::Time now = TruncateToMicros(Now());
  LeaderElectionRecord record;
  record.holder_identity = config_.lock->Identity();
  record.lease_duration_seconds = lease_duration_seconds_;
  record.renew_time = now;
  record.acquire_time = now;

  // 1. The leader whose lease is still valid updates optimistically from
  // the record it wrote last, without reading first.
  bool fast_path = false;
  {
    MutexLock lock(&mu_);
    if (IsLeaderLocked() && IsLeaseValidLocked(now)) {
      fast_path = true;
      record.acquire_time = observed_record_.acquire_time;
      record.leader_transitions = observed_record_.leader_transitions;
    }
  }
  if (fast_path) {
    absl::Status s = config_.lock->Update(ctx, record);
    if (s.ok()) {
      MutexLock lock(&mu_);
      SetObservedRecord(record);
      return true;
    }
    LOG(ERROR) << "failed to update lock optimistically: " << s
               << ", falling back to slow path";
  }

  // 2. Read the record, or create it.
  absl::StatusOr<ObservedRecord> old = config_.lock->Get(ctx);
  if (!old.ok()) {
    if (!api::IsNotFound(old.status())) {
      LOG(ERROR) << "error retrieving resource lock "
                 << config_.lock->Describe() << ": " << old.status();
      return false;
    }
    if (absl::Status s = config_.lock->Create(ctx, record); !s.ok()) {
      LOG(ERROR) << "error initially creating leader election record: " << s;
      return false;
    }
    MutexLock lock(&mu_);
    SetObservedRecord(record);
    return true;
  }

  // 3. Judge the holder by when we saw the record change, on our clock.
  {
    MutexLock lock(&mu_);
    if (observed_raw_record_ != old->raw) {
      SetObservedRecord(old->record);
      observed_raw_record_ = old->raw;
    }
    if (!old->record.holder_identity.empty() && IsLeaseValidLocked(now) &&
        !IsLeaderLocked()) {
      VLOG(4) << "lock is held by " << old->record.holder_identity
              << " and has not yet expired";
      return false;
    }
    // 4. Keep the acquisition's time and count when renewing; count a
    // transition when taking over.
    if (IsLeaderLocked()) {
      record.acquire_time = old->record.acquire_time;
      record.leader_transitions = old->record.leader_transitions;
      if (slowpath_metric_ != nullptr) slowpath_metric_->Inc();
    } else {
      record.leader_transitions = old->record.leader_transitions + 1;
    }
  }
  if (absl::Status s = config_.lock->Update(ctx, record); !s.ok()) {
    LOG(ERROR) << "failed to update lock: " << s;
    return false;
  }
  MutexLock lock(&mu_);
  SetObservedRecord(record);
  return true;
}

void LeaderElector::Release() {
  LeaderElectionRecord record;
  {
    MutexLock lock(&mu_);
    if (!IsLeaderLocked()) return;
    const absl::Time now = TruncateToMicros(Now());
    record.leader_transitions = observed_record_.leader_transitions;
    record.lease_duration_seconds = 1;
    record.renew_time = now;
    record.acquire_time = now;
  }
  // Run's context is over: the release has a context of its own.
  auto [ctx, cancel] =
      WithTimeout(Context::Background(), config_.renew_deadline, clock_);
  absl::Status s = config_.lock->Update(ctx, record);
  if (api::IsConflict(s)) {
    // A renewal cancelled in flight may have been stored without its
    // answer reaching us, moving the version on. If the lock still names
    // us nobody else took it: release from what is there now.
    absl::StatusOr<ObservedRecord> current = config_.lock->Get(ctx);
    if (current.ok() &&
        current->record.holder_identity == config_.lock->Identity()) {
      record.leader_transitions = current->record.leader_transitions;
      s = config_.lock->Update(ctx, record);
    }
  }
  cancel();
  if (!s.ok()) {
    LOG(ERROR) << "failed to release lock " << config_.lock->Describe() << ": "
               << s;
    return;
  }
  {
    MutexLock lock(&mu_);
    SetObservedRecord(record);
  }
  MaybeReportTransition();
}

void LeaderElector::MaybeReportTransition() {
  std::string leader;
  {
    MutexLock lock(&mu_);
    if (observed_record_.holder_identity == reported_leader_) return;
    reported_leader_ = observed_record_.holder_identity;
    leader = reported_leader_;
  }
  if (config_.callbacks.on_new_leader) config_.callbacks.on_new_leader(leader);
}

bool LeaderElector::IsLeader() const {
  MutexLock lock(&mu_);
  return IsLeaderLocked();
}

std::string LeaderElector::GetLeader() const {
  MutexLock lock(&mu_);
  return observed_record_.holder_identity;
}

absl::Status LeaderElector::Check(
    absl::Duration max_tolerable_expired_lease) const {
  MutexLock lock(&mu_);
  if (!IsLeaderLocked()) return absl::OkStatus();
  if (Now() - observed_time_ >
      config_.lease_duration + max_tolerable_expired_lease) {
    return absl::UnavailableError(absl::StrCat(
        "failed election to renew leadership on lease ", config_.name));
  }
  return absl::OkStatus();
}

absl::Time LeaderElector::Now() const { return clock_->Now(); }

absl::Duration LeaderElector::Jittered(absl::Duration d) {
  MutexLock lock(&mu_);
  return d + d * (absl::Uniform(gen_, 0.0, 1.0) * kJitterFactor);
}

void LeaderElector::SetObservedRecord(const LeaderElectionRecord& record) {
  observed_record_ = record;
  observed_time_ = Now();
}

bool LeaderElector::IsLeaderLocked() const {
  return observed_record_.holder_identity == config_.lock->Identity();
}

bool LeaderElector::IsLeaseValidLocked(absl::Time now) const {
  return observed_time_ +
             absl::Seconds(observed_record_.lease_duration_seconds) >
         now;
}

}  // namespace kcr::leaderelection
