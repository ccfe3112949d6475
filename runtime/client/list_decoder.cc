#include "runtime/client/list_decoder.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/json/json_util.h"
#include "api/json_limits.h"
#include "base/string_view.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace kcr::client {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Bytes that end a run of plain bytes while scanning an item: inside a
// string (kStringStop) and outside (kStructural).
// Bytes of 0x80 and more stop both, so that the loop sees every non-ASCII
// byte (FramedItems::Item::non_ascii).
constexpr std::array<bool, 256> MakeTable(std::string_view bytes) {
  std::array<bool, 256> table{};
  for (char c : bytes) table[static_cast<unsigned char>(c)] = true;
  for (size_t c = 0x80; c < 256; ++c) table[c] = true;
  return table;
}
constexpr std::array<bool, 256> kStringStop = MakeTable("\"\\");
constexpr std::array<bool, 256> kStructural = MakeTable("\"{}[],");

bool IsHigh(char c) { return static_cast<unsigned char>(c) >= 0x80; }

// The first byte in [i, n) inside a string that ends a run: '"', '\\' or
// a non-ASCII byte.
// (The byte-at-a-time loop's; whole blocks go through ScanBlock.)
size_t SkipStringBytes(const char* data, size_t i, size_t n) {
  while (i < n && !kStringStop[static_cast<unsigned char>(data[i])]) ++i;
  return i;
}

// The first structural or non-ASCII byte in [i, n) outside strings.
size_t SkipPlainBytes(const char* data, size_t i, size_t n) {
  while (i < n && !kStructural[static_cast<unsigned char>(data[i])]) ++i;
  return i;
}

// Bit k of the result: the parity of bits 0..k of `m`.
uint64_t PrefixXor(uint64_t m) {
  m ^= m << 1;
  m ^= m << 2;
  m ^= m << 4;
  m ^= m << 8;
  m ^= m << 16;
  m ^= m << 32;
  return m;
}

