#include "api/jsonpath/internal/evaluator.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/string_view.h"

namespace kcr {
namespace api {
namespace jsonpath {
namespace internal {
namespace {

// Go's type name of a JSON value decoded into interface{}, for messages.
const char* GoTypeName(const Value& v) {
  switch (v.GetType()) {
    case rapidjson::kObjectType:
      return "map[string]interface {}";
    case rapidjson::kArrayType:
      return "[]interface {}";
    case rapidjson::kStringType:
      return "string";
    case rapidjson::kTrueType:
    case rapidjson::kFalseType:
      return "bool";
    case rapidjson::kNumberType:
      return v.IsInt64() ? "int64" : "float64";
    default:
      return "<nil>";
  }
}

}  // namespace

absl::string_view Str(const Value& v) {
  return absl::string_view(v.GetString(), v.GetStringLength());
}

std::vector<const Value*> SortedMemberValues(const Value& object) {
  std::vector<const Value::Member*> members;
  members.reserve(object.MemberCount());
  for (const auto& m : object.GetObject()) members.push_back(&m);
  std::stable_sort(members.begin(), members.end(),
                   [](const Value::Member* a, const Value::Member* b) {
                     return Str(a->name) < Str(b->name);
                   });
  std::vector<const Value*> values;
  values.reserve(members.size());
  for (size_t i = 0; i < members.size(); ++i) {
    if (i + 1 < members.size() &&
        Str(members[i]->name) == Str(members[i + 1]->name)) {
      continue;
    }
    values.push_back(&members[i]->value);
  }
  return values;
}

namespace {

const Value* FindLastMember(const Value& object, absl::string_view name) {
  const Value* found = nullptr;
  for (const auto& m : object.GetObject()) {
    if (Str(m.name) == name) found = &m.value;
  }
  return found;
}

// Children of a value as client-go iterates them; false when not iterable.
bool Children(const Value& v, std::vector<const Value*>* out) {
  out->clear();
  if (v.IsArray()) {
    for (const auto& e : v.GetArray()) out->push_back(&e);
    return true;
  }
  if (v.IsObject()) {
    *out = SortedMemberValues(v);
    return true;
  }
  return false;
}

class Evaluator {
 public:
  explicit Evaluator(const EvalOptions& options) : options_(options) {}

  absl::Status Run(const std::vector<Segment>& segments, const Value& root,
                   Results* results) {
    for (const Segment& segment : segments) {
      switch (segment.kind) {
        case Segment::kText:
          results->push_back({segment.text});
          break;
        case Segment::kAction: {
          ValueList values;
          absl::Status s = EvalList({&root}, segment.expr, &values);
          if (!s.ok()) return s;
          results->push_back(std::move(values));
          break;
        }
        case Segment::kRange: {
          ValueList values;
          absl::Status s = EvalList({&root}, segment.expr, &values);
          if (!s.ok()) return s;
          for (const Value* v : values) {
            s = Run(segment.body, *v, results);
            if (!s.ok()) return s;
          }
          break;
        }
      }
      if (++produced_ > kMaxResults) return TooMany();
    }
    return absl::OkStatus();
  }

 private:
  absl::Status TooMany() const {
    return absl::ResourceExhaustedError(absl::StrCat(
        "jsonpath evaluation produced more than ", kMaxResults, " values"));
  }

  absl::Status Count(const ValueList& values) {
    produced_ += values.size();
    if (produced_ > kMaxResults) return TooMany();
    return absl::OkStatus();
  }

  absl::Status EvalList(ValueList input, const NodeList& nodes,
                        ValueList* out) {
    for (const Node& node : nodes) {
      ValueList next;
      absl::Status s = Walk(input, node, &next);
      if (!s.ok()) return s;
      s = Count(next);
      if (!s.ok()) return s;
      input = std::move(next);
    }
    *out = std::move(input);
    return absl::OkStatus();
  }

  absl::Status Walk(const ValueList& input, const Node& node, ValueList* out) {
    switch (node.type) {
      case NodeType::kText:
        out->push_back(node.literal);
        return absl::OkStatus();
      case NodeType::kInt:
      case NodeType::kFloat:
      case NodeType::kBool:
        out->assign(input.size(), node.literal);
        return absl::OkStatus();
      case NodeType::kField:
        return EvalField(input, node, out);
      case NodeType::kArray:
        return EvalArray(input, node, out);
      case NodeType::kFilter:
        return EvalFilter(input, node, out);
      case NodeType::kWildcard: {
        std::vector<const Value*> children;
        for (const Value* v : input) {
          if (Children(*v, &children)) {
            out->insert(out->end(), children.begin(), children.end());
          }
        }
        return absl::OkStatus();
      }
      case NodeType::kRecursive:
        return EvalRecursive(input, out);
      case NodeType::kUnion:
        for (const NodeList& list : node.lists) {
          ValueList part;
          absl::Status s = EvalList(input, list, &part);
          if (!s.ok()) return s;
          out->insert(out->end(), part.begin(), part.end());
          s = Count(part);
          if (!s.ok()) return s;
        }
        return absl::OkStatus();
    }
    return absl::InternalError("unexpected jsonpath node");
  }

  absl::Status EvalField(const ValueList& input, const Node& node,
                         ValueList* out) {
    if (input.empty()) return absl::OkStatus();
    if (node.name.empty()) {
      *out = input;
      return absl::OkStatus();
    }
    for (const Value* v : input) {
      if (v->IsNull() || !v->IsObject()) continue;
      const Value* member = FindLastMember(*v, node.name);
      if (member != nullptr) out->push_back(member);
    }
    if (out->empty() && !options_.allow_missing_keys) {
      return absl::NotFoundError(absl::StrCat(node.name, " is not found"));
    }
    return absl::OkStatus();
  }

