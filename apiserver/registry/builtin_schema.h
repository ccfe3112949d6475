// The Go types of the built-in kinds, as far as kube-apiserver's decoder
// sees them: kube-apiserver decodes a request body into the kind's Go
// struct (k8s.io/api) before anything else, so a value of the wrong JSON
// type is a 400 BadRequest with Go's decoder message ("json: cannot
// unmarshal number into Go struct field ConfigMap.data of type string"), a
// Secret's data value that is not base64 is one too ("illegal base64 data
// at input byte 3"), and a member the struct does not have is an unknown
// field: a 400 under fieldValidation=Strict, a Warning under Warn, and in
// every case dropped, never stored.
//
// The types are every model of Kubernetes 1.33's OpenAPI document, with
// every member of every struct and its description, generated at build
// time from the description vendored in third_party/kubernetes-api
// (builtin_types.h): every kind of every resource 1.33 serves has its type
// here, whether or not this server serves it yet.
//
// Tables are built once and immutable; every function is thread-safe.
#ifndef KCR_APISERVER_REGISTRY_BUILTIN_SCHEMA_H_
#define KCR_APISERVER_REGISTRY_BUILTIN_SCHEMA_H_

#include <string>
#include <string_view>
#include <vector>

#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

struct GoType;

// A member of a Go struct.
struct GoField {
  // The JSON name.
  std::string name;
  const GoType* type = nullptr;
  // Required in the OpenAPI schema (the Go field has no omitempty).
  bool required = false;
  // kube's description of the field; never null.
  const char* description = "";
};

// One Go type a JSON value decodes into.
struct GoType {
  enum class Kind {
    kString,
    kBool,
    kInt32,
    kInt64,
    kFloat64,
    // []byte: a base64 string.
    kBytes,
    // resource.Quantity: a string or a number in quantity form.
    kQuantity,
    // intstr.IntOrString: a string or an int32.
    kIntOrString,
    // metav1.Time and metav1.MicroTime: a string (the format is the
    // strategy's: time_fields_strategy.h).
    kTime,
    // runtime.RawExtension, apiextensions JSON: any value.
    kAny,
    kStruct,
    kMap,
    kSlice,
  };
  Kind kind = Kind::kAny;
  // reflect.Type.String(): "string", "int32", "v1.PodSpec",
  // "map[string]string", "[]v1.Container".
  std::string name;
  // Structs: the members in kube's order.
  std::vector<GoField> fields;
  // Structs: the kube-openapi definition name
  // ("io.k8s.api.core.v1.PodSpec") and kube's description; never null.
  const char* openapi_name = "";
  const char* description = "";
  // Maps and slices: the element type.
  const GoType* elem = nullptr;

  const GoType* Field(std::string_view json_name) const;
};

// A resource of Kubernetes 1.33 with the Go type of its kind.
struct BuiltinResource {
  std::string group;  // "" for core
  std::string version;
  std::string plural;
  std::string kind;
  bool namespaced = false;
  const GoType* type = nullptr;
};

// Every resource of Kubernetes 1.33 (subresources aside), each version
// of each group, sorted by group (core first), version and plural.
const std::vector<BuiltinResource>& BuiltinResources();

// The Go type of a built-in kind of `group` ("" for core) and `version`,
// or nullptr.
const GoType* BuiltinKindType(std::string_view group, std::string_view version,
                              std::string_view kind);

// The same for the version kube prefers when a group has the kind in
// several (the newest GA one, else the newest beta, else alpha).
const GoType* BuiltinKindType(std::string_view group, std::string_view kind);

// The Go struct of a kube-openapi definition name, or nullptr.
const GoType* BuiltinDefinition(std::string_view openapi_name);

// What decoding a JSON value into a type finds.
struct DecodeReport {
  // The first decode error as Go's decoder words it, or empty.
  std::string error;
  // The members the types do not have, as kube's strict decoder names them:
  // dotted, with [i] for list items ("spec.template.spec.containers[0].x").
  std::vector<std::string> unknown_fields;
};

// Decodes `value` into `type` as encoding/json (sigs.k8s.io/json) would.
// With `patch`, members starting with '$' (strategic merge patch
// directives) are neither unknown nor checked, and nulls are deletions.
DecodeReport CheckDecode(const GoType& type, const rapidjson::Value& value,
                         bool patch = false);

// Removes every member `type` does not have: what decoding into the Go
// struct and encoding back leaves.
void DropUnknownFields(const GoType& type, rapidjson::Value* value);

// Go's base64.StdEncoding.DecodeString: the decoded length, or the offset
// of the first bad byte in *bad_offset (and -1).
int64_t DecodeBase64Length(std::string_view text, int64_t* bad_offset);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_BUILTIN_SCHEMA_H_
