#include "api/object.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/internal/arena_planner.h"
#include "api/internal/json_value.h"
#include "api/json_pointer.h"
#include "api/object_builder.h"
#include "rapidjson/error/en.h"
#include "rapidjson/memorystream.h"
#include "rapidjson/reader.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "base/string_view.h"

namespace kcr {
namespace api {
namespace {

using json_pointer::FindKey;
using json_pointer::FindPointer;
using object_internal::Emit;
using object_internal::EmitString;
using object_internal::Invalid;
using object_internal::kPoolHeader;
using object_internal::MakePlan;
using object_internal::MayHoldSurrogateEscape;
using object_internal::MetadataOf;
using object_internal::Plan;
using object_internal::Quote;
using object_internal::ReplaceLoneSurrogates;
using object_internal::StringOf;
using object_internal::StringSink;
using object_internal::WriteJson;
using rapidjson::Value;

// What std::make_shared adds in front of the Object (vtable and counts).
constexpr size_t kControlBlock = 16;
// Per-thread scratch space for the first, in-situ parse.
constexpr size_t kScratchBytes = 64 * 1024;
// Zero bytes after the NUL of the in-situ text (PaddedInsituStream).
constexpr size_t kTextPadding = 16;
// A Document's initial stack (RapidJSON's default).
constexpr size_t kDocumentStack = 1024;

// Where Validate found a problem: the position of each step from the root
// (member or element index, so a repeated key is told apart), and whether
// the problem is a member missing from that object rather than the value
// there. Parse turns it into a byte offset (SiteLocator). The deepest path
// Validate writes is metadata.ownerReferences[i].field, four steps, so the
// path stays inline and Validate does not allocate on success.
struct ErrorSite {
  absl::InlinedVector<size_t, 4> path;
  bool missing = false;
};

// Validates the fields Object exposes, so accessors never meet a wrong
// type. JSON null reads as absent, as it does in Go's decoder. On failure
// `*site` (when not null) says where.
absl::Status Validate(const Value& root, ErrorSite* site = nullptr) {
  ErrorSite ignored;
  ErrorSite& at = site != nullptr ? *site : ignored;
  // Reset field by field: gcc -O2 wrongly reports the inlined storage of
  // a whole-struct assignment from a temporary as used uninitialized.
  at.path.clear();
  at.missing = false;
  if (!root.IsObject()) return Invalid("top level is not an object");
  auto index = [](const Value& object, Value::ConstMemberIterator it) {
    return static_cast<size_t>(it - object.MemberBegin());
  };
  for (const char* field : {"apiVersion", "kind"}) {
    auto it = root.FindMember(field);
    if (it != root.MemberEnd() && !it->value.IsString() &&
        !it->value.IsNull()) {
      at.path = {index(root, it)};
      return Invalid(absl::StrCat(field, " is not a string"));
    }
  }
  auto meta_it = root.FindMember("metadata");
  if (meta_it == root.MemberEnd()) {
    at.missing = true;
    return Invalid("metadata missing");
  }
  at.path = {index(root, meta_it)};
  if (meta_it->value.IsNull()) return Invalid("metadata missing");
  const Value& meta = meta_it->value;
  if (!meta.IsObject()) return Invalid("metadata is not an object");
  for (const char* field :
       {"name", "generateName", "namespace", "uid", "resourceVersion",
        "creationTimestamp", "deletionTimestamp"}) {
    auto it = meta.FindMember(field);
    if (it != meta.MemberEnd() && !it->value.IsString() &&
        !it->value.IsNull()) {
      at.path.push_back(index(meta, it));
      return Invalid(absl::StrCat("metadata.", field, " is not a string"));
    }
  }
  if (auto it = meta.FindMember("generation");
      it != meta.MemberEnd() && !it->value.IsInt64() && !it->value.IsNull()) {
    at.path.push_back(index(meta, it));
    return Invalid("metadata.generation is not an integer");
  }
  for (const char* field : {"labels", "annotations"}) {
    auto it = meta.FindMember(field);
    if (it == meta.MemberEnd() || it->value.IsNull()) continue;
    at.path.push_back(index(meta, it));
    if (!it->value.IsObject()) {
      return Invalid(absl::StrCat("metadata.", field, " is not an object"));
    }
    for (auto m = it->value.MemberBegin(); m != it->value.MemberEnd(); ++m) {
      if (!m->value.IsString()) {
        at.path.push_back(index(it->value, m));
        return Invalid(absl::StrCat("metadata.", field, ".",
                                    Quote(StringOf(m->name)),
                                    " is not a string"));
      }
    }
    at.path.pop_back();
  }
  if (auto it = meta.FindMember("finalizers");
      it != meta.MemberEnd() && !it->value.IsNull()) {
    at.path.push_back(index(meta, it));
    if (!it->value.IsArray()) {
      return Invalid("metadata.finalizers is not an array");
    }
    for (rapidjson::SizeType i = 0; i < it->value.Size(); ++i) {
      if (!it->value[i].IsString()) {
        at.path.push_back(i);
        return Invalid(
            absl::StrCat("metadata.finalizers[", i, "] is not a string"));
      }
    }
    at.path.pop_back();
  }
  if (auto it = meta.FindMember("ownerReferences");
      it != meta.MemberEnd() && !it->value.IsNull()) {
    at.path.push_back(index(meta, it));
    if (!it->value.IsArray()) {
      return Invalid("metadata.ownerReferences is not an array");
    }
    for (rapidjson::SizeType i = 0; i < it->value.Size(); ++i) {
      const Value& ref = it->value[i];
      at.path.push_back(i);
      if (!ref.IsObject()) {
        return Invalid(
            absl::StrCat("metadata.ownerReferences[", i, "] is not an object"));
      }
      for (const char* field : {"apiVersion", "kind", "name", "uid"}) {
        auto f = ref.FindMember(field);
        if (f != ref.MemberEnd() && !f->value.IsString() &&
            !f->value.IsNull()) {
          at.path.push_back(index(ref, f));
          return Invalid(absl::StrCat("metadata.ownerReferences[", i, "].",
                                      field, " is not a string"));
        }
      }
      for (const char* field : {"controller", "blockOwnerDeletion"}) {
        auto f = ref.FindMember(field);
        if (f != ref.MemberEnd() && !f->value.IsBool() && !f->value.IsNull()) {
          at.path.push_back(index(ref, f));
          return Invalid(absl::StrCat("metadata.ownerReferences[", i, "].",
                                      field, " is not a boolean"));
        }
      }
      at.path.pop_back();
    }
  }
  at.path.clear();
  return absl::OkStatus();
}

// Finds, by re-reading the text, the byte offset at which a value starts:
// either the value at `site` (child positions from the root), or the first
// array or object nested deeper than kMaxJsonDepth, not counting
// metadata.managedFields when `skip_managed_fields` (as MakePlan does).
// Runs only on the error path, over text that is known to parse; the
// iterative reader keeps it safe on any nesting.
class SiteLocator
    : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, SiteLocator> {
 public:
  // Locates the value at `site`.
  SiteLocator(std::string_view json, const ErrorSite& site)
      : json_(json), stream_(json.data(), json.size()), site_(&site) {}
  // Locates the first container deeper than kMaxJsonDepth.
  SiteLocator(std::string_view json, bool skip_managed_fields)
      : json_(json),
        stream_(json.data(), json.size()),
        skip_managed_fields_(skip_managed_fields) {}

  // The offset, or nullopt when there is no such value.
  std::optional<size_t> Run() {
    rapidjson::Reader reader;
    reader.Parse<rapidjson::kParseIterativeFlag>(stream_, *this);
    return found_;
  }

  bool Default() { return OnValue(/*container=*/false); }
  bool StartObject() { return OnValue(/*container=*/true); }
  bool StartArray() { return OnValue(/*container=*/true); }
  bool Key(const char* str, rapidjson::SizeType len, bool) {
    const std::string_view key(str, len);
    Level& level = levels_.back();
    level.skip_next = false;
    if (levels_.size() == 1 && key == "metadata" && !seen_metadata_) {
      seen_metadata_ = true;
      level.metadata_next = true;
    } else if (level.is_metadata && skip_managed_fields_ &&
               key == "managedFields") {
      level.skip_next = true;
    }
    end_ = stream_.Tell();
    return true;
  }
  bool EndObject(rapidjson::SizeType) { return End(); }
  bool EndArray(rapidjson::SizeType) { return End(); }

 private:
  struct Level {
    size_t count = 0;      // children seen so far
    bool on_path = false;  // this container's path is a prefix of site_
    bool is_metadata = false;
    bool skipped = false;        // inside a member MakePlan skips
    bool metadata_next = false;  // the next child is the root's metadata
    bool skip_next = false;      // the next child is metadata.managedFields
  };

  // Called as each value starts (containers) or ends (scalars). end_ is
  // where the previous token ended: only whitespace, ',' and ':' lie
  // between it and the value's first byte.
  bool OnValue(bool container) {
    const size_t depth = levels_.size();
    bool on_path = site_ != nullptr && depth == 0;
    bool is_metadata = false;
    bool skipped = false;
    if (depth > 0) {
      Level& parent = levels_.back();
      const size_t index = parent.count++;
      on_path = site_ != nullptr && parent.on_path &&
                depth - 1 < site_->path.size() &&
                site_->path[depth - 1] == index;
      is_metadata = parent.metadata_next;
      skipped = parent.skipped || parent.skip_next;
      parent.metadata_next = parent.skip_next = false;
    }
    const size_t start = SkipSeparators(end_);
    if (site_ != nullptr && on_path &&
        (depth == 0 ? site_->path.empty() : depth == site_->path.size())) {
      found_ = start;
      return false;  // stop reading
    }
    if (site_ == nullptr && container && !skipped &&
        depth + 1 > static_cast<size_t>(kMaxJsonDepth)) {
      found_ = start;
      return false;
    }
    if (container) {
      Level level;
      level.on_path = on_path;
      level.is_metadata = is_metadata;
      level.skipped = skipped;
      levels_.push_back(level);
      // The reader may report a bracket before or after consuming it.
      end_ = start + 1;
    } else {
      end_ = stream_.Tell();
    }
    return true;
  }

  bool End() {
    levels_.pop_back();
    end_ = SkipSeparators(end_) + 1;
    return true;
  }

  // The first byte at or after `at` that is not whitespace, ',' or ':'.
  size_t SkipSeparators(size_t at) const {
    while (at < json_.size() && json_[at] != '\0' &&
           std::strchr(" \t\n\r,:", json_[at]) != nullptr) {
      ++at;
    }
    return at;
  }

  std::string_view json_;
  rapidjson::MemoryStream stream_;
  const ErrorSite* site_ = nullptr;
  bool skip_managed_fields_ = false;
  bool seen_metadata_ = false;
  std::vector<Level> levels_;
  size_t end_ = 0;
  std::optional<size_t> found_;
};

// Per-thread state for Parse: the in-situ text buffer, a pool for the
// scratch tree (reused, so parsing does not allocate in steady state) and
// the arena plan.
struct Scratch {
  // The text being parsed: a copy of the input, NUL-terminated and padded
  // as PaddedInsituStream needs.
  std::unique_ptr<char[]> text;
  size_t text_capacity = 0;
  std::unique_ptr<char[]> pool_buffer{new char[kScratchBytes]};
  rapidjson::MemoryPoolAllocator<> pool{pool_buffer.get(), kScratchBytes,
                                        kScratchBytes};
  Plan plan;

