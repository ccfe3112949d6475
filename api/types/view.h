// The base of the typed views: holds the shared object a view reads and
// checks its kind. A view is as cheap to copy as a shared_ptr and reads
// the object in place; string_views it returns live as long as the view.
#ifndef KCR_API_TYPES_VIEW_H_
#define KCR_API_TYPES_VIEW_H_

#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/object.h"

namespace kcr {
namespace api {

class TypedView {
 public:
  const Object& object() const { return *object_; }
  const ObjectPtr& ptr() const { return object_; }

 protected:
  explicit TypedView(ObjectPtr object) : object_(std::move(object)) {}
  // OK when `object` is non-null and its kind is `kind` or empty (items of
  // a list response carry no kind).
  static absl::Status Check(const ObjectPtr& object, std::string_view kind);

  ObjectPtr object_;
};

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_TYPES_VIEW_H_