// The number of bits set, inline (x86-64's baseline has no popcnt
// instruction, and the compiler's fallback is a library call).
int PopCount(uint64_t m) {
  m = m - ((m >> 1) & 0x5555555555555555ULL);
  m = (m & 0x3333333333333333ULL) + ((m >> 2) & 0x3333333333333333ULL);
  m = (m + (m >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return static_cast<int>((m * 0x0101010101010101ULL) >> 56);
}

std::string Shown(char c) {
  if (c >= 0x20 && c < 0x7f) return absl::StrCat("'", std::string(1, c), "'");
  return absl::StrCat(
      "byte 0x", absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
}

// "\"name\":\"value\"," with `value` escaped as JSON.
std::string Member(std::string_view name, std::string_view value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
  return absl::StrCat("\"", ToAbsl(name), "\":", buffer.GetString(), ",");
}

}  // namespace

char* FramedBytes::Extend(size_t n) {
  if (n > capacity_ - size_) reserve(std::max(size_ + n, 2 * capacity_));
  char* at = data_.get() + size_;
  size_ += n;
  return at;
}

void FramedBytes::reserve(size_t n) {
  if (n <= capacity_) return;
  std::unique_ptr<char[]> grown(new char[n]);
  if (size_ > 0) std::memcpy(grown.get(), data_.get(), size_);
  data_ = std::move(grown);
  capacity_ = n;
}

ListFramer::ListFramer(size_t max_item_bytes)
    : max_item_bytes_(max_item_bytes), use_avx2_(Avx2BlockScanAvailable()) {}

absl::Status ListFramer::Fail(absl::Status status) {
  error_ = status;
  item_.clear();
  item_.shrink_to_fit();
  value_.clear();
  held_.Clear();
  return status;
}

absl::Status ListFramer::Error(int64_t at, std::string_view what) {
  return Fail(absl::InvalidArgumentError(
      absl::StrCat("list response: ", ToAbsl(what), " at offset ", at)));
}

absl::Status ListFramer::Feed(std::string_view chunk, FramedItems* out) {
  in_place_ = false;
  absl::Status status = Scan(chunk, out);
  // Also after an error: the items cut out before it are handed over.
  out->kind_member = kind_member_;
  out->api_version_member = api_version_member_;
  return status;
}

absl::Status ListFramer::FeedInPlace(FramedItems* out, size_t from) {
  in_place_ = true;
  chunk_base_ = from;
  absl::Status status =
      Scan(std::string_view(out->bytes.data() + from, out->bytes.size() - from),
           out);
  // Also after an error: the items cut out before it are handed over.
  out->kind_member = kind_member_;
  out->api_version_member = api_version_member_;
  return status;
}

absl::Status ListFramer::Scan(std::string_view chunk, FramedItems* out) {
  if (!error_.ok()) return error_;
  const char* data = chunk.data();
  const size_t n = chunk.size();
  size_t i = 0;
  while (i < n) {
    // In place, the chunk moves when held items are released into
    // out->bytes (EndValue, when the list's kind arrives after them).
    if (in_place_) data = out->bytes.data() + chunk_base_;
    const char c = data[i];
    const int64_t at = offset_ + static_cast<int64_t>(i);
    switch (state_) {
      case State::kStart:
        if (IsSpace(c)) break;
        if (c != '{') {
          return Error(at, absl::StrCat("the body is not a JSON object (",
                                        Shown(c), ")"));
        }
        state_ = State::kFirstKey;
        break;
      case State::kFirstKey:
      case State::kKey:
        if (IsSpace(c)) break;
        if (c == '"') {
          key_.clear();
          key_escaped_ = false;
          escaped_ = false;
          state_ = State::kInKey;
        } else if (c == '}' && state_ == State::kFirstKey) {
          state_ = State::kDone;
        } else {
          return Error(
              at, absl::StrCat("expected a member name, found ", Shown(c)));
        }
        break;
      case State::kInKey:
        if (escaped_) {
          escaped_ = false;
        } else if (c == '\\') {
          escaped_ = true;
          key_escaped_ = true;
        } else if (c == '"') {
          if (key_escaped_) {
            // Resolve the escapes; a well-formed body never needs this.
            rapidjson::Document doc;
            if (!json::ParseJson(absl::StrCat("\"", key_, "\""), &doc).ok() ||
                !doc.IsString()) {
              return Error(at, "a member name is not a valid JSON string");
            }
            key_.assign(doc.GetString(), doc.GetStringLength());
          }
          state_ = State::kColon;
          break;
        }
        if (key_.size() >= max_item_bytes_) {
          return Fail(absl::ResourceExhaustedError(absl::StrCat(
              "list response: a member name at offset ", at,
              " exceeds the limit of ", max_item_bytes_, " bytes")));
        }
        key_.push_back(c);
        break;
      case State::kColon:
        if (IsSpace(c)) break;
        if (c != ':') {
          return Error(at,
                       absl::StrCat("expected ':' after a member name, found ",
                                    Shown(c)));
        }
        state_ = State::kValue;
        break;
      case State::kValue:
        if (IsSpace(c)) break;
        if (key_ == "items" && c == '[') {
          if (seen_items_) return Error(at, "a second \"items\"");
          seen_items_ = true;
          state_ = State::kItemsFirst;
          break;
        }
        depth_ = 0;
        in_string_ = false;
        escaped_ = false;
        scalar_ = false;
        value_.clear();
        value_offset_ = at;
        state_ = State::kInValue;
        continue;  // ScanValue reads the value's first byte
      case State::kInValue: {
        absl::StatusOr<size_t> next = ScanValue(data, i, n, out);
        if (!next.ok()) return next.status();
        i = *next;
        continue;
      }
      case State::kItemsFirst:
      case State::kItem:
        if (IsSpace(c)) break;
        if (c == ']' && state_ == State::kItemsFirst) {
          state_ = State::kAfterValue;
          break;
        }
        if (c != '{') {
          return Error(at,
                       absl::StrCat("items[", items_framed_,
                                    "] is not a JSON object (", Shown(c), ")"));
        }
        current_ = FramedItems::Item();
        current_.index = items_framed_;
        current_.offset = at;
        current_.needs_kind = true;
        current_.needs_api_version = true;
        depth_ = 0;
        in_string_ = false;
        escaped_ = false;
        expect_key_ = false;
        in_top_key_ = false;
        item_.clear();
        item_start_ = chunk_base_ + i;
        state_ = State::kInItem;
        continue;  // ScanItem reads the '{'
      case State::kInItem: {
        absl::StatusOr<size_t> next = ScanItem(data, i, n, out);
        if (!next.ok()) return next.status();
        i = *next;
        continue;
      }
      case State::kItemsNext:
        if (IsSpace(c)) break;
        if (c == ',') {
          state_ = State::kItem;
        } else if (c == ']') {
          state_ = State::kAfterValue;
        } else {
          return Error(at,
                       absl::StrCat("expected ',' or ']' after items[",
                                    items_framed_ - 1, "], found ", Shown(c)));
        }
        break;
      case State::kAfterValue:
        if (IsSpace(c)) break;
        if (c == ',') {
          state_ = State::kKey;
        } else if (c == '}') {
          state_ = State::kDone;
        } else {
          return Error(
              at, absl::StrCat("expected ',' or '}' after member \"",
                               key_.substr(0, 64), "\", found ", Shown(c)));
        }
        break;
      case State::kDone:
        if (IsSpace(c)) break;
        return Error(at, absl::StrCat("data after the end of the list (",
                                      Shown(c), ")"));
    }
    ++i;
  }
  offset_ += static_cast<int64_t>(n);
  return absl::OkStatus();
}

#ifdef __SSE2__
namespace {

// Bit k of the result: byte k of the 64 in v0..v3 equals the needle's.
// Written out, not as a loop over an array: the compiler (gcc -O2) kept
// such a loop and its vectors on the stack, which made the framer's
// masks cost twice what the compares do.
inline uint64_t Mask64(__m128i v0, __m128i v1, __m128i v2, __m128i v3,
                       __m128i needle) {
  const auto bits = [needle](__m128i v) {
    return static_cast<uint64_t>(
        static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, needle))));
  };
  return bits(v0) | (bits(v1) << 16) | (bits(v2) << 32) | (bits(v3) << 48);
}