  // Copies `json` into text, ready for the in-situ parse.
  char* CopyText(std::string_view json) {
    const size_t need = json.size() + 1 + kTextPadding;
    if (need > text_capacity) {
      text_capacity = std::max(need, 2 * text_capacity);
      text.reset(new char[text_capacity]);
    }
    std::memcpy(text.get(), json.data(), json.size());
    std::memset(text.get() + json.size(), 0, 1 + kTextPadding);
    return text.get();
  }
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// What Parse needs to know about its input before choosing a parser.
struct InputShape {
  bool ascii = true;
  size_t brackets = 0;  // '[' and '{' bytes, inside strings or not
  bool has_nul = false;
};

// Bytes of `w` equal to zero, each marked by its top bit (exact, no false
// positives, unlike the usual "has a zero byte" test).
inline uint64_t ZeroBytes(uint64_t w) {
  constexpr uint64_t k7F = 0x7F7F7F7F7F7F7F7FULL;
  return ~(((w & k7F) + k7F) | w | k7F);
}

// The tail of Inspect, a word and then a byte at a time, adding to `shape`
// as it goes (`high` and `nul` are combined by the caller).
void InspectWords(const char* p, size_t n, InputShape& shape, uint64_t& high,
                  uint64_t& nul) {
  constexpr uint64_t k20 = 0x2020202020202020ULL;
  constexpr uint64_t k7B = 0x7B7B7B7B7B7B7B7BULL;
  size_t brackets = 0;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    high |= w;
    nul |= ZeroBytes(w);
    // '[' is 0x5B and '{' is 0x7B: they differ only in bit 5.
    // Marked bytes are 0x80: shift each to 1 and add the bytes up with a
    // multiply (no popcnt instruction in the baseline x86-64 target).
    brackets +=
        ((ZeroBytes((w | k20) ^ k7B) >> 7) * 0x0101010101010101ULL) >> 56;
  }
  for (; n > 0; ++p, --n) {
    const unsigned char u = static_cast<unsigned char>(*p);
    high |= u;
    nul |= u == 0;
    brackets += (u | 0x20) == 0x7B;
  }
  shape.brackets += brackets;
}

// One pass: this runs on every byte the cache receives, so it takes 16
// bytes a step where SSE2 is there (every x86-64), counting brackets in
// byte lanes that are summed before they can overflow.
InputShape Inspect(std::string_view json) {
  constexpr uint64_t k80 = 0x8080808080808080ULL;
  InputShape shape;
  uint64_t high = 0;
  uint64_t nul = 0;
  const char* p = json.data();
  size_t n = json.size();
#ifdef __SSE2__
  const __m128i k20 = _mm_set1_epi8(0x20);
  const __m128i k7B = _mm_set1_epi8(0x7B);
  const __m128i zero = _mm_setzero_si128();
  __m128i any_high = zero;
  __m128i any_nul = zero;
  __m128i total = zero;  // two 64-bit sums of bracket counts
  while (n >= 16) {
    // Each lane counts up to 255 brackets: flush at most every 255 steps.
    __m128i lanes = zero;
    for (int step = 0; step < 255 && n >= 16; ++step, p += 16, n -= 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      any_high = _mm_or_si128(any_high, v);
      any_nul = _mm_or_si128(any_nul, _mm_cmpeq_epi8(v, zero));
      // A matching lane compares to all ones (-1): subtracting adds one.
      lanes = _mm_sub_epi8(lanes, _mm_cmpeq_epi8(_mm_or_si128(v, k20), k7B));
    }
    total = _mm_add_epi64(total, _mm_sad_epu8(lanes, zero));
  }
  shape.brackets =
      static_cast<size_t>(_mm_cvtsi128_si64(total)) +
      static_cast<size_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(total, total)));
  if (_mm_movemask_epi8(any_high) != 0) high |= k80;
  if (_mm_movemask_epi8(any_nul) != 0) nul = 1;
#endif
  InspectWords(p, n, shape, high, nul);
  shape.ascii = (high & k80) == 0;
  shape.has_nul = nul != 0;
  return shape;
}

// The in-situ stream over Scratch's text, which is padded (kTextPadding
// zero bytes after its NUL): strings are scanned 16 bytes at a time with
// unaligned loads (the specialization of ScanCopyUnescapedString below),
// where RapidJSON's own SSE2 scan goes byte by byte up to a 16-byte
// boundary, which is most of a Kubernetes object's short strings.
struct PaddedInsituStream
    : rapidjson::GenericInsituStringStream<rapidjson::UTF8<>> {
  explicit PaddedInsituStream(char* text) : GenericInsituStringStream(text) {}
};

// The bytes of the 16 at `p` that end a run of plain string bytes: a quote,
// a backslash, or a control byte (the NUL that ends the text among them).
#ifdef __SSE2__
inline unsigned StringStops(const char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i k1F = _mm_set1_epi8(0x1F);
  const __m128i stops =
      _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                   // v <= 0x1F, unsigned, exactly when max(v, 0x1F) == 0x1F.
                   _mm_cmpeq_epi8(_mm_max_epu8(v, k1F), k1F));
  return static_cast<unsigned>(_mm_movemask_epi8(stops));
}
#endif

