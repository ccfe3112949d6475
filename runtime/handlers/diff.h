// Diff: what changed between two JSON documents, as kopf computes it for
// its handlers' `diff`: a list of operations, each an add, a change or a
// remove of one field, with its path and its old and new values.
//
//   Diff d = Diff::Compute(old_essence, new_essence);
//   for (const DiffOp& op : d) {
//     // op.kind: kAdd, kChange or kRemove; op.path: {"spec", "replicas"};
//     // op.old_value / op.new_value: null pointers for "absent".
//   }
//
// The rules (kopf's `diffs.diff`): equal values give nothing; a value that
// is absent or null on the old side and not on the new one is an add, the
// reverse a remove (kopf treats null as absent); two objects are compared
// key by key, recursively: first the keys only the new one has (adds, in
// its order), then those only the old one has (removes, in its order), then
// the common ones (in the old one's order); anything else that differs
// (scalars, arrays, a type change such as an object becoming a string) is
// one change of the whole value: arrays are atomic, as in kopf.
//
// A Diff shares the two documents it was computed from (the operations
// point into them), so it is cheap to copy and stays valid on its own.
#ifndef KCR_RUNTIME_HANDLERS_DIFF_H_
#define KCR_RUNTIME_HANDLERS_DIFF_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rapidjson/document.h"

namespace kcr::handlers {

// A field's path, one element per key: {"spec", "template", "image"}.
using FieldPath = std::vector<std::string>;

// "spec.template.image" as a path (kopf's dotted field names). Empty
// string: the empty path (the whole document).
FieldPath ParseFieldPath(std::string_view dotted);
// The path as kopf prints it, dotted: "spec.template.image".
std::string FormatFieldPath(const FieldPath& path);

enum class DiffKind { kAdd, kChange, kRemove };
// "add", "change", "remove", as kopf names them.
std::string_view DiffKindName(DiffKind kind);

struct DiffOp {
  DiffKind kind;
  FieldPath path;
  // Null when absent (old for an add, new for a remove). Point into the
  // documents the Diff holds.
  const rapidjson::Value* old_value = nullptr;
  const rapidjson::Value* new_value = nullptr;
};

class Diff {
 public:
  // No operations.
  Diff() = default;

  // The operations that turn `old_doc` into `new_doc`. Either may be null
  // (absent).
  static Diff Compute(std::shared_ptr<const rapidjson::Document> old_doc,
                      std::shared_ptr<const rapidjson::Document> new_doc);

  // The operations under `path` (kopf's `reduce`): their paths made
  // relative to it; a change of an ancestor becomes the change of the value
  // at `path` inside it.
  Diff Reduce(const FieldPath& path) const;

  bool empty() const { return ops_.empty(); }
  size_t size() const { return ops_.size(); }
  const DiffOp& operator[](size_t i) const { return ops_[i]; }
  std::vector<DiffOp>::const_iterator begin() const { return ops_.begin(); }
  std::vector<DiffOp>::const_iterator end() const { return ops_.end(); }

  // As kopf logs a diff: [["change", ["spec", "x"], 1, 2], ...], compact
  // JSON ("absent" values as null).
  std::string ToJson() const;

 private:
  std::shared_ptr<const rapidjson::Document> old_doc_;
  std::shared_ptr<const rapidjson::Document> new_doc_;
  std::vector<DiffOp> ops_;
};

// The value at `path` inside `doc`, or null when a step is missing or not
// an object.
const rapidjson::Value* FindField(const rapidjson::Value* doc,
                                  const FieldPath& path);

}  // namespace kcr::handlers

#endif  // KCR_RUNTIME_HANDLERS_DIFF_H_
