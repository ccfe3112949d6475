// Object::Parse, Object::FromValue and the one allocation they build an
// Object in (api/object.h). The hot path is one pass: RapidJSON reads the
// text in situ, in a per-thread scratch buffer, into a scratch tree that
// leaves out metadata.managedFields and plans the Object's arena as it
// goes; Build then copies the tree into the arena. Anything unusual (a NUL
// byte, a lone surrogate escape, malformed text, a field of the wrong type,
// nesting too deep) takes the two-pass path, which also says where the
// problem is. Validation lives in api/internal/object_validation.h.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "absl/strings/str_cat.h"
#include "api/internal/arena_planner.h"
#include "api/internal/json_value.h"
#include "api/internal/object_validation.h"
#include "api/json_limits.h"
#include "api/object.h"
#include "rapidjson/error/en.h"
#include "rapidjson/reader.h"

namespace kcr {
namespace api {
namespace {

using object_internal::Emit;
using object_internal::ErrorSite;
using object_internal::Invalid;
using object_internal::kPoolHeader;
using object_internal::LocateSite;
using object_internal::LocateTooDeep;
using object_internal::MakePlan;
using object_internal::MayHoldSurrogateEscape;
using object_internal::MetadataOf;
using object_internal::Plan;
using object_internal::ReplaceLoneSurrogates;
using object_internal::StringSink;
using object_internal::Validate;
using rapidjson::Value;

// The stacks of the readers and documents that Parse runs: each parse
// takes one and frees it at its end (RapidJSON frees a document's stack
// after every Populate), and a stack grows past the thread cache of
// malloc. With one malloc arena (MALLOC_ARENA_MAX=1, as kcr's processes
// run) every such call takes the arena's lock, which the other parsing
// threads and the cache's thread then wait for (futex wake-ups were 9 % of
// a 150,000-pod list's CPU). So a thread keeps the few blocks it was given
// back and hands them out again: parsing in steady state calls malloc only
// for the objects it builds. RapidJSON's allocator concept: a static Free.
class RetainedStackAllocator {
 public:
  static const bool kNeedFree = true;

  void* Malloc(size_t size) {
    if (size == 0) return nullptr;
    Blocks& blocks = ThreadBlocks();
    for (size_t i = 0; i < blocks.count; ++i) {
      if (Capacity(blocks.free[i]) >= size) {
        char* block = blocks.free[i];
        blocks.free[i] = blocks.free[--blocks.count];
        return block;
      }
    }
    // Room to grow by RapidJSON's step (half again) without a new block.
    const size_t capacity = std::max<size_t>(size + size / 2, 1024);
    char* raw = static_cast<char*>(std::malloc(kHeader + capacity));
    if (raw == nullptr) return nullptr;
    std::memcpy(raw, &capacity, sizeof(capacity));
    return raw + kHeader;
  }
  void* Realloc(void* original, size_t original_size, size_t new_size) {
    if (original == nullptr) return Malloc(new_size);
    if (new_size == 0) {
      Free(original);
      return nullptr;
    }
    char* block = static_cast<char*>(original);
    if (new_size <= Capacity(block)) return block;
    void* grown = Malloc(new_size);
    if (grown == nullptr) return nullptr;
    std::memcpy(grown, block, std::min(original_size, new_size));
    Free(block);
    return grown;
  }
  static void Free(void* ptr) {
    if (ptr == nullptr) return;
    char* block = static_cast<char*>(ptr);
    Blocks& blocks = ThreadBlocks();
    if (blocks.count < kKept) {
      blocks.free[blocks.count++] = block;
      return;
    }
    // Keep the larger blocks: they are the ones a parse grows into.
    size_t smallest = 0;
    for (size_t i = 1; i < kKept; ++i) {
      if (Capacity(blocks.free[i]) < Capacity(blocks.free[smallest])) {
        smallest = i;
      }
    }
    if (Capacity(block) > Capacity(blocks.free[smallest])) {
      std::swap(block, blocks.free[smallest]);
    }
    std::free(block - kHeader);
  }