// Advances `is` over the plain bytes of a string, copying them down when an
// escape has already shortened it (dst_ behind src_). Stops at the first
// quote, backslash or control byte, which RapidJSON's loop then handles.
inline void ScanPlainString(PaddedInsituStream& is) {
  char* p = is.src_;
  char* q = is.dst_;
#ifdef __SSE2__
  // Every load starts at or before the NUL, and kTextPadding bytes follow
  // it: no load leaves the buffer.
  if (p == q) {
    for (;; p += 16) {
      if (const unsigned stops = StringStops(p); stops != 0) {
        p += __builtin_ctz(stops);
        break;
      }
    }
    is.src_ = is.dst_ = p;
    return;
  }
  for (;; p += 16, q += 16) {
    const unsigned stops = StringStops(p);
    if (stops != 0) {
      const int n = __builtin_ctz(stops);
      // q is behind p: a byte loop, since a 16-byte store could overwrite
      // bytes not yet read.
      for (int i = 0; i < n; ++i) q[i] = p[i];
      p += n;
      q += n;
      break;
    }
    // All 16 were loaded before the store, and the store ends before p + 16.
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
#else
  while (*p != '"' && *p != '\\' && static_cast<unsigned char>(*p) >= 0x20) {
    *q++ = *p++;
  }
#endif
  is.src_ = p;
  is.dst_ = q;
}

}  // namespace
}  // namespace api
}  // namespace kcr

