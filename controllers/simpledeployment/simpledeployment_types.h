// SimpleDeployment (example.org/v1, plural simpledeployments, short names
// simdep and sd): the kopf tutorial's first operator, one busybox pod that
// sleeps spec.sleepytime seconds. A typed view of the JSON that
// manifests/crds/simpledeployment.yaml describes; that manifest's schema,
// compiled into the binary, is the one statement of the rules, which
// Validate (from CustomResource) applies.
//
// Unknown spec fields are dropped by FromJson, as the API server prunes
// them; metadata and status are kept whole (the status holds the
// handlers' results under their ids, which the schema preserves as
// written).
#ifndef KCR_CONTROLLERS_SIMPLEDEPLOYMENT_SIMPLEDEPLOYMENT_TYPES_H_
#define KCR_CONTROLLERS_SIMPLEDEPLOYMENT_SIMPLEDEPLOYMENT_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/crd/crd_common.h"
#include "api/crd/crd_manifests.h"
#include "api/crd/custom_resource.h"
#include "rapidjson/document.h"

namespace kcr::simpledeployment {

struct SimpleDeployment : api::crd::CustomResource<SimpleDeployment> {
  static constexpr char kGroup[] = "example.org";
  static constexpr char kVersion[] = "v1";
  static constexpr char kApiVersion[] = "example.org/v1";
  static constexpr char kKind[] = "SimpleDeployment";
  static constexpr char kPlural[] = "simpledeployments";
  static constexpr bool kNamespaced = true;
  static constexpr const char* kCrdManifest =
      api::crd::kSimpleDeploymentCrdYaml;

  struct Spec {
    // Seconds, as a number or a string of digits ("120", as the tutorial
    // writes it); absent means 0.
    std::optional<api::crd::IntOrString> sleepytime;
    friend bool operator==(const Spec& a, const Spec& b) {
      return a.sleepytime == b.sleepytime;
    }
  };

  api::crd::RawJson metadata;
  bool has_spec = false;
  Spec spec;
  // The whole status (empty when absent).
  api::crd::RawJson status;

  // Reads a SimpleDeployment; a field of the wrong JSON type is
  // InvalidArgument naming it.
  static absl::StatusOr<SimpleDeployment> FromJson(
      const rapidjson::Value& json);

  // The object as JSON: FromJson(ToJson()) == *this.
  rapidjson::Document ToJson() const;

  // spec.sleepytime in seconds (0 when absent); InvalidArgument, in the
  // schema's words, when the schema would reject it.
  absl::StatusOr<int64_t> SleepytimeSeconds() const;

  // The pods' uids the create handler recorded (status.create_fn.children;
  // the sleepytime handler keeps them current), in order; empty when none.
  std::vector<std::string> Children() const;

  friend bool operator==(const SimpleDeployment& a, const SimpleDeployment& b) {
    return a.metadata == b.metadata && a.has_spec == b.has_spec &&
           a.spec == b.spec && a.status == b.status;
  }
};

// spec.sleepytime's value in seconds, as SleepytimeSeconds reads it: null
// (absent) is 0; a non-negative integer, or a string of one to nine digits,
// is that number; anything else is InvalidArgument. For field handlers,
// which see the field's old and new values alone.
absl::StatusOr<int64_t> ParseSleepytime(const rapidjson::Value* value);

}  // namespace kcr::simpledeployment

#endif  // KCR_CONTROLLERS_SIMPLEDEPLOYMENT_SIMPLEDEPLOYMENT_TYPES_H_
