#include "api/types/lease.h"

#include "api/types/field.h"
#include "api/types/time.h"

namespace kcr {
namespace api {
namespace {

const rapidjson::Value* Spec(const Object& o) {
  return field::Object(&o.json(), "spec");
}

std::optional<absl::Time> OptionalTime(std::string_view text) {
  if (text.empty()) return std::nullopt;
  absl::StatusOr<absl::Time> t = ParseTime(text);
  if (!t.ok()) return std::nullopt;
  return *t;
}

}  // namespace

absl::StatusOr<LeaseView> LeaseView::Create(ObjectPtr lease) {
  if (absl::Status s = Check(lease, "Lease"); !s.ok()) return s;
  return LeaseView(std::move(lease));
}

std::string_view LeaseView::holder_identity() const {
  return field::String(Spec(object()), "holderIdentity");
}
std::optional<int32_t> LeaseView::lease_duration_seconds() const {
  return field::Int32(Spec(object()), "leaseDurationSeconds");
}
std::string_view LeaseView::acquire_time_text() const {
  return field::String(Spec(object()), "acquireTime");
}
std::string_view LeaseView::renew_time_text() const {
  return field::String(Spec(object()), "renewTime");
}
std::optional<absl::Time> LeaseView::acquire_time() const {
  return OptionalTime(acquire_time_text());
}
std::optional<absl::Time> LeaseView::renew_time() const {
  return OptionalTime(renew_time_text());
}
int32_t LeaseView::lease_transitions() const {
  return field::Int32(Spec(object()), "leaseTransitions").value_or(0);
}

LeaseBuilder::LeaseBuilder(std::string_view namespace_, std::string_view name)
    : builder_("coordination.k8s.io/v1", "Lease") {
  builder_.SetName(name).SetNamespace(namespace_);
}

LeaseBuilder::LeaseBuilder(const Object& lease) : builder_(lease) {}

LeaseBuilder& LeaseBuilder::SetHolderIdentity(std::string_view holder) {
  (void)builder_.SetString("/spec/holderIdentity", holder);
  return *this;
}
LeaseBuilder& LeaseBuilder::SetLeaseDurationSeconds(int32_t seconds) {
  (void)builder_.SetInt("/spec/leaseDurationSeconds", seconds);
  return *this;
}
LeaseBuilder& LeaseBuilder::SetAcquireTime(absl::Time t) {
  (void)builder_.SetString("/spec/acquireTime", FormatRfc3339Micro(t));
  return *this;
}
LeaseBuilder& LeaseBuilder::SetRenewTime(absl::Time t) {
  (void)builder_.SetString("/spec/renewTime", FormatRfc3339Micro(t));
  return *this;
}
LeaseBuilder& LeaseBuilder::SetLeaseTransitions(int32_t transitions) {
  (void)builder_.SetInt("/spec/leaseTransitions", transitions);
  return *this;
}

}  // namespace api
}  // namespace kcr
