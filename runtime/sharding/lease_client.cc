#include "runtime/sharding/lease_client.h"

#include <utility>

#include "api/types/lease.h"
#include "base/status_macros.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "runtime/leaderelection/lease_lock.h"

namespace kcr::sharding {
namespace {

const api::GroupVersionResource kLeases{
    api::LeaseView::kGroup, api::LeaseView::kVersion, api::LeaseView::kPlural};

std::string RawSpec(const api::Object& lease) {
  auto spec = lease.json().FindMember("spec");
  if (spec == lease.json().MemberEnd()) return "";
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  spec->value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

ObservedLease Observe(api::ObjectPtr lease) {
  ObservedLease observed;
  observed.name = std::string(lease->name());
  observed.record = leaderelection::RecordFromLease(lease);
  observed.raw = RawSpec(*lease);
  observed.object = std::move(lease);
  return observed;
}

void SetSpec(api::LeaseBuilder& builder,
             const leaderelection::LeaderElectionRecord& record) {
  builder.SetHolderIdentity(record.holder_identity)
      .SetLeaseDurationSeconds(record.lease_duration_seconds)
      .SetAcquireTime(record.acquire_time)
      .SetRenewTime(record.renew_time)
      .SetLeaseTransitions(record.leader_transitions);
}

class RestLeaseClient final : public LeaseClient {
 public:
  RestLeaseClient(client::RestClient* client, std::string namespace_,
                  std::string controller)
      : client_(client),
        resource_(client::Resource::Namespaced(kLeases, std::move(namespace_))),
        controller_(std::move(controller)) {}

  absl::StatusOr<std::vector<ObservedLease>> List(
      const Context& ctx, std::string_view prefix) override {
    std::vector<ObservedLease> leases;
    client::ListOptions options;
    KCR_RETURN_IF_ERROR(
        client_
            ->ListEach(ctx, resource_, options,
                       [&](api::ObjectPtr lease) {
                         if (lease->name().substr(0, prefix.size()) == prefix) {
                           leases.push_back(Observe(std::move(lease)));
                         }
                         return absl::OkStatus();
                       })
            .status());
    return leases;
  }

  absl::StatusOr<ObservedLease> Create(
      const Context& ctx, std::string_view name, std::string_view role,
      const leaderelection::LeaderElectionRecord& record) override {
    api::LeaseBuilder builder(resource_.namespace_, name);
    builder.object().SetLabel(kControllerLabel, controller_);
    builder.object().SetLabel(kRoleLabel, role);
    SetSpec(builder, record);
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr lease, builder.Build());
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr created,
                         client_->Create(ctx, resource_, *lease));
    return Observe(std::move(created));
  }

  absl::StatusOr<ObservedLease> Update(
      const Context& ctx, const ObservedLease& base,
      const leaderelection::LeaderElectionRecord& record) override {
    if (base.object == nullptr) {
      return absl::FailedPreconditionError("no Lease to update");
    }
    // The builder keeps the resourceVersion read: the PUT is conditional.
    api::LeaseBuilder builder(*base.object);
    SetSpec(builder, record);
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr lease, builder.Build());
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr updated,
                         client_->Update(ctx, resource_, *lease));
    return Observe(std::move(updated));
  }

 private:
  client::RestClient* const client_;
  const client::Resource resource_;
  const std::string controller_;
};

}  // namespace

std::unique_ptr<LeaseClient> NewRestLeaseClient(client::RestClient* client,
                                                std::string namespace_,
                                                std::string controller) {
  return std::make_unique<RestLeaseClient>(client, std::move(namespace_),
                                           std::move(controller));
}

}  // namespace kcr::sharding
