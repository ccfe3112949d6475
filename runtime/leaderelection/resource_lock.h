// ResourceLock: the record leader election keeps on the server, and the
// interface to read and write it (client-go's tools/leaderelection/
// resourcelock.Interface). LeaseLock (lease_lock.h) implements it on a
// coordination.k8s.io/v1 Lease; tests implement it in memory.
#ifndef KCR_RUNTIME_LEADERELECTION_RESOURCE_LOCK_H_
#define KCR_RUNTIME_LEADERELECTION_RESOURCE_LOCK_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/context.h"

namespace kcr::leaderelection {

// Who holds the lock, and since when (client-go's LeaderElectionRecord).
// Times travel as metav1.MicroTime, so they are kept to the microsecond.
struct LeaderElectionRecord {
  // Empty when nobody holds the lock (e.g. after a release).
  std::string holder_identity;
  int32_t lease_duration_seconds = 0;
  absl::Time acquire_time = absl::UnixEpoch();
  absl::Time renew_time = absl::UnixEpoch();
  int32_t leader_transitions = 0;

  friend bool operator==(const LeaderElectionRecord& a,
                         const LeaderElectionRecord& b) {
    return a.holder_identity == b.holder_identity &&
           a.lease_duration_seconds == b.lease_duration_seconds &&
           a.acquire_time == b.acquire_time && a.renew_time == b.renew_time &&
           a.leader_transitions == b.leader_transitions;
  }
  friend bool operator!=(const LeaderElectionRecord& a,
                         const LeaderElectionRecord& b) {
    return !(a == b);
  }
};

// A record as read from the server, with its raw form: the elector decides
// whether the record changed by comparing raw forms, so that any change on
// the server (even in a field the record does not carry) counts as the
// holder being alive.
struct ObservedRecord {
  LeaderElectionRecord record;
  std::string raw;
};

// The lock. Calls come from the elector's thread one at a time, but
// implementations must be thread-safe. Errors are the API server's
// (api/errors/errors.h): Get returns one that api::IsNotFound recognises
// when the lock does not exist; Update returns one that api::IsConflict
// recognises when the lock changed since it was last read or written (a
// lost race, which the elector answers by reading again, never by
// re-sending).
class ResourceLock {
 public:
  virtual ~ResourceLock() = default;

  // Reads the record, and remembers the version read for the next Update.
  virtual absl::StatusOr<ObservedRecord> Get(const Context& ctx) = 0;

  // Creates the lock holding `record`; remembers the version created.
  virtual absl::Status Create(const Context& ctx,
                              const LeaderElectionRecord& record) = 0;

  // Replaces the record, conditional on the version last read or written
  // (FailedPrecondition when there is none yet: call Get or Create first);
  // on success remembers the new version.
  virtual absl::Status Update(const Context& ctx,
                              const LeaderElectionRecord& record) = 0;

  // This candidate's identity, unique among the candidates.
  virtual const std::string& Identity() const = 0;

  // The lock's name for logs, e.g. "kube-system/my-controller".
  virtual std::string Describe() const = 0;
};

}  // namespace kcr::leaderelection

#endif  // KCR_RUNTIME_LEADERELECTION_RESOURCE_LOCK_H_
