// LeaseLock: a ResourceLock on a coordination.k8s.io/v1 Lease (client-go's
// resourcelock.LeaseLock), read with GET, created with POST and updated
// with a PUT that carries the resourceVersion last seen, so that of two
// candidates racing on one version exactly one wins and the other gets a
// Conflict.
#ifndef KCR_RUNTIME_LEADERELECTION_LEASE_LOCK_H_
#define KCR_RUNTIME_LEADERELECTION_LEASE_LOCK_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/object.h"
#include "base/context.h"
#include "base/mutex.h"
#include "runtime/client/rest_client.h"
#include "runtime/leaderelection/resource_lock.h"

namespace kcr::leaderelection {

// The record of a Lease's spec; fields absent or unparsable read as empty
// or zero (client-go reads a Lease the same way).
LeaderElectionRecord RecordFromLease(const api::ObjectPtr& lease);

class LeaseLock final : public ResourceLock {
 public:
  // The Lease `namespace_`/`name`, written as `identity`. `client` is not
  // owned and must outlive the lock.
  LeaseLock(client::RestClient* client, std::string namespace_,
            std::string name, std::string identity);

  // Thread-safe.
  absl::StatusOr<ObservedRecord> Get(const Context& ctx) override;
  absl::Status Create(const Context& ctx,
                      const LeaderElectionRecord& record) override;
  absl::Status Update(const Context& ctx,
                      const LeaderElectionRecord& record) override;
  const std::string& Identity() const override { return identity_; }
  std::string Describe() const override;

 private:
  client::RestClient* const client_;
  const client::Resource resource_;
  const std::string name_;
  const std::string identity_;

  mutable Mutex mu_;
  // The Lease as last read or written: the base of the next Update.
  api::ObjectPtr lease_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kcr::leaderelection

#endif  // KCR_RUNTIME_LEADERELECTION_LEASE_LOCK_H_
