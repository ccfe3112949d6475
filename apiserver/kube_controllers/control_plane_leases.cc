#include "apiserver/kube_controllers/control_plane_leases.h"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>

#include "api/errors/errors.h"
#include "api/object_builder.h"
#include "api/types/time.h"
#include "apiserver/internal/names.h"
#include "apiserver/kube_controllers/stored_objects.h"
#include "base/str_cat.h"
#include "glog/logging.h"

namespace kcr {
namespace apiserver {
namespace {

constexpr char kLeases[] = "coordination.k8s.io/leases";
constexpr char kNodeLeaseNamespace[] = "kube-node-lease";
constexpr char kSystemNamespace[] = "kube-system";

// A stable id for the API server on `host`: 26 lowercase base32
// characters of two FNV-1a hashes, as kube's apiserver-<hash> names look.
std::string IdentityName(std::string_view host) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
  uint64_t h1 = 14695981039346656037ull, h2 = 1099511628211ull;
  for (char c : host) {
    h1 = (h1 ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    h2 = (h2 ^ static_cast<unsigned char>(c)) * 14695981039346656037ull + 7;
  }
  std::string out = "apiserver-";
  for (int i = 0; i < 13; ++i) out += kAlphabet[(h1 >> (5 * i)) & 31];
  for (int i = 0; i < 13; ++i) out += kAlphabet[(h2 >> (5 * i)) & 31];
  return out;
}

std::string_view SpecString(const api::Object& lease, const char* pointer) {
  const rapidjson::Value* v = lease.Find(pointer);
  return v != nullptr && v->IsString()
             ? std::string_view(v->GetString(), v->GetStringLength())
             : std::string_view();
}

}  // namespace

ControlPlaneLeases::ControlPlaneLeases(Registry* registry, const Clock* clock,
                                       ControlPlaneLeasesOptions options)
    : registry_(registry),
      clock_(clock),
      options_(std::move(options)),
      leader_holder_(Cat(options_.host, "_", NewUid())),
      identity_name_(IdentityName(options_.host)),
      identity_holder_(Cat(identity_name_, "_", NewUid())) {}

bool ControlPlaneLeases::Wants(const StoredEvent& event) const {
  if (event.collection == "/nodes") return true;
  if (event.collection != kLeases || event.object == nullptr) return false;
  const std::string_view ns = event.object->namespace_();
  return ns == kNodeLeaseNamespace || ns == kSystemNamespace;
}

absl::Time ControlPlaneLeases::Sync() {
  ResourceRegistry* resources = registry_->resources();
  ResourceInfoPtr leases =
      resources->Lookup("coordination.k8s.io", "v1", "leases");
  ResourceInfoPtr nodes = resources->Lookup("", "v1", "nodes");
  if (leases == nullptr) return absl::InfiniteFuture();
  const absl::Time now = clock_->Now();
  absl::Time next = absl::InfiniteFuture();
  std::map<std::string, absl::Time> kept;
  auto keep = [&](const std::string& ns, const std::string& name,
                  const std::string& holder, int duration,
                  absl::Duration interval, const std::string& labels,
                  const std::string& owner, bool leader) {
    next = std::min(next, Keep(*leases, ns, name, holder, duration, interval,
                               labels, owner, leader, now));
    const std::string key = Cat(ns, "/", name);
    kept[key] = renewed_[key];
  };
  if (nodes != nullptr) {
    for (const api::ObjectPtr& node :
         registry_->storage()->Snapshot(nodes->StorageKey())) {
      if (node->being_deleted()) continue;
      const std::string name(node->name());
      keep(kNodeLeaseNamespace, name, name, 40, kNodeRenewInterval, "",
           Cat(R"([{"apiVersion":"v1","kind":"Node","name":")", name,
               R"(","uid":")", node->uid(), R"("}])"),
           false);
    }
  }
  for (const char* component : {"kube-controller-manager", "kube-scheduler"}) {
    keep(kSystemNamespace, component, leader_holder_, 15, kLeaderRenewInterval,
         "", "", true);
  }
  keep(kSystemNamespace, identity_name_, identity_holder_, 3600,
       kNodeRenewInterval,
       Cat(R"({"apiserver.kubernetes.io/identity":"kube-apiserver",)"
           R"("kubernetes.io/hostname":")",
           options_.host, R"("})"),
       "", false);
  // Forget the Leases of Nodes that are gone.
  renewed_ = std::move(kept);
  return next;
}

