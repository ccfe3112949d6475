// The parsed form of a JSONPath template: nodes (client-go's
// k8s.io/client-go/util/jsonpath node.go), the template's segments, and the
// pool that owns the literals nodes point to.
#ifndef KCR_API_JSONPATH_INTERNAL_NODE_H_
#define KCR_API_JSONPATH_INTERNAL_NODE_H_

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {
namespace jsonpath {
namespace internal {

using Value = rapidjson::Value;
using ValueList = std::vector<const Value*>;

enum class NodeType {
  kText,  // a quoted literal; also the literal kinds below
  kInt,
  kFloat,
  kBool,
  kField,
  kArray,
  kFilter,
  kWildcard,
  kRecursive,
  kUnion,
};

struct SliceParam {
  bool known = false;
  int64_t value = 0;
  bool derived = false;
};

struct Node;
using NodeList = std::vector<Node>;

struct Node {
  NodeType type = NodeType::kText;
  // kText, kInt, kFloat, kBool: the literal (owned by Impl).
  const Value* literal = nullptr;
  // kField: the unescaped name ("" is the current value).
  std::string name;
  // kArray.
  SliceParam params[3];
  // kUnion: one list per member; kFilter: left in lists[0], right in
  // lists[1] (empty for an existence test).
  std::vector<NodeList> lists;
  std::string op;  // kFilter: "==", "!=", "<", ">", "<=", ">=", "exists"
};

// One piece of a template.
struct Segment {
  enum Kind { kText, kAction, kRange } kind = kText;
  const Value* text = nullptr;  // kText
  NodeList expr;                // kAction, kRange
  std::vector<Segment> body;    // kRange
};

// Owns the literals that nodes point to.
class LiteralPool {
 public:
  const Value* String(absl::string_view s) {
    if (s.empty()) s = absl::string_view("", 0);  // never a null pointer
    values_.emplace_back(s.data(), static_cast<rapidjson::SizeType>(s.size()),
                         allocator_);
    return &values_.back();
  }
  const Value* Int(int64_t v) {
    values_.emplace_back(v);
    return &values_.back();
  }
  const Value* Float(double v) {
    values_.emplace_back(v);
    return &values_.back();
  }
  const Value* Bool(bool v) {
    values_.emplace_back(v);
    return &values_.back();
  }

 private:
  rapidjson::MemoryPoolAllocator<> allocator_;
  // A deque keeps addresses stable as it grows.
  std::deque<Value> values_;
};

}  // namespace internal
}  // namespace jsonpath
}  // namespace api
}  // namespace kcr

#endif  // KCR_API_JSONPATH_INTERNAL_NODE_H_
