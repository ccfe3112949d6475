#include "test/runtime/leaderelection/fake_resource_lock.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "api/errors/errors.h"
#include "api/types/time.h"

namespace kcr::leaderelection::testing {
namespace {

const api::GroupResource kLeases{"coordination.k8s.io", "leases"};

}  // namespace

std::string RawRecord(const LeaderElectionRecord& r) {
  return absl::StrCat(r.holder_identity, "|", r.lease_duration_seconds, "|",
                      api::FormatRfc3339Micro(r.acquire_time), "|",
                      api::FormatRfc3339Micro(r.renew_time), "|",
                      r.leader_transitions);
}

std::optional<LeaderElectionRecord> FakeLockStore::record() const {
  MutexLock lock(&mu_);
  return record_;
}

void FakeLockStore::Put(const LeaderElectionRecord& record) {
  MutexLock lock(&mu_);
  record_ = record;
  ++version_;
}

void FakeLockStore::FailAll(absl::Status status) {
  MutexLock lock(&mu_);
  fail_ = std::move(status);
}

void FakeLockStore::ConflictNextUpdate() {
  MutexLock lock(&mu_);
  conflict_next_update_ = true;
}

void FakeLockStore::SetHang(bool hang) {
  {
    MutexLock lock(&mu_);
    hang_ = hang;
  }
  cv_.SignalAll();
}

int FakeLockStore::hung_calls() const {
  MutexLock lock(&mu_);
  return hung_;
}

std::vector<std::string> FakeLockStore::log() const {
  MutexLock lock(&mu_);
  return log_;
}

void FakeLockStore::Log(std::string line) {
  MutexLock lock(&mu_);
  log_.push_back(std::move(line));
}

absl::Status FakeLockStore::Fault(const Context& ctx) {
  if (hang_) {
    ++hung_;
    auto released = [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return !hang_; };
    absl::Status s = cv_.Await(&mu_, ctx, absl::Condition(&released));
    --hung_;
    if (!s.ok()) return s;
  }
  if (ctx.done()) return ctx.Err();
  return fail_;
}

absl::StatusOr<ObservedRecord> FakeLockStore::Get(const Context& ctx,
                                                  const std::string& identity,
                                                  int64_t* version) {
  MutexLock lock(&mu_);
  absl::Status s = Fault(ctx);
  log_.push_back(absl::StrCat("get ", identity, s.ok() ? "" : " failed"));
  if (!s.ok()) return s;
  if (!record_.has_value()) {
    return api::StatusError::NotFound(kLeases, "fake").ToStatus();
  }
  *version = version_;
  return ObservedRecord{*record_, RawRecord(*record_)};
}

absl::Status FakeLockStore::Create(const Context& ctx,
                                   const std::string& identity,
                                   const LeaderElectionRecord& record,
                                   int64_t* version) {
  MutexLock lock(&mu_);
  absl::Status s = Fault(ctx);
  if (s.ok() && record_.has_value()) {
    s = api::StatusError::AlreadyExists(kLeases, "fake").ToStatus();
  }
  log_.push_back(absl::StrCat("create ", identity, ": ", record.holder_identity,
                              s.ok() ? "" : " failed"));
  if (!s.ok()) return s;
  record_ = record;
  *version = ++version_;
  return absl::OkStatus();
}

absl::Status FakeLockStore::Update(const Context& ctx,
                                   const std::string& identity,
                                   const LeaderElectionRecord& record,
                                   int64_t* version) {
  MutexLock lock(&mu_);
  absl::Status s = Fault(ctx);
  if (s.ok() && (conflict_next_update_ || *version != version_)) {
    conflict_next_update_ = false;
    s = api::StatusError::StaleConflict(kLeases, "fake").ToStatus();
  }
  log_.push_back(absl::StrCat("update ", identity, ": ", record.holder_identity,
                              s.ok() ? "" : " failed"));
  if (!s.ok()) return s;
  record_ = record;
  *version = ++version_;
  return absl::OkStatus();
}

absl::StatusOr<ObservedRecord> FakeResourceLock::Get(const Context& ctx) {
  MutexLock lock(&mu_);
  return store_->Get(ctx, identity_, &version_);
}

absl::Status FakeResourceLock::Create(const Context& ctx,
                                      const LeaderElectionRecord& record) {
  MutexLock lock(&mu_);
  return store_->Create(ctx, identity_, record, &version_);
}

absl::Status FakeResourceLock::Update(const Context& ctx,
                                      const LeaderElectionRecord& record) {
  MutexLock lock(&mu_);
  if (version_ < 0) {
    return absl::FailedPreconditionError(
        "lock not initialized: call Get or Create first");
  }
  return store_->Update(ctx, identity_, record, &version_);
}

}  // namespace kcr::leaderelection::testing
