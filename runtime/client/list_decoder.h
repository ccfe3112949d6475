// ListDecoder: the incremental decoder of a list response body.
//
// kube-apiserver serves a list at resourceVersion "0" whole from its watch
// cache, whatever the limit: 50,000 pods arrive as one 230 MB body. The
// decoder takes the body in chunks of any size as they arrive and hands
// each item to a sink as soon as its last byte is in, so that neither the
// whole body nor a DOM of it is ever held: memory stays at one chunk plus
// the item being framed.
//
//   {"kind":"PodList","apiVersion":"v1","metadata":{...},"items":[{..},..]}
//
// It works in two stages, which a caller may also run on two threads
// (ReadList in list_reader.h does):
//   * ListFramer scans the bytes once, tracking JSON nesting outside
//     strings, and cuts out each item's bytes (plus the list's kind,
//     apiVersion and metadata, wherever they appear: before or after
//     "items");
//   * ParseFramedItem parses one item's bytes with api::Object::Parse.
// Why a byte framer and Object::Parse rather than RapidJSON's SAX reader
// forwarding each item's events into a reusable Document and then
// Object::FromValue (both measured in bench/list_decoder_benchmark.cc,
// docs/benchmarks.md): on one thread SAX + FromValue is ~10 % cheaper per
// pod (it builds the tree twice, but framing scans the bytes once more
// before Object::Parse, RapidJSON's fastest path, in situ into a
// per-thread scratch buffer). Framing wins on two cores: it is a cheap,
// separate pass that moves to the reading thread, and whole framed batches
// can then be parsed on any thread (1.55x one thread for 10,000 pods);
// SAX events cannot be split that way.
//
// Items get the list's kind less "List" and its apiVersion when they carry
// none, as client-go's dynamic client does. kube-apiserver writes kind and
// apiVersion before items; for a body that writes them after, items that
// need them are held (framed, not parsed) until they are seen or the body
// ends. Of duplicate kind or apiVersion members the first counts.
//
// Errors name the byte offset in the body: kInvalidArgument for a body that
// is not a JSON object or not a list (no "items" and a kind that does not
// end in "List", or "items" that is not an array or null), an item that is
// not a JSON object or not a valid Kubernetes object, nesting deeper than
// api::kMaxJsonDepth below an item, bytes after the list's end;
// kResourceExhausted for an item or a member larger than max_item_bytes;
// kDataLoss from Finish for a body that ends early. Errors are sticky.
// Items completed before an error were already handed over.
//
// Not thread-safe: one decoder (or framer) per body.
#ifndef KCR_RUNTIME_CLIENT_LIST_DECODER_H_
#define KCR_RUNTIME_CLIENT_LIST_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/object.h"
#include "runtime/client/options.h"

namespace kcr::client {

struct ListDecoderOptions {
  // How each item is parsed (e.g. strip managedFields).
  api::ParseOptions parse_options;
  // The largest item (or top-level member) accepted; a bigger one is an
  // error rather than unbounded buffering.
  size_t max_item_bytes = 64 << 20;
};

// The bytes of a batch of framed items: a growable buffer that, unlike
// std::string, leaves the bytes it grows by uninitialized, so that the
// list reader can read the body straight into it (ListFramer::FeedInPlace)
// without writing each byte twice. Capacity is kept by clear().
class FramedBytes {
 public:
  FramedBytes() = default;
  FramedBytes(const FramedBytes& other) { append(other.view()); }
  FramedBytes& operator=(const FramedBytes& other) {
    if (this != &other) {
      clear();
      append(other.view());
    }
    return *this;
  }
  FramedBytes(FramedBytes&& other) noexcept { swap(other); }
  FramedBytes& operator=(FramedBytes&& other) noexcept {
    swap(other);
    other.clear();
    return *this;
  }

