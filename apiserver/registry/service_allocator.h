// ServiceAllocator: kube-apiserver's ClusterIP and NodePort allocators for
// Services. A Service of type ClusterIP, NodePort or LoadBalancer gets
// spec.clusterIP (and clusterIPs, ipFamilies [IPv4], ipFamilyPolicy
// SingleStack) from the service CIDR (10.96.0.0/12; the first address,
// 10.96.0.1, is left for the `kubernetes` Service, which asks for it); a
// requested address is honoured when free and in range, and a headless
// Service (clusterIP None) keeps None. A NodePort or LoadBalancer Service
// gets a nodePort (30000-32767) for each port that has none; a requested
// one likewise. A taken or out-of-range request is 422, with
// kube-apiserver's message (`spec.clusterIPs: Invalid value:
// []string{"10.96.0.10"}: failed to allocate IP 10.96.0.10: provided IP is
// already allocated`). Free values are picked at random, as kube does.
//
// The allocator keeps what each stored Service holds: Observe every write
// of a Service (and every Service present at start); a Service's values
// are released when it is deleted (or no longer holds them).
//
// Thread-safe.
#ifndef KCR_APISERVER_REGISTRY_SERVICE_ALLOCATOR_H_
#define KCR_APISERVER_REGISTRY_SERVICE_ALLOCATOR_H_

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/meta/group_version.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "base/mutex.h"

namespace kcr {
namespace apiserver {

struct ServiceAllocatorOptions {
  // IPv4 CIDR of cluster IPs.
  std::string service_cidr = "10.96.0.0/12";
  int node_port_min = 30000;
  int node_port_max = 32767;
};

class ServiceAllocator {
 public:
  // What one call reserved: released again when the write fails.
  struct Allocation {
    std::string holder;
    std::vector<uint32_t> ips;
    std::vector<int> node_ports;
  };

  explicit ServiceAllocator(ServiceAllocatorOptions options = {});

  // Fills the clusterIP and nodePorts of `service` (a Service being
  // created, or, with `live`, updated: what `live` holds stays its own) and
  // reserves them. 422 Invalid (GroupKind `kind`) for a taken or
  // out-of-range request, or a full range.
  absl::StatusOr<Allocation> Allocate(const api::GroupKind& kind,
                                      const api::Object* live,
                                      api::ObjectBuilder* service);
  // Gives back what a failed or dry-run write reserved.
  void Release(const Allocation& allocation);
  // A stored write of a Service: `previous` (null when created) gives up
  // what it held, `current` (null when deleted) holds its values.
  void Observe(const api::Object* previous, const api::Object* current);

 private:
  // Releases every value `holder` holds.
  void ReleaseLocked(const std::string& holder)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ServiceAllocatorOptions options_;
  uint32_t base_ = 0;  // network address of the CIDR
  uint32_t size_ = 0;  // addresses in it
  mutable Mutex mu_;
  // Holder ("<ns>/<name>", "" while a create is in flight) of each value.
  std::map<uint32_t, std::string> ips_ ABSL_GUARDED_BY(mu_);
  std::map<int, std::string> node_ports_ ABSL_GUARDED_BY(mu_);
  std::mt19937 random_ ABSL_GUARDED_BY(mu_);
  uint64_t creates_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_SERVICE_ALLOCATOR_H_