absl::Time ControlPlaneLeases::Keep(
    const ResourceInfo& leases, const std::string& ns, const std::string& name,
    const std::string& holder, int duration_seconds, absl::Duration interval,
    const std::string& labels_json, const std::string& owner_json, bool leader,
    absl::Time now) {
  const std::string key = Cat(ns, "/", name);
  api::ObjectPtr live =
      registry_->storage()->Get(leases.StorageKey(), ns, name);
  auto it = renewed_.find(key);
  const bool as_it_should_be =
      live != nullptr && !live->being_deleted() &&
      SpecString(*live, "/spec/holderIdentity") == holder &&
      (owner_json.empty() ||
       live->Find("/metadata/ownerReferences") != nullptr);
  if (as_it_should_be && it != renewed_.end() && now < it->second + interval) {
    return it->second + interval;
  }
  if (live != nullptr && live->being_deleted()) return now + interval;
  const std::string time = api::FormatRfc3339Micro(now);
  absl::Status s;
  if (live == nullptr) {
    std::string json =
        Cat(R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease",)"
            R"("metadata":{"name":")",
            name, R"(","namespace":")", ns, R"(")");
    if (!labels_json.empty()) CatAppend(&json, R"(,"labels":)", labels_json);
    if (!owner_json.empty()) {
      CatAppend(&json, R"(,"ownerReferences":)", owner_json);
    }
    CatAppend(&json, R"(},"spec":{"holderIdentity":")", holder,
              R"(","leaseDurationSeconds":)", duration_seconds,
              R"(,"renewTime":")", time, R"(")");
    if (leader) {
      CatAppend(&json, R"(,"acquireTime":")", time,
                R"(","leaseTransitions":0)");
    }
    json += "}}";
    absl::StatusOr<api::ObjectBuilder> b = api::ObjectBuilder::FromJson(json);
    if (!b.ok()) {
      LOG(ERROR) << "control-plane leases: bad lease " << key << ": "
                 << b.status();
      return absl::InfiniteFuture();
    }
    s = registry_->Create(leases, ns, *std::move(b)).status();
    if (api::IsAlreadyExists(s)) s = absl::OkStatus();
  } else {
    api::ObjectBuilder b = live->ToBuilder();
    if (SpecString(*live, "/spec/holderIdentity") != holder) {
      (void)b.SetString("/spec/holderIdentity", holder);
      if (leader) {
        (void)b.SetString("/spec/acquireTime", time);
        const rapidjson::Value* t = live->Find("/spec/leaseTransitions");
        (void)b.SetInt("/spec/leaseTransitions",
                       (t != nullptr && t->IsInt64() ? t->GetInt64() : 0) + 1);
      }
    }
    (void)b.SetInt("/spec/leaseDurationSeconds", duration_seconds);
    (void)b.SetString("/spec/renewTime", time);
    if (!owner_json.empty() &&
        live->Find("/metadata/ownerReferences") == nullptr) {
      (void)b.SetJson("/metadata/ownerReferences", owner_json);
    }
    s = registry_->Update(leases, ns, name, std::move(b)).status();
  }
  if (!s.ok()) {
    if (!IsRaceError(s)) {
      LOG_EVERY_N(WARNING, 20)
          << "control-plane leases: renewing " << key << " failed: " << s;
    }
    return now + absl::Seconds(1);
  }
  renewed_[key] = now;
  return now + interval;
}

}  // namespace apiserver
}  // namespace kcr
