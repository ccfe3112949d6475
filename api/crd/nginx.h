// Nginx (example.org/v1, plural nginxes, short name ngx): a request for an
// nginx Deployment. Mirrors manifests/crds/nginx.yaml.
//
// Fields the CRD does not declare are dropped by FromJson (in spec and in
// status), as the API server prunes them; metadata is kept whole.
#ifndef KCR_API_CRD_NGINX_H_
#define KCR_API_CRD_NGINX_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/crd/crd_common.h"
#include "api/object.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {
namespace crd {

struct Nginx {
  static constexpr char kGroup[] = "example.org";
  static constexpr char kVersion[] = "v1";
  static constexpr char kApiVersion[] = "example.org/v1";
  static constexpr char kKind[] = "Nginx";
  static constexpr char kPlural[] = "nginxes";

  static constexpr int64_t kDefaultReplicas = 1;
  static constexpr char kDefaultImage[] = "nginx:1.7.9";
  static constexpr int64_t kDefaultPort = 80;

  struct Spec {
    std::optional<int64_t> replicas;   // >= 0, default 1
    std::optional<std::string> image;  // non-empty, default nginx:1.7.9
    std::optional<int64_t> port;       // 1..65535, default 80
    friend bool operator==(const Spec& a, const Spec& b) {
      return a.replicas == b.replicas && a.image == b.image && a.port == b.port;
    }
  };
  struct Status {
    std::optional<int64_t> ready_replicas;
    std::optional<int64_t> observed_generation;
    std::vector<Condition> conditions;
    friend bool operator==(const Status& a, const Status& b) {
      return a.ready_replicas == b.ready_replicas &&
             a.observed_generation == b.observed_generation &&
             a.conditions == b.conditions;
    }
  };

  RawJson metadata;
  Spec spec;
  std::optional<Status> status;

  // Reads an Nginx object. apiVersion and kind, when present, must be this
  // type's; a field of the wrong JSON type is InvalidArgument naming it
  // ("spec.replicas: must be an integer, got string"). Values are not
  // range-checked here: see Validate.
  static absl::StatusOr<Nginx> FromJson(const rapidjson::Value& json);
  // FromJson of a cached object's JSON.
  static absl::StatusOr<Nginx> FromObject(const Object& object) {
    return FromJson(object.json());
  }

  // Fills absent spec fields with the CRD's defaults.
  void ApplyDefaults();

  // Every violation of the CRD's rules, in kube-apiserver's wording
  // ("spec.replicas: Invalid value: -1: spec.replicas in body should be
  // greater than or equal to 0"). Empty when valid.
  std::vector<std::string> Validate() const;

  // The object as JSON, with apiVersion and kind. Absent optional fields
  // stay absent, so FromJson(ToJson()) == *this.
  rapidjson::Document ToJson() const;

  std::string name() const { return metadata.StringMember("name"); }
  std::string namespace_() const { return metadata.StringMember("namespace"); }

  friend bool operator==(const Nginx& a, const Nginx& b) {
    return a.metadata == b.metadata && a.spec == b.spec && a.status == b.status;
  }
};

}  // namespace crd
}  // namespace api
}  // namespace kcr

#endif  // KCR_API_CRD_NGINX_H_
