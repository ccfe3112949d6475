#include "apiserver/kube_controllers/kubernetes_service_controller.h"

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

constexpr char kName[] = "kubernetes";
constexpr char kNamespace[] = "default";

bool SameJson(const rapidjson::Value* a, const rapidjson::Value& b) {
  return a != nullptr && *a == b;
}

// Creates `desired` (a JSON object), or, when the stored object's values at
// `pointers` differ from desired's, writes them back.
void Ensure(Registry* registry, const ResourceInfo& r,
            const std::string& desired_json,
            std::initializer_list<const char*> pointers) {
  absl::StatusOr<api::ObjectBuilder> desired =
      api::ObjectBuilder::FromJson(desired_json);
  if (!desired.ok()) {
    LOG(ERROR) << "kubernetes service: bad object: " << desired.status();
    return;
  }
  api::ObjectPtr live =
      registry->storage()->Get(r.StorageKey(), kNamespace, kName);
  if (live == nullptr) {
    absl::Status s =
        registry->Create(r, kNamespace, *std::move(desired)).status();
    if (!s.ok() && !api::IsAlreadyExists(s)) {
      LOG(WARNING) << "kubernetes service: create failed resource="
                   << r.resource() << ": " << s;
    }
    return;
  }
  if (live->being_deleted()) return;
  api::ObjectBuilder b = live->ToBuilder();
  bool changed = false;
  for (const char* p : pointers) {
    const rapidjson::Value* want = desired->Find(p);
    if (want == nullptr || SameJson(live->Find(p), *want)) continue;
    (void)b.Set(p, *want);
    changed = true;
  }
  if (!changed) return;
  absl::Status s =
      registry->Update(r, kNamespace, kName, std::move(b)).status();
  if (!s.ok() && !IsRaceError(s)) {
    LOG(WARNING) << "kubernetes service: update failed resource="
                 << r.resource() << ": " << s;
  }
}

}  // namespace

absl::Time KubernetesServiceController::Sync() {
  EnsureService();
  EnsureEndpoints();
  EnsureEndpointSlice();
  return absl::InfiniteFuture();
}

bool KubernetesServiceController::Wants(const StoredEvent& event) const {
  if (event.collection == "/namespaces") return true;
  return event.object != nullptr && event.object->namespace_() == kNamespace &&
         (event.collection == "/services" || event.collection == "/endpoints" ||
          event.collection == "discovery.k8s.io/endpointslices");
}

void KubernetesServiceController::EnsureService() {
  ResourceInfoPtr services =
      registry_->resources()->Lookup("", "v1", "services");
  if (services == nullptr) return;
  Ensure(
      registry_, *services,
      Cat(R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"kubernetes",)",
          R"("labels":{"component":"apiserver","provider":"kubernetes"}},)",
          R"("spec":{"type":"ClusterIP","clusterIP":"10.96.0.1",)",
          R"("clusterIPs":["10.96.0.1"],"sessionAffinity":"None",)",
          R"("ports":[{"name":"https","port":443,"protocol":"TCP",)",
          R"("targetPort":)", options_.port, "}]}}"),
      {"/spec/ports", "/spec/type"});
}

void KubernetesServiceController::EnsureEndpoints() {
  ResourceInfoPtr endpoints =
      registry_->resources()->Lookup("", "v1", "endpoints");
  if (endpoints == nullptr) return;
  Ensure(
      registry_, *endpoints,
      Cat(R"({"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"kubernetes",)",
          R"("labels":{"endpointslice.kubernetes.io/skip-mirror":"true"}},)",
          R"("subsets":[{"addresses":[{"ip":")", options_.address,
          R"("}],"ports":[{"name":"https","port":)", options_.port,
          R"(,"protocol":"TCP"}]}]})"),
      {"/subsets"});
}

void KubernetesServiceController::EnsureEndpointSlice() {
  ResourceInfoPtr slices = registry_->resources()->Lookup(
      "discovery.k8s.io", "v1", "endpointslices");
  if (slices == nullptr) return;
  Ensure(registry_, *slices,
         Cat(R"({"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice",)",
             R"("metadata":{"name":"kubernetes","labels":{)",
             R"("kubernetes.io/service-name":"kubernetes"}},)",
             R"("addressType":"IPv4","endpoints":[{"addresses":[")",
             options_.address,
             R"("],"conditions":{"ready":true}}],"ports":[{"name":"https",)",
             R"("port":)", options_.port, R"(,"protocol":"TCP"}]})"),
         {"/endpoints", "/ports"});
}

}  // namespace apiserver
}  // namespace kcr
