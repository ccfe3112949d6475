#include "runtime/leaderelection/lease_lock.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "api/types/lease.h"
#include "base/status_macros.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr::leaderelection {
namespace {

const api::GroupVersionResource kLeases{
    api::LeaseView::kGroup, api::LeaseView::kVersion, api::LeaseView::kPlural};

// The spec as the server sent it, serialized: two reads give the same raw
// form exactly when the spec did not change.
std::string RawSpec(const api::Object& lease) {
  auto spec = lease.json().FindMember("spec");
  if (spec == lease.json().MemberEnd()) return "";
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  spec->value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

void SetSpec(api::LeaseBuilder& builder, const LeaderElectionRecord& record) {
  builder.SetHolderIdentity(record.holder_identity)
      .SetLeaseDurationSeconds(record.lease_duration_seconds)
      .SetAcquireTime(record.acquire_time)
      .SetRenewTime(record.renew_time)
      .SetLeaseTransitions(record.leader_transitions);
}

}  // namespace

LeaderElectionRecord RecordFromLease(const api::ObjectPtr& lease) {
  LeaderElectionRecord record;
  absl::StatusOr<api::LeaseView> view = api::LeaseView::Create(lease);
  if (!view.ok()) return record;
  record.holder_identity = std::string(view->holder_identity());
  record.lease_duration_seconds = view->lease_duration_seconds().value_or(0);
  record.acquire_time = view->acquire_time().value_or(absl::UnixEpoch());
  record.renew_time = view->renew_time().value_or(absl::UnixEpoch());
  record.leader_transitions = view->lease_transitions();
  return record;
}

LeaseLock::LeaseLock(client::RestClient* client, std::string namespace_,
                     std::string name, std::string identity)
    : client_(client),
      resource_(client::Resource::Namespaced(kLeases, std::move(namespace_))),
      name_(std::move(name)),
      identity_(std::move(identity)) {}

absl::StatusOr<ObservedRecord> LeaseLock::Get(const Context& ctx) {
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr lease,
                       client_->Get(ctx, resource_, name_));
  ObservedRecord observed{RecordFromLease(lease), RawSpec(*lease)};
  MutexLock lock(&mu_);
  lease_ = std::move(lease);
  return observed;
}

absl::Status LeaseLock::Create(const Context& ctx,
                               const LeaderElectionRecord& record) {
  api::LeaseBuilder builder(resource_.namespace_, name_);
  SetSpec(builder, record);
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr lease, builder.Build());
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr created,
                       client_->Create(ctx, resource_, *lease));
  MutexLock lock(&mu_);
  lease_ = std::move(created);
  return absl::OkStatus();
}

absl::Status LeaseLock::Update(const Context& ctx,
                               const LeaderElectionRecord& record) {
  api::ObjectPtr base;
  {
    MutexLock lock(&mu_);
    base = lease_;
  }
  if (base == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "lease ", Describe(), " not initialized: call Get or Create first"));
  }
  // The builder keeps the resourceVersion read: the PUT is conditional.
  api::LeaseBuilder builder(*base);
  SetSpec(builder, record);
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr lease, builder.Build());
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr updated,
                       client_->Update(ctx, resource_, *lease));
  MutexLock lock(&mu_);
  lease_ = std::move(updated);
  return absl::OkStatus();
}

std::string LeaseLock::Describe() const {
  return absl::StrCat(resource_.namespace_, "/", name_);
}

}  // namespace kcr::leaderelection
