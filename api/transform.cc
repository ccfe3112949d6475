#include "api/transform.h"

#include <utility>

namespace kcr {
namespace api {
namespace {

absl::StatusOr<ObjectPtr> RunTransform(const TransformFunc& transform,
                                       ObjectPtr object) {
  if (!transform) return object;
  absl::StatusOr<ObjectPtr> out = transform(std::move(object));
  if (out.ok() && *out == nullptr) {
    return absl::InternalError("transform returned no object");
  }
  return out;
}

}  // namespace

TransformFunc StripManagedFields() {
  return [](ObjectPtr object) -> absl::StatusOr<ObjectPtr> {
    if (object == nullptr) return absl::InvalidArgumentError("null object");
    if (!object->metadata().HasMember("managedFields")) return object;
    return Object::FromValue(object->json(), {.strip_managed_fields = true});
  };
}

absl::StatusOr<ObjectPtr> ObjectDecoder::Decode(std::string_view json) const {
  absl::StatusOr<ObjectPtr> object = Object::Parse(
      json, {.strip_managed_fields = options_.strip_managed_fields_at_parse});
  if (!object.ok()) return object.status();
  return RunTransform(options_.transform, *std::move(object));
}

absl::StatusOr<ObjectPtr> ObjectDecoder::Apply(ObjectPtr object) const {
  if (object == nullptr) return absl::InvalidArgumentError("null object");
  if (options_.strip_managed_fields_at_parse) {
    absl::StatusOr<ObjectPtr> stripped = StripManagedFields()(object);
    if (!stripped.ok()) return stripped.status();
    object = *std::move(stripped);
  }
  return RunTransform(options_.transform, std::move(object));
}

}  // namespace api
}  // namespace kcr
