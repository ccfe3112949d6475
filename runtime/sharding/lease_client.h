// LeaseClient: the shard coordinator's access to the Leases of one sharded
// controller in one namespace: list them all, create one, and update one
// conditionally on the version last read or written (a lost race is a
// Conflict, never a blind overwrite). RestLeaseClient implements it on
// coordination.k8s.io/v1 Leases through the REST client; tests may wrap it
// to inject failures.
#ifndef KCR_RUNTIME_SHARDING_LEASE_CLIENT_H_
#define KCR_RUNTIME_SHARDING_LEASE_CLIENT_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/object.h"
#include "base/context.h"
#include "runtime/client/rest_client.h"
#include "runtime/leaderelection/resource_lock.h"

namespace kcr::sharding {

// A Lease as read or written.
struct ObservedLease {
  std::string name;
  // Absent or unparsable fields read as empty or zero
  // (leaderelection::RecordFromLease).
  leaderelection::LeaderElectionRecord record;
  // The spec serialized: two reads give equal raw forms exactly when the
  // spec did not change (any change counts as its holder being alive).
  std::string raw;
  // The Lease itself: the base of the next conditional update.
  api::ObjectPtr object;
};

// The label every Lease a coordinator creates carries, with the
// controller's name as value, and the one that says which kind of Lease it
// is ("shard" or "member"). For people and kubectl: the coordinator finds
// its Leases by name.
inline constexpr char kControllerLabel[] = "sharding.kcr.dev/controller";
inline constexpr char kRoleLabel[] = "sharding.kcr.dev/role";

// Thread-safe.
class LeaseClient {
 public:
  virtual ~LeaseClient() = default;

  // Every Lease in the namespace whose name starts with `prefix`.
  virtual absl::StatusOr<std::vector<ObservedLease>> List(
      const Context& ctx, std::string_view prefix) = 0;

  // Creates the Lease `name` with `record` in its spec, labelled with
  // `role`. AlreadyExists when it exists.
  virtual absl::StatusOr<ObservedLease> Create(
      const Context& ctx, std::string_view name, std::string_view role,
      const leaderelection::LeaderElectionRecord& record) = 0;

  // Replaces the spec of `base` (as listed, created or updated) with
  // `record`, conditional on base's resourceVersion: Conflict when the
  // Lease changed since, NotFound when it is gone.
  virtual absl::StatusOr<ObservedLease> Update(
      const Context& ctx, const ObservedLease& base,
      const leaderelection::LeaderElectionRecord& record) = 0;
};

// The Leases of `controller` in `namespace_` through `client` (not owned;
// must outlive the LeaseClient).
std::unique_ptr<LeaseClient> NewRestLeaseClient(client::RestClient* client,
                                                std::string namespace_,
                                                std::string controller);

}  // namespace kcr::sharding

#endif  // KCR_RUNTIME_SHARDING_LEASE_CLIENT_H_
