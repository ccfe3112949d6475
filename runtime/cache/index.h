// Indexer: a Store with named secondary indexes, as client-go's
// cache.Indexer. An index function maps an object to the values it is
// indexed under (zero or more); ByIndex finds the objects under a value.
//
// Built-in index functions: the namespace (kNamespaceIndex, which the
// namespace listers use), a label's value, and the controller owner's UID.
#ifndef KCR_RUNTIME_CACHE_INDEX_H_
#define KCR_RUNTIME_CACHE_INDEX_H_

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/object.h"
#include "runtime/cache/store.h"

namespace kcr::cache {

// The values `object` is indexed under. Must be thread-safe, fast and
// deterministic (the same object always gives the same values).
using IndexFunc = std::function<std::vector<std::string>(const api::Object&)>;

namespace index_internal {
// The function objects behind MetaNamespaceIndexFunc and LabelIndexFunc,
// named so that a store can tell an update that leaves their values as
// they are (same namespace, same label value) without calling them.
struct NamespaceIndex {
  std::vector<std::string> operator()(const api::Object& object) const;
  static bool SameValues(const api::Object& a, const api::Object& b) {
    return a.namespace_() == b.namespace_();
  }
};
struct LabelIndex {
  std::string label_key;
  std::vector<std::string> operator()(const api::Object& object) const;
  bool SameValues(const api::Object& a, const api::Object& b) const {
    return a.Label(label_key) == b.Label(label_key);
  }
};
}  // namespace index_internal

// Whether `func` is known to give `a` and `b` the same values without
// calling it (false: not known, call it). For the functions above only.
bool IndexValuesUnchanged(const IndexFunc& func, const api::Object& a,
                          const api::Object& b);

// Index functions by name.
using Indexers = std::map<std::string, IndexFunc, std::less<>>;

// The index informers always have: the object's namespace ("" objects, i.e.
// cluster-scoped ones, are indexed under "").
inline constexpr std::string_view kNamespaceIndex = "namespace";
IndexFunc MetaNamespaceIndexFunc();
// The value of label `key` (objects without it are not indexed).
IndexFunc LabelIndexFunc(std::string label_key);
// The uid of the owner reference with controller=true (none: not indexed).
IndexFunc ControllerOwnerUidIndexFunc();

class Indexer : public Store {
 public:
  // The objects whose `index_name` values include `value`.
  // kNotFound when there is no such index.
  virtual absl::StatusOr<std::vector<api::ObjectPtr>> ByIndex(
      std::string_view index_name, std::string_view value) const = 0;
  // Their keys.
  virtual absl::StatusOr<std::vector<std::string>> IndexKeys(
      std::string_view index_name, std::string_view value) const = 0;
  // The objects that share at least one `index_name` value with `object`.
  virtual absl::StatusOr<std::vector<api::ObjectPtr>> Index(
      std::string_view index_name, const api::Object& object) const = 0;
  // Every value the index holds now (empty when there is no such index).
  virtual std::vector<std::string> ListIndexFuncValues(
      std::string_view index_name) const = 0;
  // Adds index functions, also to a store that already has objects (they
  // are indexed at once). kAlreadyExists when a name is taken.
  virtual absl::Status AddIndexers(Indexers indexers) = 0;
  // The names of the indexes.
  virtual std::vector<std::string> IndexNames() const = 0;
};

}  // namespace kcr::cache

#endif  // KCR_RUNTIME_CACHE_INDEX_H_
