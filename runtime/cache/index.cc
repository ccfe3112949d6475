#include "runtime/cache/index.h"

#include <optional>
#include <utility>

namespace kcr::cache {

namespace index_internal {

std::vector<std::string> NamespaceIndex::operator()(
    const api::Object& object) const {
  return std::vector<std::string>{std::string(object.namespace_())};
}

std::vector<std::string> LabelIndex::operator()(
    const api::Object& object) const {
  std::vector<std::string> values;
  if (std::optional<std::string_view> v = object.Label(label_key)) {
    values.emplace_back(*v);
  }
  return values;
}

}  // namespace index_internal

bool IndexValuesUnchanged(const IndexFunc& func, const api::Object& a,
                          const api::Object& b) {
  if (func.target<index_internal::NamespaceIndex>() != nullptr) {
    return index_internal::NamespaceIndex::SameValues(a, b);
  }
  if (const auto* label = func.target<index_internal::LabelIndex>()) {
    return label->SameValues(a, b);
  }
  return false;
}

IndexFunc MetaNamespaceIndexFunc() { return index_internal::NamespaceIndex{}; }

IndexFunc LabelIndexFunc(std::string label_key) {
  return index_internal::LabelIndex{std::move(label_key)};
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
