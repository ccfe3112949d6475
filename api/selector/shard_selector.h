// Shard selectors (KEP-5866, kube-apiserver's `shardSelector` list and watch
// parameter, feature gate ShardedListAndWatch): an object belongs to a shard
// when the 64-bit FNV-1a hash of one of its metadata fields falls in one of
// the selector's half-open ranges.
//
//   KCR_ASSIGN_OR_RETURN(ShardSelector s, ShardSelector::Parse(
//       "shardRange(object.metadata.uid, '0x0000000000000000', "
//       "'0x8000000000000000')"));
//   if (s.Matches(uid, ns)) { ... }
//
// The grammar is the subset of CEL kube-apiserver accepts: shardRange()
// calls joined by `||`, each `shardRange(<field>, '<start>', '<end>')`
// where <field> is object.metadata.uid or object.metadata.namespace (the
// same in every range) and the bounds are string literals with a 0x prefix
// and exactly 16 lowercase hex digits, the end possibly
// '0x10000000000000000' (2^64), start < end. Parse returns kube's messages
// for every malformed form (see Parse). The hash and the ranges are the same
// on both sides of the wire, so a client can filter what a server that
// ignores the parameter sends. A ShardSelector is an immutable value.
#ifndef KCR_API_SELECTOR_SHARD_SELECTOR_H_
#define KCR_API_SELECTOR_SHARD_SELECTOR_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/numeric/int128.h"
#include "absl/status/statusor.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {

// The 64-bit FNV-1a hash of `value` (Go's hash/fnv New64a), the hash kube
// computes of a shard key.
uint64_t Fnv1a64(std::string_view value);

// The metadata field a selector hashes.
enum class ShardField { kUid, kNamespace };

// "object.metadata.uid" or "object.metadata.namespace".
std::string_view ShardFieldPath(ShardField field);

// A half-open range [start, end) of the hash space [0, 2^64).
struct ShardRange {
  absl::uint128 start = 0;
  absl::uint128 end = absl::uint128(1) << 64;

  bool Contains(uint64_t hash) const { return start <= hash && hash < end; }

  // The `index`th of `total` contiguous ranges that cover the hash space
  // (index in [0, total), total > 0): [index * 2^64 / total,
  // (index + 1) * 2^64 / total), rounded down.
  static ShardRange Of(uint64_t index, uint64_t total);

  friend bool operator==(const ShardRange& a, const ShardRange& b) {
    return a.start == b.start && a.end == b.end;
  }
  friend bool operator!=(const ShardRange& a, const ShardRange& b) {
    return !(a == b);
  }
};

// A bound as the wire writes it: "0x" and 16 lowercase hex digits, or
// "0x10000000000000000" for 2^64.
std::string FormatShardBound(absl::uint128 bound);

class ShardSelector {
 public:
  // Matches everything (no shardSelector parameter).
  ShardSelector() = default;

  // Parses a shard selector as kube-apiserver does. Surrounding whitespace
  // is ignored. On bad input returns InvalidArgument with kube's message
  // (kube-apiserver prefixes it with "invalid shard selector: "), e.g.
  //   hexStart must be a 0x-prefixed 16-digit hex value, got "0x0"
  //   (did you mean "0x0000000000000000"?)
  //   unsupported function "_&&_"; only shardRange() and || are allowed
  //   all shard ranges must use the same field, got
  //   "object.metadata.uid" and "object.metadata.namespace"
  // An empty (or blank) selector is an error: omit the parameter instead.
  // Syntax errors read "CEL parse error: Syntax error: ..." as kube's do;
  // the words after that are ours, not cel-go's.
  static absl::StatusOr<ShardSelector> Parse(std::string_view selector);

  // A selector of `ranges` (at least one, each start < end <= 2^64) over
  // `field`, without validation.
  static ShardSelector ForRanges(ShardField field,
                                 std::vector<ShardRange> ranges);

  bool Empty() const { return ranges_.empty(); }
  ShardField field() const { return field_; }
  // In the order written; they may overlap.
  const std::vector<ShardRange>& ranges() const { return ranges_; }

  // True when some range contains `hash` (or the selector is empty).
  bool MatchesHash(uint64_t hash) const;
  // True when the hash of the selector's field, given both candidate
  // values, falls in a range. Cluster-scoped objects have namespace "".
  bool Matches(std::string_view uid, std::string_view ns) const;
  // The same for a JSON object, reading metadata.uid / metadata.namespace
  // (absent: "").
  bool Matches(const rapidjson::Value& object) const;

  // Canonical form, as kube writes it:
  //   shardRange(object.metadata.uid, '0x...', '0x...') || shardRange(...)
  // Parse(ToString()) gives back an equal selector; "" when empty.
  std::string ToString() const;

  friend bool operator==(const ShardSelector& a, const ShardSelector& b) {
    return a.field_ == b.field_ && a.ranges_ == b.ranges_;
  }
  friend bool operator!=(const ShardSelector& a, const ShardSelector& b) {
    return !(a == b);
  }

 private:
  ShardField field_ = ShardField::kUid;
  std::vector<ShardRange> ranges_;
};

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_SELECTOR_SHARD_SELECTOR_H_