  absl::Status EvalArray(const ValueList& input, const Node& node,
                         ValueList* out) {
    for (const Value* v : input) {
      if (v->IsNull()) continue;
      if (!v->IsArray()) {
        return absl::InvalidArgumentError(
            absl::StrCat(GoTypeName(*v), " is not array or slice"));
      }
      const int64_t length = v->Size();
      SliceParam params[3] = {node.params[0], node.params[1], node.params[2]};
      if (!params[0].known) params[0].value = 0;
      if (params[0].value < 0) params[0].value += length;
      if (!params[1].known) params[1].value = length;
      if (params[1].value < 0 || (params[1].value == 0 && params[1].derived)) {
        params[1].value += length;
      }
      if (params[1].value == params[0].value) continue;  // zero elements
      if (params[0].value >= length || params[0].value < 0) {
        return absl::OutOfRangeError(
            absl::StrFormat("array index out of bounds: index %d, length %d",
                            params[0].value, length));
      }
      if (params[1].value > length || params[1].value < 0) {
        return absl::OutOfRangeError(
            absl::StrFormat("array index out of bounds: index %d, length %d",
                            params[1].value - 1, length));
      }
      if (params[0].value > params[1].value) {
        return absl::InvalidArgumentError(
            absl::StrFormat("starting index %d is greater than ending index %d",
                            params[0].value, params[1].value));
      }
      int64_t step = 1;
      if (params[2].known) {
        if (params[2].value <= 0) {
          return absl::InvalidArgumentError("step must be > 0");
        }
        step = params[2].value;
      }
      const auto& array = v->GetArray();
      for (int64_t i = params[0].value; i < params[1].value; i += step) {
        out->push_back(&array[static_cast<rapidjson::SizeType>(i)]);
      }
    }
    return absl::OkStatus();
  }

  // Pre-order over every container with at least one child, as client-go's
  // evalRecursive, but with an explicit stack.
  absl::Status EvalRecursive(const ValueList& input, ValueList* out) {
    std::vector<const Value*> stack(input.rbegin(), input.rend());
    std::vector<const Value*> children;
    while (!stack.empty()) {
      const Value* v = stack.back();
      stack.pop_back();
      if (!Children(*v, &children) || children.empty()) continue;
      out->push_back(v);
      if (out->size() > kMaxResults) return TooMany();
      stack.insert(stack.end(), children.rbegin(), children.rend());
    }
    return absl::OkStatus();
  }

  absl::Status EvalFilter(const ValueList& input, const Node& node,
                          ValueList* out) {
    std::vector<const Value*> elements;
    for (const Value* v : input) {
      if (!Children(*v, &elements)) elements = {v};
      for (const Value* element : elements) {
        ValueList lefts;
        absl::Status s = EvalList({element}, node.lists[0], &lefts);
        if (!s.ok() && !options_.allow_missing_keys) return s;
        if (!s.ok()) lefts.clear();
        ValueList rights;
        if (node.op != "exists") {
          s = EvalList({element}, node.lists[1], &rights);
          if (!s.ok()) return s;
        }
        if (lefts.empty()) continue;
        if (lefts.size() > 1) {
          return absl::InvalidArgumentError(
              "can only compare one element at a time");
        }
        if (node.op == "exists") {
          out->push_back(element);
          continue;
        }
        if (rights.empty()) continue;
        if (rights.size() > 1) {
          return absl::InvalidArgumentError(
              "can only compare one element at a time");
        }
        if (Compare(node.op, *lefts[0], *rights[0])) out->push_back(element);
      }
    }
    return absl::OkStatus();
  }

  // Values of different kinds never compare (client-go ignores its
  // "incompatible types" error); numbers compare by value; bools and null
  // support no ordering.
  static bool Compare(const std::string& op, const Value& l, const Value& r) {
    int cmp;
    if (l.IsNumber() && r.IsNumber()) {
      if (l.IsInt64() && r.IsInt64()) {
        const int64_t a = l.GetInt64();
        const int64_t b = r.GetInt64();
        cmp = a < b ? -1 : (a > b ? 1 : 0);
      } else {
        const double a = l.GetDouble();
        const double b = r.GetDouble();
        cmp = a < b ? -1 : (a > b ? 1 : 0);
      }
    } else if (l.IsString() && r.IsString()) {
      const int c = Str(l).compare(Str(r));
      cmp = c < 0 ? -1 : (c > 0 ? 1 : 0);
    } else if (l.IsBool() && r.IsBool()) {
      const bool eq = l.GetBool() == r.GetBool();
      if (op == "==") return eq;
      if (op == "!=") return !eq;
      return false;
    } else {
      return false;
    }
    if (op == "==") return cmp == 0;
    if (op == "!=") return cmp != 0;
    if (op == "<") return cmp < 0;
    if (op == ">") return cmp > 0;
    if (op == "<=") return cmp <= 0;
    if (op == ">=") return cmp >= 0;
    return false;
  }

  const EvalOptions& options_;
  size_t produced_ = 0;
};

}  // namespace

absl::Status Evaluate(const std::vector<Segment>& segments, const Value& root,
                      const EvalOptions& options, Results* results) {
  Evaluator evaluator(options);
  return evaluator.Run(segments, root, results);
}

}  // namespace internal
}  // namespace jsonpath
}  // namespace api
}  // namespace kcr
