#include "api/types/view.h"

#include "absl/strings/str_cat.h"

namespace kcr {
namespace api {

absl::Status TypedView::Check(const ObjectPtr& object, std::string_view kind) {
  if (object == nullptr) return absl::InvalidArgumentError("null object");
  if (!object->kind().empty() && object->kind() != kind) {
    const std::string_view got = object->kind();
    return absl::InvalidArgumentError(
        absl::StrCat("kind is ", absl::string_view(got.data(), got.size()),
                     ", not ", absl::string_view(kind.data(), kind.size())));
  }
  return absl::OkStatus();
}

}  // namespace api
}  // namespace kcr
