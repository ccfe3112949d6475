#include "runtime/sharding/shard_coordinator.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/errors/errors.h"
#include "api/selector/shard_selector.h"
#include "glog/logging.h"

namespace kcr::sharding {
namespace {

constexpr char kRoleShard[] = "shard";
constexpr char kRoleMember[] = "member";
// Rounds start retry_period apart, up to 20% more: renewals live in the
// rounds, so the jitter is kept well inside renew_deadline.
constexpr double kRoundJitter = 0.2;
// leader election's: renew_deadline > retry_period * 1.2.
constexpr double kJitterFactor = 1.2;
constexpr int kMaxShards = 1 << 16;

// Lease times travel as metav1.MicroTime.
absl::Time TruncateToMicros(absl::Time t) {
  return absl::UnixEpoch() +
         absl::Floor(t - absl::UnixEpoch(), absl::Microseconds(1));
}

int32_t CeilSeconds(absl::Duration d) {
  int64_t seconds = absl::ToInt64Seconds(d);
  if (absl::Seconds(seconds) < d) ++seconds;
  return static_cast<int32_t>(seconds);
}

std::string Hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

absl::Status ValidateOptions(const ShardCoordinatorOptions& o) {
  if (o.controller.empty()) {
    return absl::InvalidArgumentError("controller must not be empty");
  }
  if (o.lease_namespace.empty()) {
    return absl::InvalidArgumentError("lease namespace must not be empty");
  }
  if (o.identity.empty()) {
    return absl::InvalidArgumentError("identity must not be empty");
  }
  if (o.shards < 1 || o.shards > kMaxShards) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shards must be in [1, ", kMaxShards, "], got ", o.shards));
  }
  if (o.retry_period <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("retryPeriod must be greater than zero");
  }
  if (o.lease_duration <= o.renew_deadline) {
    return absl::InvalidArgumentError(
        "leaseDuration must be greater than renewDeadline");
  }
  if (o.renew_deadline <= o.retry_period * kJitterFactor) {
    return absl::InvalidArgumentError(
        "renewDeadline must be greater than retryPeriod*JitterFactor");
  }
  if (o.drain_timeout <= absl::ZeroDuration() ||
      o.drain_timeout >= o.renew_deadline - o.retry_period * kJitterFactor) {
    return absl::InvalidArgumentError(
        "drainTimeout must be in (0, renewDeadline - "
        "retryPeriod*JitterFactor)");
  }
  if (o.free_grace < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("freeGrace must not be negative");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<LeaseShardCoordinator>>
LeaseShardCoordinator::Create(ShardCoordinatorOptions options,
                              std::unique_ptr<LeaseClient> leases) {
  if (absl::Status s = ValidateOptions(options); !s.ok()) return s;
  if (leases == nullptr) {
    return absl::InvalidArgumentError("lease client must not be null");
  }
  if (options.free_grace == absl::ZeroDuration()) {
    options.free_grace = 3 * options.retry_period;
  }
  return std::unique_ptr<LeaseShardCoordinator>(
      new LeaseShardCoordinator(std::move(options), std::move(leases)));
}

LeaseShardCoordinator::LeaseShardCoordinator(
    ShardCoordinatorOptions options, std::unique_ptr<LeaseClient> leases)
    : options_(std::move(options)),
      leases_(std::move(leases)),
      clock_(options_.clock != nullptr ? options_.clock : Clock::Real()),
      lease_duration_seconds_(CeilSeconds(options_.lease_duration)),
      shard_prefix_(absl::StrCat(options_.controller, "-shard-")),
      member_name_(absl::StrCat(options_.controller, "-member-",
                                Hex16(api::Fnv1a64(options_.identity)))),
      assigner_(options_.shards, options_.identity, options_.free_grace),
      shard_leases_(options_.shards),
      held_(options_.shards, false),
      gen_(std::random_device{}()) {
  if (MetricsProvider* provider =
          ResolveMetricsProvider(options_.metrics, options_.controller)) {
    const std::string& c = options_.controller;
    held_metric_ = provider->NewShardsHeldMetric(c);
    acquisitions_metric_ = provider->NewAcquisitionsMetric(c);
    rebalance_metric_ = provider->NewReleasesMetric(c, kReleaseRebalance);
    lost_metric_ = provider->NewReleasesMetric(c, kReleaseLost);
    stop_metric_ = provider->NewReleasesMetric(c, kReleaseStop);
    handover_metric_ = provider->NewHandoverMetric(c);
    held_metric_->Set(0);
  }
  MutexLock lock(&mu_);
  members_ = {options_.identity};
}

LeaseShardCoordinator::~LeaseShardCoordinator() = default;

bool LeaseShardCoordinator::Holds(int shard) const {
  MutexLock lock(&mu_);
  return shard >= 0 && shard < options_.shards && held_[shard];
}

std::vector<int> LeaseShardCoordinator::Held() const {
  MutexLock lock(&mu_);
  std::vector<int> held;
  held.reserve(held_count_);
  for (int s = 0; s < options_.shards; ++s) {
    if (held_[s]) held.push_back(s);
  }
  return held;
}

absl::Time LeaseShardCoordinator::EarliestRenewDeadline() const {
  absl::Time deadline = absl::InfiniteFuture();
  for (int s : Held()) {
    deadline = std::min(deadline,
                        shard_leases_[s].renewed_at + options_.renew_deadline);
  }
  return deadline;
}

void LeaseShardCoordinator::AddListener(ShardListener* listener) {
  MutexLock lock(&mu_);
  listeners_.push_back(listener);
}

bool LeaseShardCoordinator::Settled() const {
  MutexLock lock(&mu_);
  return settled_;
}

int LeaseShardCoordinator::target() const {
  MutexLock lock(&mu_);
  return target_;
}

std::vector<std::string> LeaseShardCoordinator::members() const {
  MutexLock lock(&mu_);
  return members_;
}

std::string LeaseShardCoordinator::ShardLeaseName(int shard) const {
  return absl::StrCat(shard_prefix_, shard);
}

std::string LeaseShardCoordinator::MemberLeaseName() const {
  return member_name_;
}

absl::Duration LeaseShardCoordinator::Jittered() {
  MutexLock lock(&mu_);
  return options_.retry_period +
         options_.retry_period * (absl::Uniform(gen_, 0.0, 1.0) * kRoundJitter);
}

absl::Duration LeaseShardCoordinator::LeaseLife(int32_t seconds) const {
  if (seconds <= 0 ||
      absl::Seconds(seconds) > 10 * absl::Seconds(lease_duration_seconds_)) {
    return absl::Seconds(lease_duration_seconds_);
  }
  return absl::Seconds(seconds);
}

absl::Time LeaseShardCoordinator::RequestDeadline() {
  return std::min(Now() + options_.retry_period, EarliestRenewDeadline());
}

void LeaseShardCoordinator::SetHeld(int shard, bool held) {
  int count;
  {
    MutexLock lock(&mu_);
    if (held_[shard] == held) return;
    held_[shard] = held;
    held_count_ += held ? 1 : -1;
    count = held_count_;
  }
  if (held_metric_ != nullptr) held_metric_->Set(count);
}

void LeaseShardCoordinator::Run(const Context& ctx) {
  while (!ctx.done()) {
    RunOnce(ctx);
    if (!clock_->Sleep(ctx, NextRound() - Now()).ok()) break;
  }
  Stop();
}

absl::Time LeaseShardCoordinator::NextRound() {
  // A held shard's renew deadline: a round starts by giving up what missed
  // it, so no shard outlives its deadline while we sleep. Another
  // replica's expiry: the round at that moment takes its shards, instead
  // of the first round after it.
  return std::min(
      {Now() + Jittered(), EarliestRenewDeadline(), EarliestForeignExpiry()});
}

absl::Time LeaseShardCoordinator::EarliestForeignExpiry() const {
  const absl::Time now = Now();
  // While a holder's membership is alive its shares count it, so its
  // shards are taken only once both have run out.
  std::map<std::string, absl::Time> member_expiry;
  for (const auto& [name, m] : member_leases_) {
    if (m.record.holder_identity.empty()) continue;
    member_expiry[m.record.holder_identity] =
        m.observed_at + LeaseLife(m.record.lease_duration_seconds);
  }
  absl::Time earliest = absl::InfiniteFuture();
  for (int s = 0; s < options_.shards; ++s) {
    const ShardLease& sl = shard_leases_[s];
    if (!sl.lease.has_value() || Holds(s)) continue;
    const leaderelection::LeaderElectionRecord& r = sl.lease->record;
    if (r.holder_identity.empty() || r.holder_identity == options_.identity) {
      continue;
    }
    absl::Time expiry = sl.observed_at + LeaseLife(r.lease_duration_seconds);
    auto it = member_expiry.find(r.holder_identity);
    if (it != member_expiry.end()) expiry = std::max(expiry, it->second);
    if (expiry > now) earliest = std::min(earliest, expiry);
  }
  return earliest;
}

void LeaseShardCoordinator::RunOnce(const Context& ctx) {
  const absl::Time start = Now();
  if (started_ == absl::InfinitePast()) started_ = start;
  CheckDeadlines();
  RenewHeld(ctx);
  RenewMembership(ctx);
  CheckDeadlines();
  const bool listed = ListAndObserve(ctx);
  CheckDeadlines();
  if (!listed || ctx.done()) return;

  std::vector<std::string> live;
  for (const auto& [name, m] : member_leases_) {
    if (m.record.holder_identity.empty()) continue;
    if (m.observed_at + LeaseLife(m.record.lease_duration_seconds) > Now()) {
      live.push_back(m.record.holder_identity);
    }
  }
  const Decision d = assigner_.Decide(live, States(Now()));
  live.push_back(options_.identity);
  std::sort(live.begin(), live.end());
  live.erase(std::unique(live.begin(), live.end()), live.end());
  {
    MutexLock lock(&mu_);
    target_ = d.target;
    members_ = std::move(live);
  }

  if (!d.release.empty()) {
    // Keep time to renew what stays after the drain.
    absl::Time deadline = Now() + options_.drain_timeout;
    for (int s : Held()) {
      if (std::find(d.release.begin(), d.release.end(), s) != d.release.end()) {
        continue;
      }
      deadline = std::min(deadline, shard_leases_[s].renewed_at +
                                        options_.renew_deadline -
                                        options_.retry_period);
    }
    GiveBack(d.release, Reason::kRebalance, deadline);
    if (Now() - last_renewal_ >= options_.retry_period) RenewHeld(ctx);
  }
  for (int s : d.acquire) {
    if (ctx.done()) break;
    TryAcquire(ctx, s);
    CheckDeadlines();
  }

  MutexLock lock(&mu_);
  if (!settled_ && (held_count_ >= target_ ||
                    Now() - started_ >=
                        options_.lease_duration + 3 * options_.retry_period)) {
    settled_ = true;
    LOG(INFO) << "shards settled controller=" << options_.controller
              << " held=" << held_count_ << " target=" << target_;
  }
}

void LeaseShardCoordinator::RenewMembership(const Context& ctx) {
  leaderelection::LeaderElectionRecord record;
  const absl::Time now = TruncateToMicros(Now());
  record.holder_identity = options_.identity;
  record.lease_duration_seconds = lease_duration_seconds_;
  record.acquire_time =
      member_lease_.has_value() ? member_lease_->record.acquire_time : now;
  record.renew_time = now;
  auto [req, cancel] = WithDeadline(ctx, RequestDeadline(), clock_);
  absl::StatusOr<ObservedLease> written =
      member_lease_.has_value()
          ? leases_->Update(req, *member_lease_, record)
          : leases_->Create(req, member_name_, kRoleMember, record);
  cancel();
  if (written.ok()) {
    member_lease_ = *std::move(written);
    return;
  }
  // Conflict or AlreadyExists: start again from the listed Lease.
  VLOG(2) << "membership lease not renewed controller=" << options_.controller
          << " err=" << written.status();
  if (api::IsConflict(written.status()) ||
      api::IsAlreadyExists(written.status()) ||
      api::IsNotFound(written.status())) {
    member_lease_.reset();
  }
}

void LeaseShardCoordinator::RenewHeld(const Context& ctx) {
  last_renewal_ = Now();
  for (int s : Held()) {
    CheckDeadlines();
    if (!Holds(s) || ctx.done()) continue;
    ShardLease& sl = shard_leases_[s];
    if (sl.stale || !sl.lease.has_value()) continue;
    const absl::Time start = Now();
    leaderelection::LeaderElectionRecord record = sl.lease->record;
    record.holder_identity = options_.identity;
    record.lease_duration_seconds = lease_duration_seconds_;
    record.renew_time = TruncateToMicros(start);
    auto [req, cancel] = WithDeadline(ctx, RequestDeadline(), clock_);
    absl::StatusOr<ObservedLease> written =
        leases_->Update(req, *sl.lease, record);
    cancel();
    if (written.ok()) {
      sl.lease = *std::move(written);
      sl.renewed_at = start;
      sl.observed_at = Now();
      continue;
    }
    VLOG(2) << "shard lease not renewed controller=" << options_.controller
            << " shard=" << s << " err=" << written.status();
    if (api::IsConflict(written.status())) sl.stale = true;
    if (api::IsNotFound(written.status())) {
      // Deleted under us: nobody else holds it through this Lease, but
      // whoever recreates it may; stop now.
      LOG(WARNING) << "shard lease deleted controller=" << options_.controller
                   << " shard=" << s;
      GiveBack({s}, Reason::kLost, sl.renewed_at + options_.lease_duration);
      sl.lease.reset();
    }
  }
  CheckDeadlines();
}

void LeaseShardCoordinator::CheckDeadlines() {
  const absl::Time now = Now();
  const std::vector<int> held = Held();
  std::vector<int> lost;
  absl::Time drain_end = absl::InfiniteFuture();
  for (int s : held) {
    const ShardLease& sl = shard_leases_[s];
    if (sl.renewed_at + options_.renew_deadline <= now) {
      lost.push_back(s);
      drain_end = std::min(drain_end, sl.renewed_at + options_.lease_duration);
    }
  }
  if (lost.empty()) return;
  // Nothing is renewed while the listeners drain: a shard whose renew
  // deadline falls before the drain may end is given up now too, rather
  // than noticed late.
  for (int s : held) {
    const ShardLease& sl = shard_leases_[s];
    if (std::find(lost.begin(), lost.end(), s) == lost.end() &&
        sl.renewed_at + options_.renew_deadline <= drain_end) {
      lost.push_back(s);
      drain_end = std::min(drain_end, sl.renewed_at + options_.lease_duration);
    }
  }
  for (int s : lost) {
    LOG(WARNING) << "shard lease not renewed within the renew deadline, "
                    "giving it up controller="
                 << options_.controller << " shard=" << s;
  }
  GiveBack(lost, Reason::kLost, drain_end);
}

bool LeaseShardCoordinator::ListAndObserve(const Context& ctx) {
  auto [req, cancel] = WithDeadline(ctx, RequestDeadline(), clock_);
  absl::StatusOr<std::vector<ObservedLease>> listed =
      leases_->List(req, absl::StrCat(options_.controller, "-"));
  cancel();
  if (!listed.ok()) {
    VLOG(2) << "shard leases not listed controller=" << options_.controller
            << " err=" << listed.status();
    return false;
  }
  const absl::Time now = Now();
  const std::string member_prefix =
      absl::StrCat(options_.controller, "-member-");
  std::vector<bool> seen(options_.shards, false);
  std::map<std::string, MemberLease> members;
  for (ObservedLease& lease : *listed) {
    if (absl::StartsWith(lease.name, member_prefix)) {
      MemberLease m;
      auto it = member_leases_.find(lease.name);
      if (it != member_leases_.end() && it->second.raw == lease.raw) {
        m = it->second;
      } else {
        m.raw = lease.raw;
        m.observed_at = now;
      }
      m.record = lease.record;
      if (lease.name == member_name_ && !member_lease_.has_value()) {
        member_lease_ = lease;
      }
      members[lease.name] = std::move(m);
      continue;
    }
    if (!absl::StartsWith(lease.name, shard_prefix_)) continue;
    const std::string suffix = lease.name.substr(shard_prefix_.size());
    int s;
    if (!absl::SimpleAtoi(suffix, &s) || s < 0 || s >= options_.shards ||
        absl::StrCat(s) != suffix) {
      continue;
    }
    seen[s] = true;
    ShardLease& sl = shard_leases_[s];
    const bool changed = !sl.lease.has_value() || sl.lease->raw != lease.raw;
    if (Holds(s)) {
      if (lease.record.holder_identity != options_.identity) {
        LOG(WARNING) << "shard lease taken by " << lease.record.holder_identity
                     << " controller=" << options_.controller << " shard=" << s;
        GiveBack({s}, Reason::kLost, now);
      } else if (sl.stale) {
        // A renewal whose answer we lost was stored: carry on from it (the
        // renew deadline still counts from our last known success).
        sl.lease = std::move(lease);
        sl.stale = false;
        continue;
      } else {
        continue;  // ours, as we last wrote it
      }
    }
    if (changed) sl.observed_at = now;
    sl.lease = std::move(lease);
    const leaderelection::LeaderElectionRecord& r = sl.lease->record;
    const bool alive =
        !r.holder_identity.empty() &&
        sl.observed_at + LeaseLife(r.lease_duration_seconds) > now;
    if (alive) {
      sl.free_since = absl::InfiniteFuture();
    } else if (sl.free_since == absl::InfiniteFuture()) {
      sl.free_since =
          r.holder_identity.empty()
              ? sl.observed_at
              : sl.observed_at + LeaseLife(r.lease_duration_seconds);
    }
  }
  for (int s = 0; s < options_.shards; ++s) {
    if (seen[s]) continue;
    ShardLease& sl = shard_leases_[s];
    if (Holds(s)) {
      LOG(WARNING) << "shard lease gone controller=" << options_.controller
                   << " shard=" << s;
      GiveBack({s}, Reason::kLost, now);
    }
    if (sl.lease.has_value() || sl.free_since == absl::InfiniteFuture()) {
      sl.lease.reset();
      sl.observed_at = now;
      sl.free_since = now;
    }
  }
  member_leases_ = std::move(members);
  return true;
}

std::vector<ShardState> LeaseShardCoordinator::States(absl::Time now) const {
  std::vector<ShardState> states(options_.shards);
  for (int s = 0; s < options_.shards; ++s) {
    const ShardLease& sl = shard_leases_[s];
    ShardState& st = states[s];
    st.mine = Holds(s);
    if (st.mine) continue;
    if (sl.lease.has_value()) {
      const leaderelection::LeaderElectionRecord& r = sl.lease->record;
      st.taken = !r.holder_identity.empty() &&
                 sl.observed_at + LeaseLife(r.lease_duration_seconds) > now;
      if (st.taken) st.holder = r.holder_identity;
    }
    if (!st.taken)
      st.free_for = std::max(absl::ZeroDuration(), now - sl.free_since);
  }
  return states;
}

void LeaseShardCoordinator::TryAcquire(const Context& ctx, int shard) {
  ShardLease& sl = shard_leases_[shard];
  const absl::Time start = Now();
  leaderelection::LeaderElectionRecord record;
  record.holder_identity = options_.identity;
  record.lease_duration_seconds = lease_duration_seconds_;
  record.acquire_time = record.renew_time = TruncateToMicros(start);
  std::optional<absl::Time> previous_write;
  absl::StatusOr<ObservedLease> written;
  {
    // Bounded by renew_deadline too, as leader election's attempts are, so
    // that a hung request cannot win the Lease long after it was sent.
    auto [req, cancel] = WithDeadline(
        ctx, std::min(RequestDeadline(), start + options_.renew_deadline),
        clock_);
    if (sl.lease.has_value()) {
      record.leader_transitions = sl.lease->record.leader_transitions + 1;
      if (sl.lease->record.renew_time > absl::UnixEpoch()) {
        previous_write = sl.lease->record.renew_time;
      }
      written = leases_->Update(req, *sl.lease, record);
    } else {
      written = leases_->Create(req, ShardLeaseName(shard), kRoleShard, record);
    }
    cancel();
  }
  if (!written.ok()) {
    VLOG(2) << "shard not taken controller=" << options_.controller
            << " shard=" << shard << " err=" << written.status();
    return;
  }
  sl.lease = *std::move(written);
  sl.renewed_at = start;
  sl.observed_at = Now();
  sl.free_since = absl::InfiniteFuture();
  sl.stale = false;
  SetHeld(shard, true);
  if (acquisitions_metric_ != nullptr) acquisitions_metric_->Inc();
  if (handover_metric_ != nullptr && previous_write.has_value()) {
    handover_metric_->Observe(
        std::max(0.0, absl::ToDoubleSeconds(start - *previous_write)));
  }
  VLOG(2) << "shard taken controller=" << options_.controller
          << " shard=" << shard;
  std::vector<ShardListener*> listeners;
  {
    MutexLock lock(&mu_);
    listeners = listeners_;
  }
  for (ShardListener* l : listeners) l->OnAcquired(shard);
}

void LeaseShardCoordinator::GiveBack(const std::vector<int>& shards,
                                     Reason reason, absl::Time deadline) {
  std::vector<int> giving;
  for (int s : shards) {
    if (Holds(s)) giving.push_back(s);
  }
  if (giving.empty()) return;
  // Holds() turns false first: the controller stops enqueueing at once.
  for (int s : giving) SetHeld(s, false);
  std::vector<ShardListener*> listeners;
  {
    MutexLock lock(&mu_);
    listeners = listeners_;
  }
  for (int s : giving) {
    for (ShardListener* l : listeners) l->OnReleasing(s, deadline);
  }
  CounterMetric* counter = reason == Reason::kLost   ? lost_metric_.get()
                           : reason == Reason::kStop ? stop_metric_.get()
                                                     : rebalance_metric_.get();
  if (counter != nullptr) {
    for (size_t i = 0; i < giving.size(); ++i) counter->Inc();
  }
  if (reason == Reason::kLost) return;  // left to expire

  // Only now that the listeners are done may another replica take them.
  // Run's context may be over: the releases have a context of their own.
  auto [ctx, cancel] =
      WithTimeout(Context::Background(), options_.renew_deadline, clock_);
  for (int s : giving) {
    ShardLease& sl = shard_leases_[s];
    if (!sl.lease.has_value() || sl.stale) continue;
    const absl::Time now = TruncateToMicros(Now());
    leaderelection::LeaderElectionRecord record;
    record.leader_transitions = sl.lease->record.leader_transitions;
    record.lease_duration_seconds = 1;
    record.acquire_time = record.renew_time = now;
    absl::StatusOr<ObservedLease> written =
        leases_->Update(ctx, *sl.lease, record);
    if (!written.ok()) {
      LOG(WARNING) << "shard lease not released (it will expire) controller="
                   << options_.controller << " shard=" << s
                   << " err=" << written.status();
      continue;
    }
    sl.lease = *std::move(written);
    sl.observed_at = Now();
    sl.free_since = sl.observed_at;
    VLOG(2) << "shard released controller=" << options_.controller
            << " shard=" << s
            << " reason=" << (reason == Reason::kStop ? "stop" : "rebalance");
  }
  cancel();
}

void LeaseShardCoordinator::Stop() {
  GiveBack(Held(), Reason::kStop, Now() + options_.drain_timeout);
  if (!member_lease_.has_value()) return;
  auto [ctx, cancel] =
      WithTimeout(Context::Background(), options_.renew_deadline, clock_);
  const absl::Time now = TruncateToMicros(Now());
  leaderelection::LeaderElectionRecord record;
  record.lease_duration_seconds = 1;
  record.acquire_time = record.renew_time = now;
  absl::StatusOr<ObservedLease> written =
      leases_->Update(ctx, *member_lease_, record);
  cancel();
  if (!written.ok()) {
    LOG(WARNING) << "membership lease not released controller="
                 << options_.controller << " err=" << written.status();
    return;
  }
  member_lease_.reset();
}

}  // namespace kcr::sharding
