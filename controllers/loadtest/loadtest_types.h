// LoadTest (example.org/v1, plural loadtests, short names lt and ld): run
// spec.replicas load pods against a Service and report the outcome. A
// typed view of the JSON that manifests/crds/loadtest.yaml describes; that
// manifest's schema, compiled into the binary, is the one statement of the
// rules and defaults, which Validate and ApplyDefaults (from
// CustomResource) apply.
//
// Unknown fields (in spec and in status, including status.result) are
// dropped by FromJson, as the API server prunes them; metadata is kept
// whole.
#ifndef KCR_CONTROLLERS_LOADTEST_LOADTEST_TYPES_H_
#define KCR_CONTROLLERS_LOADTEST_LOADTEST_TYPES_H_

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

namespace kcr::loadtest {

struct LoadTest : api::crd::CustomResource<LoadTest> {
  static constexpr char kGroup[] = "example.org";
  static constexpr char kVersion[] = "v1";
  static constexpr char kApiVersion[] = "example.org/v1";
  static constexpr char kKind[] = "LoadTest";
  static constexpr char kPlural[] = "loadtests";
  static constexpr bool kNamespaced = true;
  static constexpr const char* kCrdManifest = api::crd::kLoadTestCrdYaml;

  // status.state values.
  static constexpr char kPending[] = "pending";
  static constexpr char kExecuting[] = "executing";
  static constexpr char kFinished[] = "finished";
  static constexpr char kFailed[] = "failed";

  struct Test {
    std::optional<std::string> method;
    std::optional<std::string> service_name;
    std::optional<api::crd::IntOrString>
        service_port;  // a number or a port name
    std::optional<std::string> path;
    std::optional<int64_t> repeat;
    friend bool operator==(const Test& a, const Test& b) {
      return a.method == b.method && a.service_name == b.service_name &&
             a.service_port == b.service_port && a.path == b.path &&
             a.repeat == b.repeat;
    }
  };
  struct Spec {
    std::optional<int64_t> replicas;
    std::optional<Test> test;
    friend bool operator==(const Spec& a, const Spec& b) {
      return a.replicas == b.replicas && a.test == b.test;
    }
  };
  // Latency percentiles in milliseconds.
  struct Latency {
    std::optional<double> p50, p90, p99, max;
    friend bool operator==(const Latency& a, const Latency& b) {
      return a.p50 == b.p50 && a.p90 == b.p90 && a.p99 == b.p99 &&
             a.max == b.max;
    }
  };
  struct PodResult {
    std::string pod;  // required: empty is written as absent
    std::optional<int64_t> requests, failures;
    std::optional<Latency> latency_ms;
    friend bool operator==(const PodResult& a, const PodResult& b) {
      return a.pod == b.pod && a.requests == b.requests &&
             a.failures == b.failures && a.latency_ms == b.latency_ms;
    }
  };
  struct Result {
    std::optional<int64_t> requests, failures;
    std::optional<Latency> latency_ms;
    std::vector<PodResult> pods;
    friend bool operator==(const Result& a, const Result& b) {
      return a.requests == b.requests && a.failures == b.failures &&
             a.latency_ms == b.latency_ms && a.pods == b.pods;
    }
  };
  struct Status {
    std::optional<std::string> state;   // pending executing finished failed
    std::vector<std::string> children;  // load pod names
    std::optional<std::string> message;
    std::optional<Result> result;
    std::optional<int64_t> observed_generation;
    std::vector<api::crd::Condition> conditions;
    friend bool operator==(const Status& a, const Status& b) {
      return a.state == b.state && a.children == b.children &&
             a.message == b.message && a.result == b.result &&
             a.observed_generation == b.observed_generation &&
             a.conditions == b.conditions;
    }
  };

  api::crd::RawJson metadata;
  // Whether the object had a spec at all (it is required).
  bool has_spec = false;
  Spec spec;
  std::optional<Status> status;

  // Reads a LoadTest; a field of the wrong JSON type is InvalidArgument
  // naming it.
  static absl::StatusOr<LoadTest> FromJson(const rapidjson::Value& json);

  // The object as JSON: FromJson(ToJson()) == *this. Empty lists are
  // omitted.
  rapidjson::Document ToJson() const;

  friend bool operator==(const LoadTest& a, const LoadTest& b) {
    return a.metadata == b.metadata && a.has_spec == b.has_spec &&
           a.spec == b.spec && a.status == b.status;
  }
};

}  // namespace kcr::loadtest

#endif  // KCR_CONTROLLERS_LOADTEST_LOADTEST_TYPES_H_
