#include "api/patch/patch_type.h"

#include <string>

#include "absl/strings/ascii.h"
#include "base/string_view.h"

namespace kcr {
namespace api {

std::string_view ContentType(PatchType type) {
  switch (type) {
    case PatchType::kJson:
      return "application/json-patch+json";
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
    case PatchType::kApply:
      return "application/apply-patch+yaml";
  }
  return "application/json";
}

std::optional<PatchType> PatchTypeFromContentType(
    std::string_view content_type) {
  std::string_view media = content_type.substr(0, content_type.find(';'));
  const std::string m =
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(ToAbsl(media)));
  for (PatchType type : {PatchType::kJson, PatchType::kMerge,
                         PatchType::kStrategicMerge, PatchType::kApply}) {
    if (m == ContentType(type)) return type;
  }
  if (m == "application/apply-patch+cbor") return PatchType::kApply;
  return std::nullopt;
}

}  // namespace api
}  // namespace kcr
