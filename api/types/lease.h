// Lease (coordination.k8s.io/v1): the record leader election reads and
// writes. Times are metav1.MicroTime (RFC 3339 with microseconds).
#ifndef KCR_API_TYPES_LEASE_H_
#define KCR_API_TYPES_LEASE_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "api/types/view.h"

namespace kcr {
namespace api {

class LeaseView : public TypedView {
 public:
  // Where it lives on the server (GroupVersionResource and scope).
  static constexpr char kGroup[] = "coordination.k8s.io";
  static constexpr char kVersion[] = "v1";
  static constexpr char kPlural[] = "leases";
  static constexpr bool kNamespaced = true;

  static absl::StatusOr<LeaseView> Create(ObjectPtr lease);

  // spec.*; empty / nullopt when absent or mistyped.
  std::string_view holder_identity() const;
  std::optional<int32_t> lease_duration_seconds() const;
  std::string_view acquire_time_text() const;
  std::string_view renew_time_text() const;
  // Parsed times; nullopt when absent or not RFC 3339.
  std::optional<absl::Time> acquire_time() const;
  std::optional<absl::Time> renew_time() const;
  int32_t lease_transitions() const;  // 0 when absent

 private:
  explicit LeaseView(ObjectPtr o) : TypedView(std::move(o)) {}
};

class LeaseBuilder {
 public:
  LeaseBuilder(std::string_view namespace_, std::string_view name);
  // Edits an existing Lease, keeping its resourceVersion for the update.
  explicit LeaseBuilder(const Object& lease);

  LeaseBuilder& SetHolderIdentity(std::string_view holder);
  LeaseBuilder& SetLeaseDurationSeconds(int32_t seconds);
  LeaseBuilder& SetAcquireTime(absl::Time t);
  LeaseBuilder& SetRenewTime(absl::Time t);
  LeaseBuilder& SetLeaseTransitions(int32_t transitions);

  ObjectBuilder& object() { return builder_; }
  absl::StatusOr<ObjectPtr> Build() const { return builder_.Build(); }

 private:
  ObjectBuilder builder_;
};

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_TYPES_LEASE_H_