// The baseline's block (x86-64 always has SSE2).
struct Sse2Block {
  explicit Sse2Block(const char* p)
      : v0(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
        v1(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16))),
        v2(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 32))),
        v3(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 48))) {}
  bool High() const {
    return _mm_movemask_epi8(
               _mm_or_si128(_mm_or_si128(v0, v1), _mm_or_si128(v2, v3))) != 0;
  }
  uint64_t Eq(char c) const { return Mask64(v0, v1, v2, v3, _mm_set1_epi8(c)); }
  // '{' and '[' (0x7b, 0x5b) are the only bytes that are 0x7b with bit
  // 0x20 set; '}' and ']' likewise 0x7d.
  void Brackets(uint64_t* opens, uint64_t* closes) const {
    const __m128i k20 = _mm_set1_epi8(0x20);
    const __m128i f0 = _mm_or_si128(v0, k20);
    const __m128i f1 = _mm_or_si128(v1, k20);
    const __m128i f2 = _mm_or_si128(v2, k20);
    const __m128i f3 = _mm_or_si128(v3, k20);
    *opens = Mask64(f0, f1, f2, f3, _mm_set1_epi8(0x7b));
    *closes = Mask64(f0, f1, f2, f3, _mm_set1_epi8(0x7d));
  }
  static uint64_t PrefixXor(uint64_t m) { return kcr::client::PrefixXor(m); }
  static int PopCount(uint64_t m) { return kcr::client::PopCount(m); }

  __m128i v0, v1, v2, v3;
};

}  // namespace

#include "runtime/client/list_framer_block.inc"

size_t ListFramer::ScanBlock(const char* p, bool* item_end, bool* too_deep) {
  return ScanBlockWith<Sse2Block>(p, item_end, too_deep);
}
#endif  // __SSE2__

bool ListFramer::Avx2BlockScanAvailable() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool available = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul") &&
           __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
           __builtin_cpu_supports("popcnt");
  }();
  return available;
#else
  return false;
#endif
}

absl::Status ListFramer::TooDeep(size_t i) {
  return Error(offset_ + static_cast<int64_t>(i),
               absl::StrCat("items[", current_.index, "] nests deeper than ",
                            api::kMaxJsonDepth, " levels"));
}

void ListFramer::CarryOver(FramedItems* from, FramedItems* to) {
  if (!in_place_ || state_ != State::kInItem || !error_.ok()) return;
  const size_t at = to->bytes.size();
  to->bytes.append(from->bytes.data() + item_start_,
                   from->bytes.size() - item_start_);
  from->bytes.Truncate(item_start_);
  item_start_ = at;
}