 private:
  // The block's capacity, before it (malloc's alignment kept).
  static constexpr size_t kHeader = 16;
  // A parse holds two stacks at once (the reader's and the document's).
  static constexpr size_t kKept = 4;
  struct Blocks {
    char* free[kKept] = {};
    size_t count = 0;
    ~Blocks() {
      for (size_t i = 0; i < count; ++i) std::free(free[i] - kHeader);
    }
  };
  static Blocks& ThreadBlocks() {
    thread_local Blocks blocks;
    return blocks;
  }
  static size_t Capacity(const char* block) {
    size_t capacity;
    std::memcpy(&capacity, block - kHeader, sizeof(capacity));
    return capacity;
  }
};

// The documents Parse builds trees with (in the scratch pool, or in an
// Object's arena), with stacks from RetainedStackAllocator.
using ScratchDocument =
    rapidjson::GenericDocument<rapidjson::UTF8<>,
                               rapidjson::MemoryPoolAllocator<>,
                               RetainedStackAllocator>;
using ScratchReader =
    rapidjson::GenericReader<rapidjson::UTF8<>, rapidjson::UTF8<>,
                             RetainedStackAllocator>;

// The allocator Build gives std::allocate_shared: it allocates the control
// block (with the Object in it) and the Object's arena after it, in one
// block, so that an Object costs one malloc and one free rather than two
// (each a take of the malloc arena's lock, shared by the parsing threads
// and the cache's) and one malloc header less. Build sets the arena's size
// just before, on its own thread, and reads where it went just after.
struct ArenaRequest {
  size_t bytes = 0;
  char* at = nullptr;
};
thread_local ArenaRequest arena_request;

template <typename T>
class ObjectAllocator {
 public:
  using value_type = T;
  ObjectAllocator() = default;
  template <typename U>
  ObjectAllocator(const ObjectAllocator<U>&) {}  // NOLINT: rebinding

  T* allocate(size_t n) {
    // The arena holds rapidjson values: aligned as malloc aligns.
    const size_t head = (n * sizeof(T) + 15) & ~size_t{15};
    char* block =
        static_cast<char*>(::operator new(head + arena_request.bytes));
    arena_request.at = block + head;
    return reinterpret_cast<T*>(block);
  }
  void deallocate(T* p, size_t) { ::operator delete(p); }

  template <typename U>
  bool operator==(const ObjectAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const ObjectAllocator<U>&) const {
    return false;
  }
};

// Per-thread scratch space for the first, in-situ parse.
constexpr size_t kScratchBytes = 64 * 1024;
// Zero bytes after the NUL of the in-situ text (PaddedInsituStream).
constexpr size_t kTextPadding = 16;
// A Document's initial stack (RapidJSON's default).
constexpr size_t kDocumentStack = 1024;

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

  // Copies `head` and then `json` into text, ready for the in-situ parse.
  char* CopyText(std::string_view json, std::string_view head = {}) {
    const size_t size = head.size() + json.size();
    const size_t need = size + 1 + kTextPadding;
    if (need > text_capacity) {
      text_capacity = std::max(need, 2 * text_capacity);
      text.reset(new char[text_capacity]);
    }
    if (!head.empty()) std::memcpy(text.get(), head.data(), head.size());
    std::memcpy(text.get() + head.size(), json.data(), json.size());
    std::memset(text.get() + size, 0, 1 + kTextPadding);
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
inline void GenericReader<UTF8<>, UTF8<>, kcr::api::RetainedStackAllocator>::
    ScanCopyUnescapedString<kcr::api::PaddedInsituStream,
                            kcr::api::PaddedInsituStream>(
        kcr::api::PaddedInsituStream& is, kcr::api::PaddedInsituStream&) {
  kcr::api::ScanPlainString(is);
}

}  // namespace rapidjson

namespace kcr {
namespace api {
namespace {

// The allocator for the stacks of readers and documents: it has no state,
// so one shared instance saves each of them allocating its own.
RetainedStackAllocator& StackAllocator() {
  static RetainedStackAllocator allocator;
  return allocator;
}

// Parses `text` in situ into `handler` with RapidJSON's fastest safe
// reader for its shape: the recursive one without UTF-8 validation when
// nesting cannot exceed the count of '[' and '{' bytes and pure ASCII needs
// no validation; otherwise the iterative, validating one, which never
// recurses. Numbers parse to the nearest double, so reading an object and
// writing it back never changes a value.
// `*consumed` is where the reader stopped: the text's end, or its first
// NUL byte.
template <typename Handler>
rapidjson::ParseResult ParseScratch(bool ascii, bool recursive, char* text,
                                    Handler& handler,
                                    size_t* consumed = nullptr) {
  constexpr unsigned kInsitu = rapidjson::kParseInsituFlag;
  constexpr unsigned kIterative = rapidjson::kParseIterativeFlag;
  constexpr unsigned kValidate = rapidjson::kParseValidateEncodingFlag;
  constexpr unsigned kExact = rapidjson::kParseFullPrecisionFlag;
  PaddedInsituStream stream(text);
  ScratchReader reader(&StackAllocator());
  rapidjson::ParseResult result;
  if (recursive) {
    result = ascii
                 ? reader.Parse<kInsitu | kExact>(stream, handler)
                 : reader.Parse<kInsitu | kExact | kValidate>(stream, handler);
  } else if (ascii) {
    result = reader.Parse<kInsitu | kExact | kIterative>(stream, handler);
  } else {
    result = reader.Parse<kInsitu | kExact | kIterative | kValidate>(stream,
                                                                     handler);
  }
  if (consumed != nullptr) *consumed = stream.Tell();
  return result;
}

template <typename Handler>
rapidjson::ParseResult ParseScratch(const InputShape& shape, char* text,
                                    Handler& handler) {
  return ParseScratch(shape.ascii, shape.brackets <= kMaxJsonDepth, text,
                      handler);
}

// The one-pass parse: forwards the reader's events to a Document building
// the scratch tree, leaving out metadata.managedFields when stripping (so
// they are never built), and plans the Object's arena as the events go by,
// in the order Emit will replay the tree (pre-order, as MakePlan walks).
// "metadata" is the root's first member of that name, as MetadataOf finds.
class ScratchBuilder {
 public:
  ScratchBuilder(ScratchDocument& doc, bool strip_managed_fields, Plan* plan)
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

