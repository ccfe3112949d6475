#include "apiserver/kube_controllers/serviceaccounts_controller.h"

#include <utility>

#include "api/errors/errors.h"
#include "api/object_builder.h"
#include "apiserver/kube_controllers/stored_objects.h"
#include "base/str_cat.h"
#include "glog/logging.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace {

constexpr char kRootCaDescription[] =
    "Contains a CA bundle that can be used to verify the kube-apiserver when "
    "using internal endpoints such as the internal service IP or "
    "kubernetes.default.svc. No other usage is guaranteed across "
    "distributions of Kubernetes clusters.";

// Namespaces that are not being deleted.
std::vector<api::ObjectPtr> ActiveNamespaces(Registry* registry) {
  std::vector<api::ObjectPtr> out;
  ResourceInfoPtr namespaces =
      registry->resources()->Lookup("", "v1", "namespaces");
  if (namespaces == nullptr) return out;
  for (api::ObjectPtr& ns :
       registry->storage()->Snapshot(namespaces->StorageKey())) {
    if (!ns->being_deleted()) out.push_back(std::move(ns));
  }
  return out;
}

// Creates `json` in `ns`; what a namespace that started terminating or an
// object created meanwhile answers is expected.
void CreateQuietly(Registry* registry, const ResourceInfo& r,
                   std::string_view ns, const std::string& json,
                   const char* who) {
  absl::StatusOr<api::ObjectBuilder> b = api::ObjectBuilder::FromJson(json);
  if (!b.ok()) {
    LOG(ERROR) << who << ": bad object: " << b.status();
    return;
  }
  absl::Status s = registry->Create(r, ns, *std::move(b)).status();
  if (!s.ok() && !api::IsAlreadyExists(s) && !api::IsForbidden(s) &&
      !api::IsNotFound(s)) {
    LOG(WARNING) << who << ": create failed namespace=" << ns << ": " << s;
  }
}

}  // namespace

absl::Time ServiceAccountsController::Sync() {
  ResourceInfoPtr accounts =
      registry_->resources()->Lookup("", "v1", "serviceaccounts");
  if (accounts == nullptr) return absl::InfiniteFuture();
  for (const api::ObjectPtr& ns : ActiveNamespaces(registry_)) {
    if (registry_->storage()->Get(accounts->StorageKey(), ns->name(),
                                  "default") != nullptr) {
      continue;
    }
    CreateQuietly(
        registry_, *accounts, ns->name(),
        R"({"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}})",
        "serviceaccount controller");
  }
  return absl::InfiniteFuture();
}

bool ServiceAccountsController::Wants(const StoredEvent& event) const {
  return event.collection == "/namespaces" ||
         (event.collection == "/serviceaccounts" &&
          event.type == EventType::kDeleted);
}

absl::Time RootCaCertPublisher::Sync() {
  ResourceInfoPtr configmaps =
      registry_->resources()->Lookup("", "v1", "configmaps");
  if (configmaps == nullptr) return absl::InfiniteFuture();
  for (const api::ObjectPtr& ns : ActiveNamespaces(registry_)) {
    api::ObjectPtr cm = registry_->storage()->Get(
        configmaps->StorageKey(), ns->name(), kRootCaConfigMapName);
    if (cm == nullptr) {
      api::ObjectBuilder b("v1", "ConfigMap");
      b.SetName(kRootCaConfigMapName);
      (void)b.SetString("/metadata/annotations/kubernetes.io~1description",
                        kRootCaDescription);
      (void)b.SetString("/data/ca.crt", ca_pem_);
      absl::Status s =
          registry_->Create(*configmaps, ns->name(), std::move(b)).status();
      if (!s.ok() && !api::IsAlreadyExists(s) && !api::IsForbidden(s) &&
          !api::IsNotFound(s)) {
        LOG(WARNING) << "root-ca-cert-publisher: create failed namespace="
                     << ns->name() << ": " << s;
      }
      continue;
    }
    const rapidjson::Value* data = cm->Find("/data");
    const bool current =
        data != nullptr && data->IsObject() && data->MemberCount() == 1 &&
        data->HasMember("ca.crt") &&
        data->FindMember("ca.crt")->value.IsString() &&
        std::string_view(data->FindMember("ca.crt")->value.GetString(),
                         data->FindMember("ca.crt")->value.GetStringLength()) ==
            ca_pem_;
    if (current || cm->being_deleted()) continue;
    api::ObjectBuilder b = cm->ToBuilder();
    (void)b.SetJson("/data", "{}");
    (void)b.SetString("/data/ca.crt", ca_pem_);
    b.Remove("/binaryData");
    absl::Status s =
        registry_->Update(*configmaps, ns->name(), cm->name(), std::move(b))
            .status();
    if (!s.ok() && !IsRaceError(s)) {
      LOG(WARNING) << "root-ca-cert-publisher: update failed namespace="
                   << ns->name() << ": " << s;
    }
  }
  return absl::InfiniteFuture();
}

bool RootCaCertPublisher::Wants(const StoredEvent& event) const {
  if (event.collection == "/namespaces") return true;
  return event.collection == "/configmaps" && event.object != nullptr &&
         event.object->name() == kRootCaConfigMapName;
}

}  // namespace apiserver
}  // namespace kcr
