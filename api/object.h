// Object: an immutable Kubernetes object (any kind) held as a RapidJSON
// tree, with the metadata that controllers read on every event indexed at
// parse time. Objects are shared as `ObjectPtr` (shared_ptr<const Object>):
// the cache, event handlers and reconcilers all read the same instance.
//
// Thread safety: an Object never changes after Parse/Build returns, so any
// number of threads may read one concurrently without locking. Views
// returned by accessors (string_view, StringMapView, OwnerReferenceView)
// point into the Object and are valid while the Object is alive.
//
// To edit, deep-copy into an ObjectBuilder, change it, and Build() a new
// Object (or send ToJson() to the API server).
//
// Memory layout (why an Object costs about what its JSON does):
//   RapidJSON's default Document reserves 64 KiB per document. An Object
//   instead owns one allocation sized exactly for its tree. Parse first
//   parses in situ into a per-thread scratch buffer (the fastest RapidJSON
//   path), measuring the tree as the reader's events go by (node arrays plus
//   strings too long for RapidJSON's 13-byte inline form; stripped
//   managedFields are never built), validates it, allocates that many bytes
//   once, and replays the tree into it. Long strings are stored once per object
//   (duplicates such as repeated timestamps share bytes) and packed without
//   padding; keys and values from a fixed table of well-known Kubernetes
//   strings ("creationTimestamp", "/dev/termination-log", ...) point at
//   static storage and cost nothing per object. The only remaining cost is
//   RapidJSON's 16 bytes per value and per key, which is the floor for any
//   RapidJSON tree: measured, an Object costs 1.26x its minified JSON for a
//   ConfigMap, 1.56x for a Pod and 1.63x for a Deployment (whose JSON
//   averages 11-12 bytes per value and key); see docs/benchmarks.md.
//   The alternatives: RapidJSON's default Document reserves a 64 KiB chunk
//   per object; in-situ parsing into an owned copy of the text keeps the
//   whole text plus the nodes (2.5x the JSON, measured); a pool sized from
//   the input length must assume the worst bytes-per-node ratio (8x for
//   "[0,0,...]") or spill into extra chunks.
//
// Input limits: nesting deeper than kMaxJsonDepth (api/json_limits.h) is
// rejected. Parse uses
// RapidJSON's recursive parser only when the input holds fewer '[' and '{'
// bytes than that limit, and its iterative parser otherwise; nothing else
// here recurses deeper than the limit. So a hostile "[[[[..." returns an
// error rather than exhausting the stack. (ParseScanned uses the recursive
// parser on its caller's word that the nesting is bounded.)
#ifndef KCR_API_OBJECT_H_
#define KCR_API_OBJECT_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/json_limits.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {

class Object;
class ObjectBuilder;
namespace object_internal {
struct Plan;
}  // namespace object_internal

// How objects are shared. Never null when returned from a successful call.
using ObjectPtr = std::shared_ptr<const Object>;

// A read-only view of a JSON object whose values are all strings
// (metadata.labels, metadata.annotations, ConfigMap data). An absent map
// reads as empty. Copyable; points into the Object it came from.
class StringMapView {
 public:
  using value_type = std::pair<std::string_view, std::string_view>;

  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = StringMapView::value_type;
    using difference_type = std::ptrdiff_t;
    using pointer = const value_type*;
    using reference = value_type;

    iterator() = default;
    value_type operator*() const;
    iterator& operator++() {
      ++it_;
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++it_;
      return old;
    }
    friend bool operator==(const iterator& a, const iterator& b) {
      return a.it_ == b.it_;
    }
    friend bool operator!=(const iterator& a, const iterator& b) {
      return a.it_ != b.it_;
    }

   private:
    friend class StringMapView;
    explicit iterator(rapidjson::Value::ConstMemberIterator it) : it_(it) {}
    rapidjson::Value::ConstMemberIterator it_;
  };

  StringMapView() = default;
  // `map` must be null or a JSON object whose values are strings.
  explicit StringMapView(const rapidjson::Value* map) : map_(map) {}

  bool empty() const { return size() == 0; }
  size_t size() const { return map_ == nullptr ? 0 : map_->MemberCount(); }
  // The value for `key`, or nullopt. Linear in size(); maps are small.
  std::optional<std::string_view> Get(std::string_view key) const;
  bool Has(std::string_view key) const { return Get(key).has_value(); }
  iterator begin() const;
  iterator end() const;
  // An owning copy, e.g. to hand to a label selector.
  std::map<std::string, std::string> ToMap() const;

 private:
  const rapidjson::Value* map_ = nullptr;
};

