#include "runtime/cache/index.h"

#include <optional>
#include <utility>

namespace kcr::cache {

IndexFunc MetaNamespaceIndexFunc() {
  return [](const api::Object& object) {
    return std::vector<std::string>{std::string(object.namespace_())};
  };
}

IndexFunc LabelIndexFunc(std::string label_key) {
  return [label_key = std::move(label_key)](const api::Object& object) {
    std::vector<std::string> values;
    if (std::optional<std::string_view> v = object.Label(label_key)) {
      values.emplace_back(*v);
    }
    return values;
  };
}

IndexFunc ControllerOwnerUidIndexFunc() {
  return [](const api::Object& object) {
    std::vector<std::string> values;
    if (std::optional<api::OwnerReferenceView> owner =
            object.controller_reference();
        owner && !owner->uid.empty()) {
      values.emplace_back(owner->uid);
    }
    return values;
  };
}

}  // namespace kcr::cache
