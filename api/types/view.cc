#include "api/types/view.h"

#include "absl/strings/str_cat.h"
#include "base/string_view.h"

namespace kcr {
namespace api {

absl::Status TypedView::Check(const ObjectPtr& object, std::string_view kind) {
  if (object == nullptr) return absl::InvalidArgumentError("null object");
  if (!object->kind().empty() && object->kind() != kind) {
    const std::string_view got = object->kind();
    return absl::InvalidArgumentError(
        absl::StrCat("kind is ", ToAbsl(got), ", not ", ToAbsl(kind)));
  }
  return absl::OkStatus();
}

}  // namespace api
}  // namespace kcr
