#include "runtime/sharding/shard_ownership.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "absl/numeric/int128.h"
#include "api/selector/shard_selector.h"
#include "gtest/gtest.h"

namespace kcr::sharding {
namespace {

uint64_t Low(absl::uint128 v) { return absl::Uint128Low64(v); }

class ShardOfHashTest : public ::testing::TestWithParam<int> {};

// Every range's first and last hash, and the hashes either side of each
// boundary, land in the shard whose api::ShardRange::Of holds them.
TEST_P(ShardOfHashTest, AgreesWithShardRangeAtEveryBoundary) {
  const int shards = GetParam();
  for (int i = 0; i < shards; ++i) {
    const api::ShardRange range = api::ShardRange::Of(i, shards);
    ASSERT_LT(range.start, range.end);
    const uint64_t first = Low(range.start);
    const uint64_t last = Low(range.end - 1);
    EXPECT_EQ(ShardOfHash(first, shards), i) << "first of " << i;
    EXPECT_EQ(ShardOfHash(last, shards), i) << "last of " << i;
    if (first > 0) {
      EXPECT_EQ(ShardOfHash(first - 1, shards), i - 1) << "before " << i;
    }
    if (range.end - range.start > 2) {
      EXPECT_EQ(ShardOfHash(first + 1, shards), i);
      EXPECT_EQ(ShardOfHash(last - 1, shards), i);
    }
  }
  EXPECT_EQ(ShardOfHash(0, shards), 0);
  EXPECT_EQ(ShardOfHash(std::numeric_limits<uint64_t>::max(), shards),
            shards - 1);
}

// Spread hashes (a multiplicative sequence) agree with ShardRange::Contains.
TEST_P(ShardOfHashTest, AgreesWithShardRangeOnSpreadHashes) {
  const int shards = GetParam();
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (int n = 0; n < 20000; ++n) {
    h = h * 6364136223846793005ULL + 1442695040888963407ULL;
    const int shard = ShardOfHash(h, shards);
    ASSERT_GE(shard, 0);
    ASSERT_LT(shard, shards);
    ASSERT_TRUE(api::ShardRange::Of(shard, shards).Contains(h)) << h;
  }
}

INSTANTIATE_TEST_SUITE_P(Shards, ShardOfHashTest,
                         ::testing::Values(1, 3, 7, 32, 1024));

TEST(ShardOfTest, HashesUidOrNamespace) {
  const int shards = 32;
  EXPECT_EQ(ShardOf(ShardBy::kUid, "uid-1", "ns-a", shards),
            ShardOfHash(api::Fnv1a64("uid-1"), shards));
  EXPECT_EQ(ShardOf(ShardBy::kNamespace, "uid-1", "ns-a", shards),
            ShardOfHash(api::Fnv1a64("ns-a"), shards));
  // Objects of one namespace land together when sharded by namespace.
  EXPECT_EQ(ShardOf(ShardBy::kNamespace, "uid-1", "ns-a", shards),
            ShardOf(ShardBy::kNamespace, "uid-2", "ns-a", shards));
}

TEST(ShardOfTest, MatchesTheSelectorOfItsShard) {
  const int shards = 7;
  for (int n = 0; n < 200; ++n) {
    const std::string uid = "uid-" + std::to_string(n);
    const int shard = ShardOf(ShardBy::kUid, uid, "", shards);
    for (int s = 0; s < shards; ++s) {
      EXPECT_EQ(SelectorFor(ShardBy::kUid, {s}, shards).Matches(uid, ""),
                s == shard)
          << uid << " shard " << s;
    }
  }
}

TEST(SelectorForTest, JoinsAdjacentShards) {
  const int shards = 8;
  api::ShardSelector s = SelectorFor(ShardBy::kUid, {5, 0, 1, 3, 4}, shards);
  EXPECT_EQ(s.field(), api::ShardField::kUid);
  ASSERT_EQ(s.ranges().size(), 2u);
  EXPECT_EQ(s.ranges()[0].start, api::ShardRange::Of(0, shards).start);
  EXPECT_EQ(s.ranges()[0].end, api::ShardRange::Of(1, shards).end);
  EXPECT_EQ(s.ranges()[1].start, api::ShardRange::Of(3, shards).start);
  EXPECT_EQ(s.ranges()[1].end, api::ShardRange::Of(5, shards).end);
  EXPECT_EQ(s.ToString(),
            "shardRange(object.metadata.uid, '0x0000000000000000', "
            "'0x4000000000000000') || shardRange(object.metadata.uid, "
            "'0x6000000000000000', '0xc000000000000000')");
  // The canonical form is one the server accepts.
  absl::StatusOr<api::ShardSelector> parsed =
      api::ShardSelector::Parse(s.ToString());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, s);
}

TEST(SelectorForTest, AllShardsIsOneFullRange) {
  std::vector<int> all;
  for (int i = 0; i < 1024; ++i) all.push_back(i);
  api::ShardSelector s = SelectorFor(ShardBy::kNamespace, all, 1024);
  EXPECT_EQ(s.field(), api::ShardField::kNamespace);
  ASSERT_EQ(s.ranges().size(), 1u);
  EXPECT_EQ(s.ranges()[0], api::ShardRange{});
  EXPECT_FALSE(s.Empty());
}

TEST(SelectorForTest, NothingHeldMatchesNothing) {
  api::ShardSelector s = SelectorFor(ShardBy::kUid, {}, 32);
  EXPECT_FALSE(s.Empty());
  EXPECT_FALSE(s.MatchesHash(0));
  EXPECT_FALSE(s.MatchesHash(std::numeric_limits<uint64_t>::max()));
  EXPECT_FALSE(s.Matches("uid-1", "ns"));
}

TEST(SelectorForTest, IgnoresDuplicatesAndOutOfRangeShards) {
  EXPECT_EQ(SelectorFor(ShardBy::kUid, {2, 2, -1, 9, 3}, 4),
            SelectorFor(ShardBy::kUid, {2, 3}, 4));
}

}  // namespace
}  // namespace kcr::sharding
