// Pieces shared by the custom resource types (Nginx, CopyratorRule,
// LoadTest): an opaque deep-copied JSON value for metadata, int-or-string,
// status conditions, and the field readers and writers their FromJson and
// ToJson use. (Validation and defaulting are the CRD schema's: see
// crd_schema.h.)
#ifndef KCR_API_CRD_CRD_COMMON_H_
#define KCR_API_CRD_CRD_COMMON_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {
namespace crd {

// A JSON value held by deep copy: copying a RawJson copies the value, and
// equality is JSON equality (objects as unordered maps). Empty (no value)
// is distinct from JSON null.
class RawJson {
 public:
  RawJson() = default;
  explicit RawJson(const rapidjson::Value& value);
  RawJson(const RawJson& other);
  RawJson& operator=(const RawJson& other);
  RawJson(RawJson&&) = default;
  RawJson& operator=(RawJson&&) = default;

  bool empty() const { return doc_ == nullptr; }
  // The value; null when empty.
  const rapidjson::Value& value() const;
  // The string member `key` of an object value, or "" if absent or not a
  // string. For metadata.name and metadata.namespace.
  std::string StringMember(std::string_view key) const;

  friend bool operator==(const RawJson& a, const RawJson& b);
  friend bool operator!=(const RawJson& a, const RawJson& b) {
    return !(a == b);
  }

 private:
  std::unique_ptr<rapidjson::Document> doc_;
};

// A port or similar field that is either an integer or a name.
struct IntOrString {
  bool is_int = true;
  int64_t int_value = 0;
  std::string str_value;

  static IntOrString Int(int64_t v) { return {true, v, ""}; }
  static IntOrString String(std::string s) { return {false, 0, std::move(s)}; }

  friend bool operator==(const IntOrString& a, const IntOrString& b) {
    return a.is_int == b.is_int &&
           (a.is_int ? a.int_value == b.int_value : a.str_value == b.str_value);
  }
  friend bool operator!=(const IntOrString& a, const IntOrString& b) {
    return !(a == b);
  }
};

// One entry of status.conditions (metav1.Condition's fields). Optional
// fields that are absent stay absent through a JSON round trip.
// `type` and `status` are required: empty is written as absent.
struct Condition {
  std::string type;
  std::string status;  // "True", "False" or "Unknown"
  std::optional<std::string> reason;
  std::optional<std::string> message;
  std::optional<std::string> last_transition_time;  // RFC 3339
  std::optional<int64_t> observed_generation;

  friend bool operator==(const Condition& a, const Condition& b) {
    return a.type == b.type && a.status == b.status && a.reason == b.reason &&
           a.message == b.message &&
           a.last_transition_time == b.last_transition_time &&
           a.observed_generation == b.observed_generation;
  }
};

namespace internal {

using Allocator = rapidjson::Document::AllocatorType;

// "parent.key", or "key" at the root.
std::string Child(std::string_view parent, std::string_view key);

// Readers of one optional member of `obj` (which must be an object). A
// missing member or JSON null leaves *out unset; a value of the wrong type
// is InvalidArgument "<path>: must be <type>, got <actual>".
absl::Status ReadString(const rapidjson::Value& obj, const char* key,
                        std::string_view parent,
                        std::optional<std::string>* out);
absl::Status ReadInt(const rapidjson::Value& obj, const char* key,
                     std::string_view parent, std::optional<int64_t>* out);
absl::Status ReadDouble(const rapidjson::Value& obj, const char* key,
                        std::string_view parent, std::optional<double>* out);
absl::Status ReadIntOrString(const rapidjson::Value& obj, const char* key,
                             std::string_view parent,
                             std::optional<IntOrString>* out);
absl::Status ReadStringList(const rapidjson::Value& obj, const char* key,
                            std::string_view parent,
                            std::vector<std::string>* out);
absl::Status ReadConditions(const rapidjson::Value& obj, const char* key,
                            std::string_view parent,
                            std::vector<Condition>* out);
// The member `key` if present and not null; InvalidArgument if it is not an
// object. Returns nullptr when absent.
absl::Status ReadObject(const rapidjson::Value& obj, const char* key,
                        std::string_view parent, const rapidjson::Value** out);
// Checks apiVersion and kind when present; InvalidArgument on a mismatch.
// Copies metadata (which must be an object when present).
absl::Status ReadTypeAndMetadata(const rapidjson::Value& obj,
                                 std::string_view api_version,
                                 std::string_view kind, RawJson* metadata);
// InvalidArgument unless `v` is an object.
absl::Status RequireObject(const rapidjson::Value& v, std::string_view path);

// status.observedGeneration and status.conditions, which every kind's
// status has, from the status object `status`.
absl::Status ReadStatusCommon(const rapidjson::Value& status,
                              std::optional<int64_t>* observed_generation,
                              std::vector<Condition>* conditions);

// A document with apiVersion, kind and (unless empty) metadata: the start
// of every kind's ToJson.
rapidjson::Document NewDocument(std::string_view api_version,
                                std::string_view kind, const RawJson& metadata);

// Writers: set `key` on the object `obj` when the value is present.
void WriteString(rapidjson::Value* obj, const char* key,
                 const std::optional<std::string>& v, Allocator& a);
void WriteInt(rapidjson::Value* obj, const char* key,
              const std::optional<int64_t>& v, Allocator& a);
void WriteDouble(rapidjson::Value* obj, const char* key,
                 const std::optional<double>& v, Allocator& a);
void WriteIntOrString(rapidjson::Value* obj, const char* key,
                      const std::optional<IntOrString>& v, Allocator& a);
// Empty lists are omitted.
void WriteStringList(rapidjson::Value* obj, const char* key,
                     const std::vector<std::string>& v, Allocator& a);
void WriteConditions(rapidjson::Value* obj, const char* key,
                     const std::vector<Condition>& v, Allocator& a);
// The counterpart of ReadStatusCommon.
void WriteStatusCommon(rapidjson::Value* status,
                       const std::optional<int64_t>& observed_generation,
                       const std::vector<Condition>& conditions, Allocator& a);
void WriteRaw(rapidjson::Value* obj, const char* key, const RawJson& v,
              Allocator& a);
void WriteMember(rapidjson::Value* obj, const char* key,
                 rapidjson::Value* value, Allocator& a);

// A JSON string literal of `s`, as the messages quote values.
std::string Quote(std::string_view s);

}  // namespace internal
}  // namespace crd
}  // namespace api
}  // namespace kcr

#endif  // KCR_API_CRD_CRD_COMMON_H_