absl::StatusOr<size_t> ListFramer::EndItem(const char* data, size_t start,
                                           size_t i, FramedItems* out) {
  const size_t size =
      in_place_ ? chunk_base_ + i - item_start_ : item_.size() + (i - start);
  if (size > max_item_bytes_) {
    return Fail(absl::ResourceExhaustedError(absl::StrCat(
        "list response: items[", current_.index, "] at offset ",
        current_.offset, " exceeds the limit of ", max_item_bytes_, " bytes")));
  }
  const bool hold = !held_.empty() || (current_.needs_kind && !seen_kind_) ||
                    (current_.needs_api_version && !seen_api_version_) ||
                    (current_.check_type && !(seen_kind_ && seen_api_version_));
  FramedItems* dst = hold ? &held_ : out;
  current_.size = size;
  if (in_place_ && !hold) {
    current_.begin = item_start_;  // where it lies
  } else {
    current_.begin = dst->bytes.size();
    if (in_place_) {
      dst->bytes.append(out->bytes.data() + item_start_, size);
    } else {
      dst->bytes.append(item_);
      dst->bytes.append(data + start, i - start);
    }
  }
  dst->items.push_back(current_);
  item_.clear();
  ++items_framed_;
  state_ = State::kItemsNext;
  return i;
}

absl::StatusOr<size_t> ListFramer::ScanItem(const char* data, size_t i,
                                            size_t n, FramedItems* out) {
  const size_t start = i;
  while (i < n) {
    // Where the byte-at-a-time loop below stops: the chunk's end, or the
    // end of a block the vector scan left to it.
    size_t limit = n;
#ifdef __SSE2__
    if (!in_top_key_ && n - i >= kBlock) {
      bool item_end = false;
      bool too_deep = false;
      const size_t used = use_avx2_
                              ? ScanBlockAvx2(data + i, &item_end, &too_deep)
                              : ScanBlock(data + i, &item_end, &too_deep);
      if (used > 0) {
        i += used;
        if (in_top_key_) top_key_.clear();
        if (too_deep) return TooDeep(i - 1);
        if (item_end) return EndItem(data, start, i, out);
        continue;
      }
      limit = i + kBlock;
    }
#endif
    while (i < limit) {
      if (in_string_) {
        if (escaped_) {
          escaped_ = false;
          if (data[i] == 'u') current_.unicode_escape = true;
          if (IsHigh(data[i])) current_.non_ascii = true;
          ++i;
          continue;
        }
        if (!in_top_key_) {
          i = SkipStringBytes(data, i, limit);
          if (i == limit) break;
        }
        const char c = data[i++];
        if (IsHigh(c)) current_.non_ascii = true;
        if (c == '\\') {
          escaped_ = true;
          if (in_top_key_) current_.check_type = true;
        } else if (c == '"') {
          in_string_ = false;
          if (in_top_key_) {
            in_top_key_ = false;
            // As string_views: lengths first, then an inline compare (a
            // std::string against a C string calls strlen and memcmp, for
            // every top-level key of every item).
            const std::string_view key = top_key_;
            if (key == std::string_view("kind")) current_.needs_kind = false;
            if (key == std::string_view("apiVersion")) {
              current_.needs_api_version = false;
            }
            break;  // back to the vector scan
          }
        } else if (in_top_key_ && top_key_.size() < 16) {
          // Longer keys cannot be "kind" or "apiVersion" even cut short.
          top_key_.push_back(c);
        }
        continue;
      }
      i = SkipPlainBytes(data, i, limit);
      if (i == limit) break;
      const char c = data[i++];
      switch (c) {
        case '"':
          in_string_ = true;
          if (depth_ == 1 && expect_key_) {
            expect_key_ = false;
            in_top_key_ = true;
            top_key_.clear();
          }
          break;
        case '{':
        case '[':
          if (++depth_ > api::kMaxJsonDepth) return TooDeep(i - 1);
          if (depth_ == 1) expect_key_ = true;
          break;
        case '}':
        case ']':
          if (--depth_ == 0) return EndItem(data, start, i, out);
          break;
        case ',':
          if (depth_ == 1) expect_key_ = true;
          break;
        default:
          current_.non_ascii = true;  // the only other bytes that stop
          break;
      }
    }
  }
  const size_t size =
      in_place_ ? chunk_base_ + n - item_start_ : item_.size() + (n - start);
  if (size > max_item_bytes_) {
    return Fail(absl::ResourceExhaustedError(absl::StrCat(
        "list response: items[", current_.index, "] at offset ",
        current_.offset, " exceeds the limit of ", max_item_bytes_, " bytes")));
  }
  if (!in_place_) item_.append(data + start, n - start);
  return n;
}