  const char* data() const { return data_.get(); }
  char* data() { return data_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  std::string_view view() const { return std::string_view(data(), size_); }
  // A copy, as std::string's.
  std::string substr(size_t pos, size_t n) const {
    return std::string(view().substr(pos, n));
  }

  void clear() { size_ = 0; }
  void append(std::string_view bytes) {
    if (bytes.empty()) return;
    std::memcpy(Extend(bytes.size()), bytes.data(), bytes.size());
  }
  void append(const char* bytes, size_t n) {
    append(std::string_view(bytes, n));
  }
  // Grows size() by n bytes, left uninitialized, and returns where they
  // start (valid until the next call that grows the buffer).
  char* Extend(size_t n);
  // Shrinks size() to n (<= size()).
  void Truncate(size_t n) { size_ = n < size_ ? n : size_; }
  void reserve(size_t n);

 private:
  void swap(FramedBytes& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
  }

  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// Items cut out of a list body, not yet parsed: a batch that can be handed
// from the framing thread to a parsing one. A plain value.
struct FramedItems {
  struct Item {
    size_t begin = 0;  // in `bytes`
    size_t size = 0;
    int64_t index = 0;   // position in the list's items
    int64_t offset = 0;  // of its '{' in the body
    // The item has no top-level "kind" / "apiVersion" of its own: fill in
    // the list's (kind_member / api_version_member below).
    bool needs_kind = false;
    bool needs_api_version = false;
    // A top-level key had an escape, so the flags above are unsure: parse
    // and look.
    bool check_type = false;
    // What framing saw of the item's bytes, so that parsing need not scan
    // them again (api::ScannedText): a byte of 0x80 or more (set also for
    // one in the bytes just after the item), and a "\u" escape.
    bool non_ascii = false;
    bool unicode_escape = false;
  };
  // The items' bytes; framed in place, also what lies between them.
  FramedBytes bytes;
  std::vector<Item> items;
  // The members to add, JSON with a trailing comma ("\"kind\":\"Pod\","),
  // or empty when the list has no such field.
  std::string kind_member;
  std::string api_version_member;

  bool empty() const { return items.empty(); }
  void Clear() {
    bytes.clear();
    items.clear();
  }
};

// The framing stage. Feed and Finish append the items they complete to
// `*out` (which the caller may empty between calls).
class ListFramer {
 public:
  explicit ListFramer(size_t max_item_bytes = 64 << 20);

  absl::Status Feed(std::string_view chunk, FramedItems* out);
  // Feed for a chunk that the caller appended to out->bytes (from `from`
  // to its end), e.g. read into it: the items it completes are recorded
  // where they lie, without a copy of their bytes. The bytes of an item it
  // leaves unfinished stay at the tail of out->bytes: call CarryOver
  // before feeding another batch. One framer is fed either way, not both.
  absl::Status FeedInPlace(FramedItems* out, size_t from);
  // In-place framing: moves the unfinished item's bytes (if any) from the
  // tail of `from`'s bytes to the end of `to`'s, where framing goes on.
  void CarryOver(FramedItems* from, FramedItems* to);
  // Declares the end of the body: kDataLoss when it ended early; releases
  // items held for the list's kind.
  absl::Status Finish(FramedItems* out);

  // The list's kind, apiVersion and metadata seen so far (complete after a
  // successful Finish).
  const ListMeta& meta() const { return meta_; }
  // Bytes consumed so far.
  int64_t offset() const { return offset_; }

  // Whether this CPU runs the AVX2 block scan (chosen at construction when
  // it does); the portable SSE2 scan frames exactly the same way.
  static bool Avx2BlockScanAvailable();
  // Tests: picks the block scan (AVX2 only where available).
  void set_avx2_block_scan(bool on) {
    use_avx2_ = on && Avx2BlockScanAvailable();
  }

 private:
  enum class State {
    kStart,       // before the list's '{'
    kFirstKey,    // after '{': a key or '}'
    kKey,         // after ',': a key
    kInKey,       // inside a key string
    kColon,       // after a key
    kValue,       // after ':'
    kInValue,     // inside a member's value (not items)
    kItemsFirst,  // after "items":[ : an item or ']'
    kItemsNext,   // after an item: ',' or ']'
    kItem,        // after ',' in items: an item
    kInItem,      // inside an item
    kAfterValue,  // after a member: ',' or '}'
    kDone,        // after the list's '}'
  };

  // Feed without setting out's type members.
  absl::Status Scan(std::string_view chunk, FramedItems* out);
  absl::Status Fail(absl::Status status);
  absl::Status Error(int64_t at, std::string_view what);
  // Scans an item from data[i] on; returns where it stopped (n, or past the
  // item's last byte).
  absl::StatusOr<size_t> ScanItem(const char* data, size_t i, size_t n,
                                  FramedItems* out);
  // ScanItem's fast path (SSE2): the kBlock bytes at p at once, with bit
  // masks of the quotes, backslashes and brackets. Returns how many bytes
  // it consumed: kBlock, fewer when it stopped after the byte that ends
  // the item (*item_end), nests too deep (*too_deep) or opens a top-level
  // key (for the byte loop to read), or 0 when a backslash outside strings
  // makes the block one for the byte loop. Framing is exactly the byte
  // loop's.
  // The scan itself is list_framer_block.inc's, over the bit masks of
  // `Block` (list_decoder.cc: SSE2, the baseline; list_framer_avx2.cc:
  // AVX2 and PCLMUL, compiled apart with those instructions enabled).
  static constexpr size_t kBlock = 64;
  template <typename Block>
  size_t ScanBlockWith(const char* p, bool* item_end, bool* too_deep);
  size_t ScanBlock(const char* p, bool* item_end, bool* too_deep);
  size_t ScanBlockAvx2(const char* p, bool* item_end, bool* too_deep);
  // The item ends at data[i - 1]: hands it over (or holds it).
  absl::StatusOr<size_t> EndItem(const char* data, size_t start, size_t i,
                                 FramedItems* out);
  // The error for the item's byte data[i] nesting too deep.
  absl::Status TooDeep(size_t i);
  // Scans a member's value (not items) likewise.
  absl::StatusOr<size_t> ScanValue(const char* data, size_t i, size_t n,
                                   FramedItems* out);
  // Reads the member's complete value.
  absl::Status EndValue(FramedItems* out);
  // Moves the held items to `out`.
  void Release(FramedItems* out);

  const size_t max_item_bytes_;
  bool use_avx2_;
  absl::Status error_;
  State state_ = State::kStart;
  int64_t offset_ = 0;  // body bytes before the current chunk
  ListMeta meta_;
  bool seen_kind_ = false;
  bool seen_api_version_ = false;
  bool seen_items_ = false;
  std::string key_;  // the member being read (raw, escapes unresolved)
  bool key_escaped_ = false;

  // Nesting and string state of the value or item being scanned.
  int depth_ = 0;
  bool in_string_ = false;
  bool escaped_ = false;
  bool scalar_ = false;  // a number or literal value at the top level
  std::string value_;    // the member's value (not items)
  int64_t value_offset_ = 0;
  // FramedItems::kind_member and api_version_member for this list.
  std::string kind_member_;
  std::string api_version_member_;

  // The item being framed.
  std::string item_;  // its bytes so far (Feed)
  // FeedInPlace: the chunk is out->bytes from chunk_base_ on, and the item
  // being framed starts at item_start_ in it.
  bool in_place_ = false;
  size_t chunk_base_ = 0;
  size_t item_start_ = 0;
  FramedItems::Item current_;
  bool expect_key_ = false;   // the next string at item depth 1 is a key
  bool in_top_key_ = false;   // inside such a key
  std::string top_key_;       // its bytes so far (short keys only)
  int64_t items_framed_ = 0;  // items cut out so far

  // Items waiting for the list's kind or apiVersion (see above).
  FramedItems held_;
};

// Parses one framed item into an Object, adding the list's kind and
// apiVersion when it has none. Errors (kInvalidArgument) name the item's
// index and its offset in the body.
absl::StatusOr<api::ObjectPtr> ParseFramedItem(
    const FramedItems& batch, const FramedItems::Item& item,
    const api::ParseOptions& parse_options);

// The single-threaded decoder: framing and parsing on the caller's thread.
class ListDecoder {
 public:
  // Takes each item in order; an error from it stops the decoder (and is
  // returned by Feed or Finish).
  using Sink = std::function<absl::Status(api::ObjectPtr)>;

  ListDecoder(ListDecoderOptions options, Sink sink);

  // Consumes `chunk`, handing every item it completes to the sink.
  absl::Status Feed(std::string_view chunk);
  // Declares the end of the body (kDataLoss if it was cut short).
  absl::Status Finish();

  // The list's kind, apiVersion and metadata; complete after Finish.
  const ListMeta& meta() const { return framer_.meta(); }
  int64_t items_decoded() const { return items_decoded_; }

 private:
  absl::Status Deliver();

  const ListDecoderOptions options_;
  const Sink sink_;
  ListFramer framer_;
  FramedItems batch_;
  absl::Status error_;
  int64_t items_decoded_ = 0;
};

}  // namespace kcr::client

#endif  // KCR_RUNTIME_CLIENT_LIST_DECODER_H_