// One entry of metadata.ownerReferences, viewed in place. Absent fields
// read as empty / false.
struct OwnerReferenceView {
  std::string_view api_version;
  std::string_view kind;
  std::string_view name;
  std::string_view uid;
  bool controller = false;
  bool block_owner_deletion = false;
};

// Options for Object::Parse.
struct ParseOptions {
  // Drop metadata.managedFields while parsing, so the object never pays for
  // them (see api/transform.h; the cache's default).
  bool strip_managed_fields = false;
};

// What a caller that has already scanned a JSON text knows about it (the list
// framer does, runtime/client/list_decoder.h), so that
// Object::ParseScanned need not scan the text again. Each field must be
// true of the text; a wrong one can let invalid UTF-8 through (ascii) or
// exhaust the stack (nesting_bounded).
struct ScannedText {
  // No byte of 0x80 or more.
  bool ascii = false;
  // Arrays and objects nest no deeper than kMaxJsonDepth, counting '[',
  // '{', ']' and '}' outside strings as JSON does (a backslash in a string
  // escapes the byte after it).
  bool nesting_bounded = false;
  // May hold a "\u" escape; false only when it holds none.
  bool unicode_escape = true;
};

// An immutable Kubernetes object. Create with Parse or ObjectBuilder::Build.
class Object {
 public:
  // Parses one JSON document into an Object. Errors are InvalidArgument
  // and name the byte offset in `json` and what was wrong:
  //   malformed JSON:  "invalid JSON at offset 17: Missing a colon after a
  //                     name of object member."
  //   structure:       the field at fault, then where its value starts:
  //                    "top level is not an object at offset 0",
  //                    "metadata missing from the object at offset 0",
  //                    "metadata is not an object at offset 12",
  //                    "kind is not a string at offset 8",
  //                    "metadata.name is not a string at offset 20",
  //                    "metadata.labels.app is not a string at offset 30",
  //                    "metadata.generation is not an integer at ...",
  //                    "metadata.finalizers[2] is not a string at ...",
  //                    "metadata.ownerReferences[0].uid is not a string at
  //                     offset 39",
  //                    "JSON nests deeper than 256 levels at offset 277"
  //                    (the first array or object past the limit).
  // FromValue and ObjectBuilder::Build give the same messages without the
  // offset (there is no text). Finding the offset re-reads the text, on the
  // error path only.
  // Fields this class exposes are type-checked here, so accessors never
  // meet a wrong type; every other field is kept as sent. Input must be
  // UTF-8; numbers are read to the nearest double (full precision); an
  // unpaired UTF-16 surrogate escape reads as U+FFFD, as in Go.
  // Each thread that parses keeps a scratch buffer (64 KiB, plus room for
  // the largest input it has parsed) so that parsing does not allocate in
  // steady state; it is freed when the thread exits.
  static absl::StatusOr<ObjectPtr> Parse(std::string_view json,
                                         const ParseOptions& options = {});

  // Parse of the text `head` followed by `json`, whose shape the caller has
  // established (see ScannedText): the same result and errors as Parse of
  // that text, without Parse's own scan of it. `head` lets a caller put
  // members in front of an object's own ("{\"kind\":\"Pod\"," and the
  // object after its '{') without a copy of its own; it may be empty.
  static absl::StatusOr<ObjectPtr> ParseScanned(std::string_view head,
                                                std::string_view json,
                                                const ScannedText& scanned,
                                                const ParseOptions& options);

  // Builds an Object from any RapidJSON value (deep copy, same validation
  // as Parse). The value is not modified.
  static absl::StatusOr<ObjectPtr> FromValue(const rapidjson::Value& value,
                                             const ParseOptions& options = {});

  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  ~Object() = default;

  // Top-level type fields; empty when absent.
  std::string_view api_version() const { return View(Hot(kApiVersion)); }
  std::string_view kind() const { return View(Hot(kKind)); }

  // metadata.*; strings read empty when absent.
  std::string_view name() const { return View(Hot(kName)); }
  std::string_view namespace_() const { return View(Hot(kNamespace)); }
  std::string_view uid() const { return View(Hot(kUid)); }
  std::string_view resource_version() const {
    return View(Hot(kResourceVersion));
  }
  std::string_view generate_name() const;
  std::string_view creation_timestamp() const;
  std::string_view deletion_timestamp() const;
  // True when metadata.deletionTimestamp is set: the object is going away
  // and waits only for its finalizers.
  bool being_deleted() const { return !deletion_timestamp().empty(); }
  // metadata.generation, 0 when absent.
  int64_t generation() const;

  // The cache key client-go uses: "namespace/name", or "name" for
  // cluster-scoped objects.
  std::string Key() const;