absl::StatusOr<size_t> ListFramer::ScanValue(const char* data, size_t i,
                                             size_t n, FramedItems* out) {
  const size_t start = i;
  bool done = false;
  if (depth_ == 0 && !in_string_ && !scalar_ && value_.empty()) {
    // The value's first byte says what it is.
    const char c = data[i];
    if (c != '{' && c != '[' && c != '"') scalar_ = true;
  }
  while (i < n && !done) {
    const char c = data[i];
    if (scalar_) {
      if (IsSpace(c) || c == ',' || c == '}' || c == ']') {
        done = true;  // not part of the value
        break;
      }
      ++i;
      continue;
    }
    ++i;
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
        if (depth_ == 0) done = true;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string_ = true;
        break;
      case '{':
      case '[':
        // The list's own object is one level above.
        if (++depth_ > api::kMaxJsonDepth) {
          return Error(offset_ + static_cast<int64_t>(i - 1),
                       absl::StrCat("member \"", key_.substr(0, 64),
                                    "\" nests deeper than ", api::kMaxJsonDepth,
                                    " levels"));
        }
        break;
      case '}':
      case ']':
        if (--depth_ <= 0) done = true;
        break;
      default:
        break;
    }
  }
  if (value_.size() + (i - start) > max_item_bytes_) {
    return Fail(absl::ResourceExhaustedError(absl::StrCat(
        "list response: member \"", key_.substr(0, 64), "\" at offset ",
        value_offset_, " exceeds the limit of ", max_item_bytes_, " bytes")));
  }
  value_.append(data + start, i - start);
  if (done) {
    absl::Status status = EndValue(out);
    if (!status.ok()) return status;
  }
  return i;
}

absl::Status ListFramer::EndValue(FramedItems* out) {
  rapidjson::Document doc;
  if (absl::Status s = json::ParseJson(value_, &doc); !s.ok()) {
    return Error(value_offset_,
                 absl::StrCat("member \"", key_.substr(0, 64),
                              "\" is not valid JSON (", s.message(), ")"));
  }
  value_.clear();
  state_ = State::kAfterValue;
  if (key_ == "items") {
    if (!doc.IsNull()) {
      return Error(value_offset_, "items is not an array");
    }
    if (seen_items_) return Error(value_offset_, "a second \"items\"");
    seen_items_ = true;
  } else if (key_ == "kind" && doc.IsString() && !seen_kind_) {
    // The first one wins: items may already carry it.
    meta_.kind.assign(doc.GetString(), doc.GetStringLength());
    std::string_view item_kind = meta_.kind;
    if (absl::EndsWith(meta_.kind, "List")) item_kind.remove_suffix(4);
    kind_member_ = item_kind.empty() ? "" : Member("kind", item_kind);
    seen_kind_ = true;
  } else if (key_ == "apiVersion" && doc.IsString() && !seen_api_version_) {
    meta_.api_version.assign(doc.GetString(), doc.GetStringLength());
    api_version_member_ = meta_.api_version.empty()
                              ? ""
                              : Member("apiVersion", meta_.api_version);
    seen_api_version_ = true;
  } else if (key_ == "metadata" && doc.IsObject()) {
    meta_.resource_version = json::StringMember(doc, "resourceVersion");
    meta_.continue_token = json::StringMember(doc, "continue");
    auto rem = doc.FindMember("remainingItemCount");
    meta_.remaining_item_count.reset();
    if (rem != doc.MemberEnd() && rem->value.IsInt64()) {
      meta_.remaining_item_count = rem->value.GetInt64();
    }
  }
  if (!held_.empty() && seen_kind_ && seen_api_version_) {
    out->kind_member = kind_member_;
    out->api_version_member = api_version_member_;
    Release(out);
  }
  return absl::OkStatus();
}

void ListFramer::Release(FramedItems* out) {
  const size_t base = out->bytes.size();
  out->bytes.append(held_.bytes.view());
  for (FramedItems::Item item : held_.items) {
    item.begin += base;
    out->items.push_back(item);
  }
  held_.Clear();
}

