#include "runtime/cache/lister.h"

#include <optional>
#include <string>

#include "api/errors/errors.h"
#include "glog/logging.h"

namespace kcr::cache {
namespace {

// An object's labels, read in place for selector matching.
class ObjectLabels : public api::Labels {
 public:
  explicit ObjectLabels(const api::Object& object) : object_(object) {}
  std::optional<std::string_view> Get(std::string_view key) const override {
    return object_.Label(key);
  }

 private:
  const api::Object& object_;
};

bool Matches(const api::LabelSelector& selector, const api::Object& object) {
  return selector.Matches(ObjectLabels(object));
}

// Keeps the objects of `objects` that match, in place.
void Filter(const api::LabelSelector& selector,
            std::vector<api::ObjectPtr>& objects) {
  if (selector.Empty()) return;
  size_t kept = 0;
  for (api::ObjectPtr& object : objects) {
    if (Matches(selector, *object)) objects[kept++] = std::move(object);
  }
  objects.resize(kept);
}

absl::StatusOr<api::ObjectPtr> GetByKey(const Indexer& indexer,
                                        const api::GroupResource& resource,
                                        std::string_view ns,
                                        std::string_view name) {
  std::string key;
  if (!ns.empty()) key.append(ns).append("/");
  key.append(name);
  api::ObjectPtr object = indexer.GetByKey(key);
  if (object == nullptr) {
    return api::StatusError::NotFound(resource, name).ToStatus();
  }
  return object;
}

}  // namespace

std::vector<api::ObjectPtr> ListAll(const Store& store,
                                    const api::LabelSelector& selector) {
  if (selector.IsNothing()) return {};
  std::vector<api::ObjectPtr> objects = store.List();
  Filter(selector, objects);
  return objects;
}

std::vector<api::ObjectPtr> ListAllByNamespace(
    const Indexer& indexer, std::string_view ns,
    const api::LabelSelector& selector) {
  if (ns.empty()) return ListAll(indexer, selector);
  if (selector.IsNothing()) return {};
  absl::StatusOr<std::vector<api::ObjectPtr>> objects =
      indexer.ByIndex(kNamespaceIndex, ns);
  if (!objects.ok()) {
    // As client-go: a cache without the namespace index still answers,
    // at the price of a scan.
    VLOG(2) << "lister: no namespace index, scanning ns=" << ns;
    std::vector<api::ObjectPtr> in_ns;
    for (api::ObjectPtr& object : indexer.List()) {
      if (object->namespace_() == ns && Matches(selector, *object)) {
        in_ns.push_back(std::move(object));
      }
    }
    return in_ns;
  }
  Filter(selector, *objects);
  return *std::move(objects);
}

std::vector<api::ObjectPtr> NamespaceLister::List(
    const api::LabelSelector& selector) const {
  return ListAllByNamespace(*indexer_, ns_, selector);
}

absl::StatusOr<api::ObjectPtr> NamespaceLister::Get(
    std::string_view name) const {
  return GetByKey(*indexer_, resource_, ns_, name);
}

std::vector<api::ObjectPtr> Lister::List(
    const api::LabelSelector& selector) const {
  return ListAll(*indexer_, selector);
}

absl::StatusOr<api::ObjectPtr> Lister::Get(std::string_view ns,
                                           std::string_view name) const {
  return GetByKey(*indexer_, resource_, ns, name);
}

}  // namespace kcr::cache
