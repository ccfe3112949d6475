#include "runtime/cache/store.h"

#include <string>

namespace kcr::cache {

absl::StatusOr<std::string> MetaNamespaceKey(const api::Object& object) {
  if (object.name().empty()) {
    return absl::InvalidArgumentError("object has no name (kind " +
                                      std::string(object.kind()) + ")");
  }
  return object.Key();
}

bool MetaNamespaceKeyIs(const api::Object& object, std::string_view key) {
  if (object.name().empty()) return false;
  const std::string_view ns = object.namespace_();
  const std::string_view name = object.name();
  if (ns.empty()) return name == key;
  return key.size() == ns.size() + 1 + name.size() &&
         key.compare(0, ns.size(), ns) == 0 && key[ns.size()] == '/' &&
         key.compare(ns.size() + 1, std::string_view::npos, name) == 0;
}

absl::StatusOr<std::pair<std::string, std::string>> SplitMetaNamespaceKey(
    std::string_view key) {
  const size_t slash = key.find('/');
  if (slash == std::string_view::npos) {
    if (key.empty()) return absl::InvalidArgumentError("empty key");
    return std::make_pair(std::string(), std::string(key));
  }
  std::string_view ns = key.substr(0, slash);
  std::string_view name = key.substr(slash + 1);
  if (name.find('/') != std::string_view::npos || name.empty()) {
    return absl::InvalidArgumentError("unexpected key format: \"" +
                                      std::string(key) + "\"");
  }
  return std::make_pair(std::string(ns), std::string(name));
}

}  // namespace kcr::cache