namespace rapidjson {

template <>
struct StreamTraits<kcr::api::PaddedInsituStream> {
  enum { copyOptimization = 1 };
};

// Between tokens: an overload that ADL prefers to the generic template,
// which the compiler stopped inlining for this stream. API servers send
// minified JSON, so the first byte is almost always not whitespace.
RAPIDJSON_FORCEINLINE void SkipWhitespace(kcr::api::PaddedInsituStream& is) {
  char* p = is.src_;
  while (
      RAPIDJSON_UNLIKELY(*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) {
    ++p;
  }
  is.src_ = p;
}

// The reader's hook for scanning plain string bytes, a no-op for streams it
// has no specialization of.
template <>
template <>
inline void
GenericReader<UTF8<>, UTF8<>, CrtAllocator>::ScanCopyUnescapedString<
    kcr::api::PaddedInsituStream, kcr::api::PaddedInsituStream>(
    kcr::api::PaddedInsituStream& is, kcr::api::PaddedInsituStream&) {
  kcr::api::ScanPlainString(is);
}

}  // namespace rapidjson

namespace kcr {
namespace api {
namespace {

// The allocator for the stacks of readers and documents: CrtAllocator has
// no state, so one shared instance saves each of them allocating its own.
rapidjson::CrtAllocator& StackAllocator() {
  static rapidjson::CrtAllocator allocator;
  return allocator;
}

// Parses `text` in situ into `handler` with RapidJSON's fastest safe
// reader for its shape: the recursive one without UTF-8 validation when
// nesting cannot exceed the count of '[' and '{' bytes and pure ASCII needs
// no validation; otherwise the iterative, validating one, which never
// recurses. Numbers parse to the nearest double, so reading an object and
// writing it back never changes a value.
template <typename Handler>
rapidjson::ParseResult ParseScratch(const InputShape& shape, char* text,
                                    Handler& handler) {
  constexpr unsigned kInsitu = rapidjson::kParseInsituFlag;
  constexpr unsigned kIterative = rapidjson::kParseIterativeFlag;
  constexpr unsigned kValidate = rapidjson::kParseValidateEncodingFlag;
  constexpr unsigned kExact = rapidjson::kParseFullPrecisionFlag;
  PaddedInsituStream stream(text);
  rapidjson::Reader reader(&StackAllocator());
  if (shape.brackets <= kMaxJsonDepth) {
    if (shape.ascii) return reader.Parse<kInsitu | kExact>(stream, handler);
    return reader.Parse<kInsitu | kExact | kValidate>(stream, handler);
  }
  if (shape.ascii) {
    return reader.Parse<kInsitu | kExact | kIterative>(stream, handler);
  }
  return reader.Parse<kInsitu | kExact | kIterative | kValidate>(stream,
                                                                 handler);
}

// The one-pass parse: forwards the reader's events to a Document building
// the scratch tree, leaving out metadata.managedFields when stripping (so
// they are never built), and plans the Object's arena as the events go by,
// in the order Emit will replay the tree (pre-order, as MakePlan walks).
// "metadata" is the root's first member of that name, as MetadataOf finds.
class ScratchBuilder {
 public:
  ScratchBuilder(rapidjson::Document& doc, bool strip_managed_fields,
                 Plan* plan)
      : doc_(doc), strip_(strip_managed_fields), plan_(plan) {}