absl::Status ListFramer::Finish(FramedItems* out) {
  if (!error_.ok()) return error_;
  if (state_ == State::kInValue && scalar_ && depth_ == 0) {
    // A number or literal ends only at the next byte; none came.
    return Fail(absl::DataLossError(
        absl::StrCat("list response ended early after ", offset_, " bytes (",
                     items_framed_, " complete items)")));
  }
  if (state_ != State::kDone) {
    return Fail(absl::DataLossError(
        offset_ == 0
            ? std::string("list response is empty")
            : absl::StrCat("list response ended early after ", offset_,
                           " bytes (", items_framed_, " complete items)")));
  }
  if (!seen_items_ && !absl::EndsWith(meta_.kind, "List")) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("list response: not a list (no \"items\", kind \"",
                     meta_.kind.substr(0, 64), "\")")));
  }
  out->kind_member = kind_member_;
  out->api_version_member = api_version_member_;
  Release(out);
  return absl::OkStatus();
}

absl::StatusOr<api::ObjectPtr> ParseFramedItem(
    const FramedItems& batch, const FramedItems::Item& item,
    const api::ParseOptions& parse_options) {
  const std::string_view text(batch.bytes.data() + item.begin, item.size);
  bool add_kind = item.needs_kind && !batch.kind_member.empty();
  bool add_api_version =
      item.needs_api_version && !batch.api_version_member.empty();
  absl::StatusOr<api::ObjectPtr> object;
  if (item.check_type) {
    object = api::Object::Parse(text, parse_options);
    if (object.ok()) {
      add_kind = (*object)->kind().empty() && !batch.kind_member.empty();
      add_api_version =
          (*object)->api_version().empty() && !batch.api_version_member.empty();
    }
  }
  // The framer bounds every item's nesting (or refuses the item).
  api::ScannedText scanned;
  scanned.ascii = !item.non_ascii;
  scanned.nesting_bounded = true;
  scanned.unicode_escape = item.unicode_escape;
  if (add_kind || add_api_version) {
    // The members go first: "{" + members, then the item after its '{'.
    thread_local std::string head;
    head.assign("{");
    if (add_kind) head.append(batch.kind_member);
    if (add_api_version) head.append(batch.api_version_member);
    size_t rest = 1;
    while (rest < text.size() && IsSpace(text[rest])) ++rest;
    if (rest < text.size() && text[rest] == '}') head.pop_back();  // ','
    // The members are the list's kind and apiVersion as RapidJSON wrote
    // them: short, and scanned here.
    for (char c : head) {
      if (IsHigh(c)) scanned.ascii = false;
      if (c == '\\') scanned.unicode_escape = true;
    }
    object =
        api::Object::ParseScanned(head, text.substr(1), scanned, parse_options);
  } else if (!item.check_type) {
    object =
        api::Object::ParseScanned(/*head=*/{}, text, scanned, parse_options);
  }
  if (!object.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("list response: items[", item.index, "] at offset ",
                     item.offset, ": ", object.status().message()));
  }
  return object;
}

ListDecoder::ListDecoder(ListDecoderOptions options, Sink sink)
    : options_(std::move(options)),
      sink_(std::move(sink)),
      framer_(options_.max_item_bytes) {}

absl::Status ListDecoder::Deliver() {
  for (const FramedItems::Item& item : batch_.items) {
    absl::StatusOr<api::ObjectPtr> object =
        ParseFramedItem(batch_, item, options_.parse_options);
    if (!object.ok()) {
      error_ = object.status();
      break;
    }
    if (absl::Status s = sink_(*std::move(object)); !s.ok()) {
      error_ = s;
      break;
    }
    ++items_decoded_;
  }
  batch_.Clear();
  return error_;
}

absl::Status ListDecoder::Feed(std::string_view chunk) {
  if (!error_.ok()) return error_;
  absl::Status framed = framer_.Feed(chunk, &batch_);
  // Items completed before a framing error are still handed over.
  if (absl::Status s = Deliver(); !s.ok()) return s;
  if (!framed.ok()) error_ = framed;
  return error_;
}

absl::Status ListDecoder::Finish() {
  if (!error_.ok()) return error_;
  absl::Status framed = framer_.Finish(&batch_);
  if (absl::Status s = Deliver(); !s.ok()) return s;
  if (!framed.ok()) error_ = framed;
  return error_;
}

}  // namespace kcr::client
