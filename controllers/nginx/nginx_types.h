// Nginx (example.org/v1, plural nginxes, short name ngx): a request for an
// nginx Deployment. A typed view of the JSON that manifests/crds/nginx.yaml
// describes; that manifest's schema, compiled into the binary, is the one
// statement of the rules and defaults, which Validate and ApplyDefaults
// (from CustomResource) apply.
//
// Fields the CRD does not declare are dropped by FromJson (in spec and in
// status), as the API server prunes them; metadata is kept whole.
#ifndef KCR_CONTROLLERS_NGINX_NGINX_TYPES_H_
#define KCR_CONTROLLERS_NGINX_NGINX_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/crd/crd_common.h"
#include "api/crd/crd_manifests.h"
#include "api/crd/custom_resource.h"
#include "api/object.h"
#include "rapidjson/document.h"

namespace kcr::nginx {

struct Nginx : api::crd::CustomResource<Nginx> {
  static constexpr char kGroup[] = "example.org";
  static constexpr char kVersion[] = "v1";
  static constexpr char kApiVersion[] = "example.org/v1";
  static constexpr char kKind[] = "Nginx";
  static constexpr char kPlural[] = "nginxes";
  static constexpr bool kNamespaced = true;
  static constexpr const char* kCrdManifest = api::crd::kNginxCrdYaml;

  struct Spec {
    std::optional<int64_t> replicas;
    std::optional<std::string> image;
    std::optional<int64_t> port;
    friend bool operator==(const Spec& a, const Spec& b) {
      return a.replicas == b.replicas && a.image == b.image && a.port == b.port;
    }
  };
  struct Status {
    std::optional<int64_t> ready_replicas;
    std::optional<int64_t> observed_generation;
    std::vector<api::crd::Condition> conditions;
    friend bool operator==(const Status& a, const Status& b) {
      return a.ready_replicas == b.ready_replicas &&
             a.observed_generation == b.observed_generation &&
             a.conditions == b.conditions;
    }
  };

  api::crd::RawJson metadata;
  Spec spec;
  std::optional<Status> status;

  // Reads an Nginx object. apiVersion and kind, when present, must be this
  // type's; a field of the wrong JSON type is InvalidArgument naming it
  // ("spec.replicas: must be an integer, got string"). Values are not
  // range-checked here: see Validate.
  static absl::StatusOr<Nginx> FromJson(const rapidjson::Value& json);

  // The object as JSON, with apiVersion and kind. Absent optional fields
  // stay absent, so FromJson(ToJson()) == *this.
  rapidjson::Document ToJson() const;

  friend bool operator==(const Nginx& a, const Nginx& b) {
    return a.metadata == b.metadata && a.spec == b.spec && a.status == b.status;
  }
};

}  // namespace kcr::nginx

#endif  // KCR_CONTROLLERS_NGINX_NGINX_TYPES_H_
