// How an Object lays out its one allocation (see api/object.h): MakePlan
// walks a source tree, sizing the node arrays and the blob of long strings
// (each stored once; well-known Kubernetes strings point at static storage),
// and Emit replays a tree as SAX events into a Document, taking long
// strings from the plan.
#ifndef KCR_API_INTERNAL_ARENA_PLANNER_H_
#define KCR_API_INTERNAL_ARENA_PLANNER_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "api/internal/json_value.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {
namespace object_internal {

using rapidjson::Value;

// RapidJSON stores strings of up to 13 bytes inside the 16-byte value
// itself (its ShortString form on 64-bit targets with 48-bit pointers).
constexpr size_t kInlineStringMax = 13;
static_assert(sizeof(Value) == 16, "RapidJSON built without 48-bit pointers");
static_assert(sizeof(Value::Member) == 32, "unexpected RapidJSON layout");

// MemoryPoolAllocator's chunk header (capacity, size, next), which it puts
// at the start of a user-supplied buffer.
constexpr size_t kPoolHeader = RAPIDJSON_ALIGN(3 * sizeof(void*));

inline size_t Align(size_t n) { return RAPIDJSON_ALIGN(n); }

// The hash of the planner's string tables. absl::Hash of a std::string_view
// is std::hash here (Debian's abseil has its own string_view type): a call
// into libstdc++'s Murmur hash for every long string of every object, a
// few percent of parsing. This one mixes the length and three 8-byte words
// (the start, the middle and the end); strings that share all three only
// share a bucket.
struct StringHash {
  size_t operator()(std::string_view s) const {
    const char* p = s.data();
    const size_t n = s.size();
    uint64_t a = 0;
    uint64_t b = 0;
    uint64_t c = 0;
    if (n >= 8) {
      std::memcpy(&a, p, 8);
      std::memcpy(&b, p + n / 2 - 4, 8);
      std::memcpy(&c, p + n - 8, 8);
    } else {
      for (size_t i = 0; i < n; ++i) {
        a |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
      }
    }
    uint64_t h = (a * 0x9E3779B97F4A7C15ULL) ^ (b * 0xC2B2AE3D27D4EB4FULL) ^
                 ((c ^ n) * 0x165667B19E3779F9ULL);
    h ^= h >> 31;
    h *= 0xD6E8FEB86659FD93ULL;
    h ^= h >> 32;
    return static_cast<size_t>(h);
  }
};

// Keys and values that recur in most Kubernetes objects and are too long
// to be stored inline. Objects point at these instead of storing a copy.
// The table is fixed (never grows from input), so it is immortal and needs
// no locking.
const absl::flat_hash_set<std::string_view, StringHash>& WellKnownStrings();

// The static copy of `s` when it is well known, else null.
const char* WellKnown(std::string_view s);

// How an Object's arena is laid out, from a walk over the source tree.
struct Plan {
  size_t node_bytes = 0;  // member and element arrays, 8-byte aligned
  size_t blob_bytes = 0;  // long strings, packed, NUL-terminated
  // Unique long strings -> offset in the blob.
  absl::flat_hash_map<std::string_view, size_t, StringHash> offsets;
  // Where each long string of the tree lives, in emission (pre-)order:
  // a static well-known copy, or an offset into the blob.
  std::vector<std::pair<const char*, size_t>> strings;
  // MakePlan's work list, kept to reuse its capacity.
  struct Item {
    const Value* key;  // null for array elements and the root
    const Value* value;
    int depth;
  };
  std::vector<Item> stack;

  void Clear() {
    node_bytes = blob_bytes = 0;
    offsets.clear();
    strings.clear();
  }
};

constexpr size_t kNotInBlob = std::numeric_limits<size_t>::max();

// Places one string of the tree (a key or a value), in pre-order.
void PlanString(const Value& s, Plan* plan);
void PlanString(std::string_view s, Plan* plan);

bool IsSkipped(const Value& parent, const Value& key, const Value* skip);

// Walks `root` in the order Emit will, sizing the arena and checking the
// nesting depth. Iterative: safe on any input.
absl::Status MakePlan(const Value& root, const Value* skip, Plan* plan);

// Where Emit puts strings.
struct StringSink {
  // Arena mode: long strings come from plan->strings, in order.
  const Plan* plan = nullptr;
  const char* blob = nullptr;
  size_t next = 0;
};

// Replays `v` as SAX events into `handler` (a Document building its tree).
// Recursive, so the caller has checked the depth (MakePlan, or a tree that
// came from a validated Object). With `sink.plan` null every string except
// the well-known ones is copied by the handler.
template <typename Handler>
bool Emit(const Value& v, Handler& handler, const Value* skip,
          StringSink& sink);

template <typename Handler>
bool EmitString(const Value& s, Handler& handler, StringSink& sink,
                bool is_key) {
  const char* str = s.GetString();
  const rapidjson::SizeType len = s.GetStringLength();
  bool copy = true;
  if (len > kInlineStringMax) {
    if (sink.plan != nullptr) {
      const auto& [known, offset] = sink.plan->strings[sink.next++];
      str = known != nullptr ? known : sink.blob + offset;
      copy = false;
    } else if (const char* known = WellKnown(StringOf(s))) {
      str = known;
      copy = false;
    }
  }
  return is_key ? handler.Key(str, len, copy) : handler.String(str, len, copy);
}

template <typename Handler>
bool Emit(const Value& v, Handler& handler, const Value* skip,
          StringSink& sink) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return handler.Null();
    case rapidjson::kFalseType:
      return handler.Bool(false);
    case rapidjson::kTrueType:
      return handler.Bool(true);
    case rapidjson::kStringType:
      return EmitString(v, handler, sink, /*is_key=*/false);
    case rapidjson::kNumberType:
      if (v.IsDouble()) return handler.Double(v.GetDouble());
      if (v.IsInt()) return handler.Int(v.GetInt());
      if (v.IsUint()) return handler.Uint(v.GetUint());
      if (v.IsInt64()) return handler.Int64(v.GetInt64());
      return handler.Uint64(v.GetUint64());
    case rapidjson::kObjectType: {
      if (!handler.StartObject()) return false;
      rapidjson::SizeType count = 0;
      for (const auto& m : v.GetObject()) {
        if (IsSkipped(v, m.name, skip)) continue;
        if (!EmitString(m.name, handler, sink, /*is_key=*/true) ||
            !Emit(m.value, handler, skip, sink)) {
          return false;
        }
        ++count;
      }
      return handler.EndObject(count);
    }
    case rapidjson::kArrayType: {
      if (!handler.StartArray()) return false;
      for (const Value& e : v.GetArray()) {
        if (!Emit(e, handler, skip, sink)) return false;
      }
      return handler.EndArray(v.Size());
    }
  }
  return false;
}

}  // namespace object_internal
}  // namespace api
}  // namespace kcr

#endif  // KCR_API_INTERNAL_ARENA_PLANNER_H_
