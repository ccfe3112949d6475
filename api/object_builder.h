// ObjectBuilder: the mutable counterpart of Object (api/object.h).
#ifndef KCR_API_OBJECT_BUILDER_H_
#define KCR_API_OBJECT_BUILDER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/object.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {

// A mutable deep copy of an object, for controllers to edit and send.
// Owns a rapidjson::Document. Not thread-safe; move-only.
//
// Setters that take a JSON pointer create missing intermediate objects
// ("/spec/template/metadata/labels/app" on {} builds every level) and fail
// with InvalidArgument when a step is not an object or array, or an array
// index is out of range ("-" appends, as in RFC 6902).
class ObjectBuilder {
 public:
  // {"metadata":{}}.
  ObjectBuilder();
  // {"apiVersion":..., "kind":..., "metadata":{}}.
  ObjectBuilder(std::string_view api_version, std::string_view kind);
  // A deep copy of `object`.
  explicit ObjectBuilder(const Object& object);
  // Parses any JSON object (no metadata checks until Build()).
  static absl::StatusOr<ObjectBuilder> FromJson(std::string_view json);
  // A deep copy of `object` whose top-level member `key` is a deep copy of
  // `replacement` instead: in the same place, last when `object` has no
  // such member, left out when `replacement` is null. One copy of each
  // value, where a copy of `object` followed by Set would copy the member
  // twice (as a status write replaces the stored status). InvalidArgument
  // when `replacement` nests too deep, as Set.
  static absl::StatusOr<ObjectBuilder> ReplacingMember(
      const Object& object, std::string_view key,
      const rapidjson::Value* replacement);

  ObjectBuilder(ObjectBuilder&&) = default;
  ObjectBuilder& operator=(ObjectBuilder&&) = default;
  ~ObjectBuilder();

  ObjectBuilder& SetApiVersion(std::string_view v);
  ObjectBuilder& SetKind(std::string_view v);
  ObjectBuilder& SetName(std::string_view v);
  ObjectBuilder& SetGenerateName(std::string_view v);
  ObjectBuilder& SetNamespace(std::string_view v);
  ObjectBuilder& SetUid(std::string_view v);
  ObjectBuilder& SetResourceVersion(std::string_view v);
  ObjectBuilder& SetGeneration(int64_t v);

  ObjectBuilder& SetLabel(std::string_view key, std::string_view value);
  ObjectBuilder& RemoveLabel(std::string_view key);
  // Replaces all labels.
  ObjectBuilder& SetLabels(const std::map<std::string, std::string>& labels);
  ObjectBuilder& SetAnnotation(std::string_view key, std::string_view value);
  ObjectBuilder& RemoveAnnotation(std::string_view key);
  ObjectBuilder& SetAnnotations(
      const std::map<std::string, std::string>& annotations);

  // Adds `finalizer` unless present (order kept).
  ObjectBuilder& AddFinalizer(std::string_view finalizer);
  ObjectBuilder& RemoveFinalizer(std::string_view finalizer);
  ObjectBuilder& SetFinalizers(const std::vector<std::string>& finalizers);

  // Replaces the owner reference with the same uid, or appends.
  ObjectBuilder& AddOwnerReference(const OwnerReferenceView& ref);
  ObjectBuilder& RemoveOwnerReference(std::string_view uid);
  ObjectBuilder& SetOwnerReferences(
      const std::vector<OwnerReferenceView>& refs);

  // Sets the value at `json_pointer` to a deep copy of `value`.
  absl::Status Set(std::string_view json_pointer,
                   const rapidjson::Value& value);
  absl::Status SetString(std::string_view json_pointer, std::string_view v);
  absl::Status SetInt(std::string_view json_pointer, int64_t v);
  absl::Status SetBool(std::string_view json_pointer, bool v);
  absl::Status SetDouble(std::string_view json_pointer, double v);
  // Parses `json` (any JSON value) and sets it.
  absl::Status SetJson(std::string_view json_pointer, std::string_view json);
  // Removes the value at `json_pointer`; false when it was absent.
  bool Remove(std::string_view json_pointer);

  // Read access while building.
  const rapidjson::Value* Find(std::string_view json_pointer) const;
  // Direct access for edits the setters do not cover. Values added must be
  // allocated with allocator().
  rapidjson::Value& json() { return *doc_; }
  const rapidjson::Value& json() const { return *doc_; }
  rapidjson::MemoryPoolAllocator<>& allocator() { return *pool_; }

  // Compact JSON text, e.g. a request body.
  std::string ToJson() const;
  // An immutable Object (validated as Object::Parse does). The builder is
  // unchanged and can be built again.
  absl::StatusOr<ObjectPtr> Build(const ParseOptions& options = {}) const;

 private:
  rapidjson::Value& Metadata();
  // The object member `key` of `parent` (created as {} when absent or not
  // an object).
  rapidjson::Value& ObjectMember(rapidjson::Value& parent,
                                 std::string_view key);
  rapidjson::Value* Resolve(std::string_view json_pointer, bool create,
                            absl::Status* status);
  absl::Status SetValue(std::string_view json_pointer,
                        rapidjson::Value&& value);

  std::unique_ptr<rapidjson::MemoryPoolAllocator<>> pool_;
  std::unique_ptr<rapidjson::Document> doc_;
};

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_OBJECT_BUILDER_H_