  ScratchDocument& doc_;
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

absl::StatusOr<ObjectPtr> Object::Parse(std::string_view json,
                                        const ParseOptions& options) {
  // JSON text never holds a raw NUL; refusing it here lets the in-situ
  // parser treat NUL as the end of input.
  const InputShape shape = Inspect(json);
  if (shape.has_nul) return ParseInTwoPasses(json, options);
  // A lone surrogate escape is repaired after parsing, which changes
  // strings the plan has already placed: rare, left to the two passes.
  if (MayHoldSurrogateEscape(json)) return ParseInTwoPasses(json, options);
  return ParseInOnePass(/*head=*/{}, json, shape.ascii,
                        shape.brackets <= kMaxJsonDepth, options);
}

absl::StatusOr<ObjectPtr> Object::ParseScanned(std::string_view head,
                                               std::string_view json,
                                               const ScannedText& scanned,
                                               const ParseOptions& options) {
  if (scanned.unicode_escape &&
      (MayHoldSurrogateEscape(head) || MayHoldSurrogateEscape(json))) {
    return ParseInTwoPasses(std::string(head).append(json), options);
  }
  return ParseInOnePass(head, json, scanned.ascii, scanned.nesting_bounded,
                        options);
}

absl::StatusOr<ObjectPtr> Object::ParseInOnePass(std::string_view head,
                                                 std::string_view json,
                                                 bool ascii, bool recursive,
                                                 const ParseOptions& options) {
  Scratch& scratch = ThreadScratch();
  char* const text = scratch.CopyText(json, head);
  scratch.pool.Clear();
  Plan& plan = scratch.plan;
  plan.Clear();
  ScratchDocument doc(&scratch.pool, kDocumentStack, &StackAllocator());
  ScratchBuilder builder(doc, options.strip_managed_fields, &plan);
  rapidjson::ParseResult result;
  size_t consumed = 0;
  auto generator = [&](ScratchDocument&) {
    result = ParseScratch(ascii, recursive, text, builder, &consumed);
    return !result.IsError();
  };
  doc.Populate(generator);
  // Every problem (malformed text, a NUL byte, which ends the in-situ
  // text early, a wrong type, nesting too deep) is reported by the
  // two-pass path, which says where it is.
  if (result.IsError() || consumed != head.size() + json.size() ||
      builder.too_deep() || !Validate(doc).ok()) {
    if (head.empty()) return ParseInTwoPasses(json, options);
    return ParseInTwoPasses(std::string(head).append(json), options);
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
  ScratchDocument doc(&scratch.pool, kDocumentStack, &StackAllocator());
  // The whole tree this time (FromValue strips), through the same reader
  // instances as the one-pass parse: one set of them keeps the code small.
  ScratchBuilder builder(doc, /*strip_managed_fields=*/false, &scratch.plan);
  rapidjson::ParseResult result;
  auto generator = [&](ScratchDocument&) {
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
          ? LocateSite(json, site)
          : LocateTooDeep(json, options.strip_managed_fields);
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
  arena_request.bytes = arena_size;
  auto object =
      std::allocate_shared<Object>(ObjectAllocator<Object>(), PrivateTag{});
  object->arena_ = arena_request.at;
  object->arena_size_ = static_cast<uint32_t>(arena_size);
  char* blob = object->arena_ + pool_bytes;
  for (const auto& [s, offset] : plan.offsets) {
    std::memcpy(blob + offset, s.data(), s.size());
    blob[offset + s.size()] = '\0';
  }
  // The pool is needed only while the tree is built: values hold no
  // allocator pointer, and an Object never allocates again. The plan sized
  // the arena for exactly this tree; should building ever need more, the
  // object is refused rather than kept with memory it does not account for.
  const size_t pool_capacity = pool_bytes - kPoolHeader;
  rapidjson::MemoryPoolAllocator<> pool(object->arena_, pool_bytes,
                                        /*chunkSize=*/1024);
  ScratchDocument doc(&pool, kDocumentStack, &StackAllocator());
  StringSink sink{&plan, blob, 0};
  bool ok = false;
  auto generator = [&](ScratchDocument& handler) {
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

}  // namespace api
}  // namespace kcr