  // Whether an array or object (not skipped) nests deeper than
  // kMaxJsonDepth, which MakePlan would refuse.
  bool too_deep() const { return too_deep_; }

  bool Null() { return Scalar() ? doc_.Null() : true; }
  bool Bool(bool b) { return Scalar() ? doc_.Bool(b) : true; }
  bool Int(int i) { return Scalar() ? doc_.Int(i) : true; }
  bool Uint(unsigned u) { return Scalar() ? doc_.Uint(u) : true; }
  bool Int64(int64_t i) { return Scalar() ? doc_.Int64(i) : true; }
  bool Uint64(uint64_t u) { return Scalar() ? doc_.Uint64(u) : true; }
  bool Double(double d) { return Scalar() ? doc_.Double(d) : true; }
  bool RawNumber(const char* str, rapidjson::SizeType len, bool copy) {
    return Scalar() ? doc_.RawNumber(str, len, copy) : true;
  }
  bool String(const char* str, rapidjson::SizeType len, bool copy) {
    if (!Scalar()) return true;
    PlanString(str, len);
    return doc_.String(str, len, copy);
  }
  bool Key(const char* str, rapidjson::SizeType len, bool copy) {
    if (skip_depth_ != 0) return true;
    const std::string_view key(str, len);
    if (depth_ == 1 && !seen_metadata_ && key == "metadata") {
      seen_metadata_ = true;
      metadata_next_ = true;
    } else if (strip_ && depth_ == metadata_depth_ && key == "managedFields") {
      ++skipped_members_;
      skip_next_ = true;
      return true;
    }
    PlanString(str, len);
    return doc_.Key(str, len, copy);
  }
  bool StartObject() {
    if (!Start()) return true;
    if (metadata_next_) metadata_depth_ = depth_;
    metadata_next_ = false;
    return doc_.StartObject();
  }
  bool EndObject(rapidjson::SizeType count) {
    if (!End()) return true;
    if (depth_ + 1 == metadata_depth_) {
      metadata_depth_ = -1;  // metadata is closed and never reopens
      count -= skipped_members_;
    }
    plan_->node_bytes += object_internal::Align(count * sizeof(Value::Member));
    return doc_.EndObject(count);
  }
  bool StartArray() {
    if (!Start()) return true;
    metadata_next_ = false;
    return doc_.StartArray();
  }
  bool EndArray(rapidjson::SizeType count) {
    if (!End()) return true;
    plan_->node_bytes += object_internal::Align(count * sizeof(Value));
    return doc_.EndArray(count);
  }

