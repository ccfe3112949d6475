#include "runtime/sharding/shard_ownership.h"

#include <algorithm>
#include <utility>

#include "absl/numeric/int128.h"

namespace kcr::sharding {

int ShardOfHash(uint64_t hash, int shards) {
  // Range i starts at floor(i * 2^64 / S); the shard of h is the largest i
  // with that start <= h, i.e. i * 2^64 < (h + 1) * S, which is
  // floor(((h + 1) * S - 1) / 2^64). (h + 1) * S < 2^64 * 2^31 fits.
  const absl::uint128 scaled =
      (absl::uint128(hash) + 1) * static_cast<uint64_t>(shards) - 1;
  return static_cast<int>(absl::Uint128High64(scaled));
}

int ShardOf(ShardBy by, std::string_view uid, std::string_view ns, int shards) {
  return ShardOfHash(api::Fnv1a64(by == ShardBy::kNamespace ? ns : uid),
                     shards);
}

api::ShardSelector SelectorFor(ShardBy by, const std::vector<int>& held,
                               int shards) {
  const api::ShardField field = by == ShardBy::kNamespace
                                    ? api::ShardField::kNamespace
                                    : api::ShardField::kUid;
  std::vector<int> sorted;
  sorted.reserve(held.size());
  for (int shard : held) {
    if (shard >= 0 && shard < shards) sorted.push_back(shard);
  }
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<api::ShardRange> ranges;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    api::ShardRange range;
    range.start = api::ShardRange::Of(sorted[i], shards).start;
    range.end = api::ShardRange::Of(sorted[j], shards).end;
    ranges.push_back(range);
    i = j + 1;
  }
  if (ranges.empty()) {
    // Matches nothing: an empty selector would match everything.
    api::ShardRange none;
    none.start = 0;
    none.end = 0;
    ranges.push_back(none);
  }
  return api::ShardSelector::ForRanges(field, std::move(ranges));
}

}  // namespace kcr::sharding