  StringMapView labels() const { return StringMapView(Hot(kLabels)); }
  StringMapView annotations() const { return StringMapView(Hot(kAnnotations)); }
  std::optional<std::string_view> Label(std::string_view key) const {
    return labels().Get(key);
  }
  std::optional<std::string_view> Annotation(std::string_view key) const {
    return annotations().Get(key);
  }

  std::vector<OwnerReferenceView> owner_references() const;
  // The owner reference with controller=true, if any.
  std::optional<OwnerReferenceView> controller_reference() const;
  std::vector<std::string_view> finalizers() const;
  bool HasFinalizer(std::string_view finalizer) const;

  // The whole tree. The root is always a JSON object.
  const rapidjson::Value& json() const { return root_; }
  // metadata (always an object).
  const rapidjson::Value& metadata() const { return *metadata_; }

  // The value at an RFC 6901 JSON pointer ("" is the root, "/spec/replicas",
  // "/metadata/labels/app.kubernetes.io~1name", "/spec/containers/0"), or
  // null when absent or the pointer is malformed.
  const rapidjson::Value* Find(std::string_view json_pointer) const;

  // Compact JSON text.
  std::string ToJson() const;

  // Bytes this object owns: the Object itself, its shared_ptr control
  // block, and its arena (tree nodes and strings). Strings in the static
  // table of well-known names are shared by every object and not counted.
  size_t SpaceUsed() const;

  // A deep copy for editing.
  ObjectBuilder ToBuilder() const;

 private:
  struct PrivateTag {};

 public:
  // Use Parse or FromValue; public only for std::make_shared.
  explicit Object(PrivateTag) {}

 private:
  static std::string_view View(const rapidjson::Value* v) {
    return v == nullptr
               ? std::string_view()
               : std::string_view(v->GetString(), v->GetStringLength());
  }
  // Fields read on every event, located once at parse time. A slot holds
  // the member's index in the root (apiVersion, kind) or in metadata (the
  // rest), or kAbsent when the member is missing or of another type. An
  // index too large for a slot (a map of 65,534+ members) reads kByKey and
  // is looked up by name instead.
  enum HotField : uint8_t {
    kApiVersion,
    kKind,
    kName,
    kNamespace,
    kUid,
    kResourceVersion,
    kLabels,
    kAnnotations,
    kHotFields,
  };
  static constexpr uint16_t kAbsent = 0xFFFF;
  static constexpr uint16_t kByKey = 0xFFFE;
  const rapidjson::Value* Hot(HotField field) const {
    const uint16_t slot = hot_[field];
    if (slot < kByKey) return &(HotParent(field).MemberBegin() + slot)->value;
    return slot == kAbsent ? nullptr : HotByKey(field);
  }
  // The root for apiVersion and kind, metadata for the rest.
  const rapidjson::Value& HotParent(HotField field) const {
    return field <= kKind ? root_ : *metadata_;
  }
  // The member for `field` in HotParent(field), or its MemberEnd() when
  // the member is missing or of another type.
  rapidjson::Value::ConstMemberIterator FindHot(HotField field) const;
  const rapidjson::Value* HotByKey(HotField field) const;
  // Builds the Object for `value` (validated, depth checked) into an arena
  // laid out by `plan`, leaving out the members IsSkipped names in `skip`.
  static absl::StatusOr<ObjectPtr> Build(const rapidjson::Value& value,
                                         const rapidjson::Value* skip,
                                         const object_internal::Plan& plan);
  // Parses as Parse does, in two passes over the tree (parse, then plan):
  // the path for inputs the one-pass parse leaves to it, and the one that
  // finds where in the text an invalid object is wrong.
  static absl::StatusOr<ObjectPtr> ParseInTwoPasses(
      std::string_view json, const ParseOptions& options);
  // The one-pass parse of `head` + `json`, a text that holds no lone surrogate
  // escape, with RapidJSON's recursive reader when `recursive` (nesting is
  // bounded) and UTF-8 validation unless `ascii`; anything it cannot
  // build (a NUL byte among them) goes to ParseInTwoPasses.
  static absl::StatusOr<ObjectPtr> ParseInOnePass(std::string_view head,
                                                  std::string_view json,
                                                  bool ascii, bool recursive,
                                                  const ParseOptions& options);
  // Fills metadata_ and hot_ from root_ (already validated).
  void Index();
  const rapidjson::Value* MetadataMember(std::string_view key) const;

  // The tree's nodes and long strings, arena_size_ bytes in the Object's
  // own allocation (after its shared_ptr control block: Build allocates
  // both at once), freed with it. Values hold no allocator, so nothing else
  // is owned.
  char* arena_ = nullptr;
  rapidjson::Value root_;
  const rapidjson::Value* metadata_ = nullptr;
  uint32_t arena_size_ = 0;
  uint16_t hot_[kHotFields] = {};
};

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_OBJECT_H_