 private:
  // A scalar value: false when it is left out.
  bool Scalar() {
    metadata_next_ = false;
    if (skip_depth_ != 0) return false;
    if (skip_next_) {
      skip_next_ = false;
      return false;
    }
    return true;
  }
  // An array or object opens: false when it is left out.
  bool Start() {
    ++depth_;
    if (skip_depth_ != 0) return false;
    if (skip_next_) {
      skip_next_ = false;
      skip_depth_ = depth_;
      return false;
    }
    if (depth_ > kMaxJsonDepth) too_deep_ = true;
    return true;
  }
  // An array or object closes: false when it was left out.
  bool End() {
    const int depth = depth_--;
    if (skip_depth_ == 0) return true;
    if (depth == skip_depth_) skip_depth_ = 0;
    return false;
  }
  void PlanString(const char* str, rapidjson::SizeType len) {
    object_internal::PlanString(std::string_view(str, len), plan_);
  }

  rapidjson::Document& doc_;
  const bool strip_;
  Plan* const plan_;
  int depth_ = 0;            // open arrays and objects
  int metadata_depth_ = -1;  // depth_ inside metadata, while it is open
  int skip_depth_ = 0;       // depth_ of the container being left out, or 0
  rapidjson::SizeType skipped_members_ = 0;  // of metadata
  bool seen_metadata_ = false;
  bool metadata_next_ = false;  // the next value is metadata's
  bool skip_next_ = false;      // the next value is left out
  bool too_deep_ = false;
};

}  // namespace

// ---------------------------------------------------------------------------
// StringMapView

StringMapView::value_type StringMapView::iterator::operator*() const {
  return {StringOf(it_->name), StringOf(it_->value)};
}

std::optional<std::string_view> StringMapView::Get(std::string_view key) const {
  if (map_ == nullptr) return std::nullopt;
  auto it = FindKey(*map_, key);
  if (it == map_->MemberEnd()) return std::nullopt;
  return StringOf(it->value);
}

StringMapView::iterator StringMapView::begin() const {
  return map_ == nullptr ? iterator() : iterator(map_->MemberBegin());
}

StringMapView::iterator StringMapView::end() const {
  return map_ == nullptr ? iterator() : iterator(map_->MemberEnd());
}

std::map<std::string, std::string> StringMapView::ToMap() const {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : *this) out.emplace(k, v);
  return out;
}

// ---------------------------------------------------------------------------
// Object

absl::StatusOr<ObjectPtr> Object::Parse(std::string_view json,
                                        const ParseOptions& options) {
  // JSON text never holds a raw NUL; refusing it here lets the in-situ
  // parser treat NUL as the end of input.
  const InputShape shape = Inspect(json);
  if (shape.has_nul) return ParseInTwoPasses(json, options);
  // A lone surrogate escape is repaired after parsing, which changes
  // strings the plan has already placed: rare, left to the two passes.
  if (MayHoldSurrogateEscape(json)) return ParseInTwoPasses(json, options);
  Scratch& scratch = ThreadScratch();
  char* const text = scratch.CopyText(json);
  scratch.pool.Clear();
  Plan& plan = scratch.plan;
  plan.Clear();
  rapidjson::Document doc(&scratch.pool, kDocumentStack, &StackAllocator());
  ScratchBuilder builder(doc, options.strip_managed_fields, &plan);
  rapidjson::ParseResult result;
  auto generator = [&](rapidjson::Document&) {
    result = ParseScratch(shape, text, builder);
    return !result.IsError();
  };
  doc.Populate(generator);
  // Every problem (malformed text, a wrong type, nesting too deep) is
  // reported by the two-pass path, which says where it is.
  if (result.IsError() || builder.too_deep() || !Validate(doc).ok()) {
    return ParseInTwoPasses(json, options);
  }
  return Build(doc, /*skip=*/nullptr, plan);
}

absl::StatusOr<ObjectPtr> Object::ParseInTwoPasses(
    std::string_view json, const ParseOptions& options) {
  const InputShape shape = Inspect(json);
  if (shape.has_nul) {
    const char* nul =
        static_cast<const char*>(std::memchr(json.data(), '\0', json.size()));
    return Invalid(absl::StrCat("invalid JSON at offset ", nul - json.data(),
                                ": NUL byte in input."));
  }
  Scratch& scratch = ThreadScratch();
  char* const text = scratch.CopyText(json);
  scratch.pool.Clear();
  // The plan of an earlier parse views strings of the text and pool just
  // replaced: placing strings against it would read freed memory.
  scratch.plan.Clear();
  rapidjson::Document doc(&scratch.pool, kDocumentStack, &StackAllocator());
  // The whole tree this time (FromValue strips), through the same reader
  // instances as the one-pass parse: one set of them keeps the code small.
  ScratchBuilder builder(doc, /*strip_managed_fields=*/false, &scratch.plan);
  rapidjson::ParseResult result;
  auto generator = [&](rapidjson::Document&) {
    result = ParseScratch(shape, text, builder);
    return !result.IsError();
  };
  doc.Populate(generator);
  if (result.IsError()) {
    return Invalid(absl::StrCat("invalid JSON at offset ", result.Offset(),
                                ": ",
                                rapidjson::GetParseError_En(result.Code())));
  }
  if (MayHoldSurrogateEscape(json)) ReplaceLoneSurrogates(doc);
  absl::StatusOr<ObjectPtr> object = FromValue(doc, options);
  if (object.ok() ||
      object.status().code() != absl::StatusCode::kInvalidArgument) {
    return object;
  }
  // Say where in the text the problem is: the failing value, the object
  // that lacks a required member, or the first array or object too deep.
  ErrorSite site;
  const std::optional<size_t> offset =
      !Validate(doc, &site).ok()
          ? SiteLocator(json, site).Run()
          : SiteLocator(json, options.strip_managed_fields).Run();
  if (!offset.has_value()) return object.status();
  return Invalid(absl::StrCat(
      object.status().message(),
      site.missing ? " from the object at offset " : " at offset ", *offset));
}

absl::StatusOr<ObjectPtr> Object::FromValue(const Value& value,
                                            const ParseOptions& options) {
  if (absl::Status s = Validate(value); !s.ok()) return s;
  const Value* skip =
      options.strip_managed_fields ? MetadataOf(value) : nullptr;
  Plan& plan = ThreadScratch().plan;
  plan.Clear();
  if (absl::Status s = MakePlan(value, skip, &plan); !s.ok()) return s;
  return Build(value, skip, plan);
}

absl::StatusOr<ObjectPtr> Object::Build(const Value& value, const Value* skip,
                                        const Plan& plan) {
  const size_t pool_bytes = kPoolHeader + std::max<size_t>(plan.node_bytes, 8);
  const size_t arena_size = pool_bytes + plan.blob_bytes;
  if (arena_size > std::numeric_limits<uint32_t>::max()) {
    return Invalid("object too large: its tree needs more than 4 GiB");
  }
  auto object = std::make_shared<Object>(PrivateTag{});
  object->arena_size_ = static_cast<uint32_t>(arena_size);
  object->arena_.reset(new char[arena_size]);
  char* blob = object->arena_.get() + pool_bytes;
  for (const auto& [s, offset] : plan.offsets) {
    std::memcpy(blob + offset, s.data(), s.size());
    blob[offset + s.size()] = '\0';
  }
  // The pool is needed only while the tree is built: values hold no
  // allocator pointer, and an Object never allocates again. The plan sized
  // the arena for exactly this tree; should building ever need more, the
  // object is refused rather than kept with memory it does not account for.
  const size_t pool_capacity = pool_bytes - kPoolHeader;
  rapidjson::MemoryPoolAllocator<> pool(object->arena_.get(), pool_bytes,
                                        /*chunkSize=*/1024);
  rapidjson::Document doc(&pool, kDocumentStack, &StackAllocator());
  StringSink sink{&plan, blob, 0};
  bool ok = false;
  auto generator = [&](rapidjson::Document& handler) {
    ok = Emit(value, handler, skip, sink);
    return ok;
  };
  doc.Populate(generator);
  if (!ok) return absl::InternalError("copying the object tree failed");
  if (pool.Capacity() != pool_capacity) {
    return absl::InternalError("the object tree outgrew its planned size");
  }
  object->root_.Swap(doc);
  object->Index();
  return ObjectPtr(std::move(object));
}

namespace {

// What each hot field is: its key, and whether its value is an object
// (else a string). Indexed by Object::HotField.
struct HotFieldSpec {
  const char* key;
  bool is_object;
};
constexpr HotFieldSpec kHotFieldSpecs[] = {
    {"apiVersion", false}, {"kind", false},       {"name", false},
    {"namespace", false},  {"uid", false},        {"resourceVersion", false},
    {"labels", true},      {"annotations", true},
};

}  // namespace

Value::ConstMemberIterator Object::FindHot(HotField field) const {
  const HotFieldSpec& spec = kHotFieldSpecs[field];
  const Value& parent = HotParent(field);
  auto it = parent.FindMember(spec.key);
  if (it == parent.MemberEnd()) return it;
  const bool typed =
      spec.is_object ? it->value.IsObject() : it->value.IsString();
  return typed ? it : parent.MemberEnd();
}

const Value* Object::HotByKey(HotField field) const {
  auto it = FindHot(field);
  return it == HotParent(field).MemberEnd() ? nullptr : &it->value;
}

void Object::Index() {
  static_assert(std::size(kHotFieldSpecs) == kHotFields);
  metadata_ = &root_.FindMember("metadata")->value;  // Validate checked it
  for (int f = 0; f < kHotFields; ++f) {
    const auto field = static_cast<HotField>(f);
    const Value& parent = HotParent(field);
    auto it = FindHot(field);
    const size_t index = static_cast<size_t>(it - parent.MemberBegin());
    hot_[f] = it == parent.MemberEnd() ? kAbsent
              : index < kByKey         ? static_cast<uint16_t>(index)
                                       : kByKey;
  }
}

const Value* Object::MetadataMember(std::string_view key) const {
  auto it = FindKey(*metadata_, key);
  return it == metadata_->MemberEnd() ? nullptr : &it->value;
}

std::string_view Object::generate_name() const {
  const Value* v = MetadataMember("generateName");
  return v != nullptr && v->IsString() ? StringOf(*v) : std::string_view();
}

std::string_view Object::creation_timestamp() const {
  const Value* v = MetadataMember("creationTimestamp");
  return v != nullptr && v->IsString() ? StringOf(*v) : std::string_view();
}

std::string_view Object::deletion_timestamp() const {
  const Value* v = MetadataMember("deletionTimestamp");
  return v != nullptr && v->IsString() ? StringOf(*v) : std::string_view();
}

int64_t Object::generation() const {
  const Value* v = MetadataMember("generation");
  return v != nullptr && v->IsInt64() ? v->GetInt64() : 0;
}

std::string Object::Key() const {
  if (namespace_().empty()) return std::string(name());
  return absl::StrCat(ToAbsl(namespace_()), "/", ToAbsl(name()));
}

std::vector<OwnerReferenceView> Object::owner_references() const {
  std::vector<OwnerReferenceView> out;
  const Value* refs = MetadataMember("ownerReferences");
  if (refs == nullptr || !refs->IsArray()) return out;
  out.reserve(refs->Size());
  for (const Value& ref : refs->GetArray()) {
    OwnerReferenceView view;
    for (const auto& m : ref.GetObject()) {
      std::string_view key = StringOf(m.name);
      if (m.value.IsString()) {
        if (key == "apiVersion") view.api_version = StringOf(m.value);
        if (key == "kind") view.kind = StringOf(m.value);
        if (key == "name") view.name = StringOf(m.value);
        if (key == "uid") view.uid = StringOf(m.value);
      } else if (m.value.IsBool()) {
        if (key == "controller") view.controller = m.value.GetBool();
        if (key == "blockOwnerDeletion") {
          view.block_owner_deletion = m.value.GetBool();
        }
      }
    }
    out.push_back(view);
  }
  return out;
}

std::optional<OwnerReferenceView> Object::controller_reference() const {
  for (const OwnerReferenceView& ref : owner_references()) {
    if (ref.controller) return ref;
  }
  return std::nullopt;
}

std::vector<std::string_view> Object::finalizers() const {
  std::vector<std::string_view> out;
  const Value* list = MetadataMember("finalizers");
  if (list == nullptr || !list->IsArray()) return out;
  out.reserve(list->Size());
  for (const Value& f : list->GetArray()) out.push_back(StringOf(f));
  return out;
}

bool Object::HasFinalizer(std::string_view finalizer) const {
  const Value* list = MetadataMember("finalizers");
  if (list == nullptr || !list->IsArray()) return false;
  for (const Value& f : list->GetArray()) {
    if (StringOf(f) == finalizer) return true;
  }
  return false;
}

const Value* Object::Find(std::string_view json_pointer) const {
  return FindPointer(root_, json_pointer);
}

std::string Object::ToJson() const { return WriteJson(root_); }

size_t Object::SpaceUsed() const {
  return sizeof(Object) + kControlBlock + arena_size_;
}

ObjectBuilder Object::ToBuilder() const { return ObjectBuilder(*this); }

}  // namespace api
}  // namespace kcr
