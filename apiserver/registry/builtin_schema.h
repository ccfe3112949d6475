// The Go types of the built-in kinds the local API server serves, as far as
// kube-apiserver's decoder sees them: kube-apiserver decodes a request body
// into the kind's Go struct (k8s.io/api) before anything else, so a value
// of the wrong JSON type is a 400 BadRequest with Go's decoder message
// ("json: cannot unmarshal number into Go struct field ConfigMap.data of
// type string"), a Secret's data value that is not base64 is one too
// ("illegal base64 data at input byte 3"), and a member the struct does not
// have is an unknown field: a 400 under fieldValidation=Strict, a Warning
// under Warn, and in every case dropped, never stored.
//
// The tables describe ConfigMap, Secret, Pod, Service, Namespace,
// ServiceAccount, Event (core/v1), Deployment, ReplicaSet (apps/v1), Lease
// (coordination.k8s.io/v1), Role, ClusterRole, RoleBinding and
// ClusterRoleBinding (rbac.authorization.k8s.io/v1). Every member of their
// object meta, of the specs and of a container is listed; the nested structs
// that controllers rarely write (probes, affinity, security contexts, volume
// sources, every status) are checked to be objects, and their members are taken
// as they come (see docs/local-apiserver.md).
//
// Tables are built once and immutable; every function is thread-safe.
#ifndef KCR_APISERVER_REGISTRY_BUILTIN_SCHEMA_H_
#define KCR_APISERVER_REGISTRY_BUILTIN_SCHEMA_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

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
  // Structs: the unqualified name ("PodSpec") and the members by JSON name.
  // An open struct's members are not listed: any member is kept.
  bool open = false;
  std::vector<std::pair<std::string, const GoType*>> fields;
  // Maps and slices: the element type.
  const GoType* elem = nullptr;

  const GoType* Field(std::string_view json_name) const;
};

// The Go type of a served built-in kind (`group` "" for core), or nullptr.
const GoType* BuiltinKindType(std::string_view group, std::string_view kind);

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
