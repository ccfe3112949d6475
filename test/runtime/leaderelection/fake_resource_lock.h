// FakeLockStore and FakeResourceLock: an in-memory lock for leader election
// tests. The store plays the API server (one record with a version, and
// faults on demand); each candidate's FakeResourceLock remembers the
// version it last read or wrote, as LeaseLock remembers a resourceVersion.
#ifndef KCR_TEST_RUNTIME_LEADERELECTION_FAKE_RESOURCE_LOCK_H_
#define KCR_TEST_RUNTIME_LEADERELECTION_FAKE_RESOURCE_LOCK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/context.h"
#include "base/mutex.h"
#include "runtime/leaderelection/resource_lock.h"

namespace kcr::leaderelection::testing {

// Thread-safe.
class FakeLockStore {
 public:
  // The record now; nullopt before anyone created it.
  std::optional<LeaderElectionRecord> record() const;
  // Writes `record` as some other party would (a new version).
  void Put(const LeaderElectionRecord& record);
  // Every call fails with `status` until set back to OK.
  void FailAll(absl::Status status);
  // The next Update answers a Conflict, as if someone wrote just before.
  void ConflictNextUpdate();
  // While on, calls block until their context is done (a hung request).
  void SetHang(bool hang);
  // Calls blocked by SetHang now.
  int hung_calls() const;
  // Every call, in order: "get <identity>", "create <identity>: <holder>",
  // "update <identity>: <holder>" (failed ones end in " failed"), and the
  // lines given to Log.
  std::vector<std::string> log() const;
  void Log(std::string line);

  absl::StatusOr<ObservedRecord> Get(const Context& ctx,
                                     const std::string& identity,
                                     int64_t* version);
  absl::Status Create(const Context& ctx, const std::string& identity,
                      const LeaderElectionRecord& record, int64_t* version);
  absl::Status Update(const Context& ctx, const std::string& identity,
                      const LeaderElectionRecord& record, int64_t* version);

 private:
  // Applies hang and FailAll; returns the error to answer, if any.
  absl::Status Fault(const Context& ctx) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  ContextCondVar cv_;
  std::optional<LeaderElectionRecord> record_ ABSL_GUARDED_BY(mu_);
  int64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status fail_ ABSL_GUARDED_BY(mu_);
  bool conflict_next_update_ ABSL_GUARDED_BY(mu_) = false;
  bool hang_ ABSL_GUARDED_BY(mu_) = false;
  int hung_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> log_ ABSL_GUARDED_BY(mu_);
};

// The raw form FakeLockStore gives a record.
std::string RawRecord(const LeaderElectionRecord& record);

class FakeResourceLock final : public ResourceLock {
 public:
  // `store` is not owned.
  FakeResourceLock(FakeLockStore* store, std::string identity)
      : store_(store), identity_(std::move(identity)) {}

  absl::StatusOr<ObservedRecord> Get(const Context& ctx) override;
  absl::Status Create(const Context& ctx,
                      const LeaderElectionRecord& record) override;
  absl::Status Update(const Context& ctx,
                      const LeaderElectionRecord& record) override;
  const std::string& Identity() const override { return identity_; }
  std::string Describe() const override { return "default/fake"; }

 private:
  FakeLockStore* const store_;
  const std::string identity_;
  Mutex mu_;
  // -1: nothing read or written yet.
  int64_t version_ ABSL_GUARDED_BY(mu_) = -1;
};

}  // namespace kcr::leaderelection::testing

#endif  // KCR_TEST_RUNTIME_LEADERELECTION_FAKE_RESOURCE_LOCK_H_
