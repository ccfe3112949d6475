#include "api/selector/shard_selector.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {
namespace {

using ::testing::ElementsAre;

constexpr char kLow[] = "'0x0000000000000000'";
constexpr char kMid[] = "'0x8000000000000000'";
constexpr char kTop[] = "'0x10000000000000000'";

std::string Range(const std::string& field, const std::string& start,
                  const std::string& end) {
  return "shardRange(" + field + ", " + start + ", " + end + ")";
}

TEST(Fnv1a64Test, KnownVectors) {
  // The FNV reference vectors (the offset basis for the empty string).
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ull);
}

TEST(ShardRangeTest, OfCoversTheSpaceWithoutGaps) {
  EXPECT_EQ(ShardRange::Of(0, 1), (ShardRange{0, absl::uint128(1) << 64}));
  EXPECT_EQ(FormatShardBound(ShardRange::Of(1, 4).start), "0x4000000000000000");
  EXPECT_EQ(FormatShardBound(ShardRange::Of(3, 4).end), "0x10000000000000000");
  for (uint64_t n : {1, 3, 7, 16}) {
    EXPECT_EQ(ShardRange::Of(0, n).start, 0);
    for (uint64_t i = 1; i < n; ++i) {
      EXPECT_EQ(ShardRange::Of(i - 1, n).end, ShardRange::Of(i, n).start);
    }
    EXPECT_EQ(ShardRange::Of(n - 1, n).end, absl::uint128(1) << 64);
  }
}

TEST(ShardSelectorParseTest, ValidForms) {
  auto s = ShardSelector::Parse(Range("object.metadata.uid", kLow, kMid));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->field(), ShardField::kUid);
  EXPECT_THAT(s->ranges(), ElementsAre(ShardRange{0, absl::uint128(1) << 63}));
  EXPECT_EQ(s->ToString(),
            "shardRange(object.metadata.uid, '0x0000000000000000', "
            "'0x8000000000000000')");

  // No spaces, extra spaces, double quotes, parentheses: the same selector.
  for (const char* text : {
           "shardRange(object.metadata.uid,'0x0000000000000000',"
           "'0x8000000000000000')",
           "  shardRange( object.metadata.uid ,  '0x0000000000000000' ,  "
           "'0x8000000000000000' )  ",
           "shardRange(object.metadata.uid, \"0x0000000000000000\", "
           "\"0x8000000000000000\")",
           "(shardRange(object.metadata.uid, '0x0000000000000000', "
           "'0x8000000000000000'))",
       }) {
    auto t = ShardSelector::Parse(text);
    ASSERT_TRUE(t.ok()) << text << ": " << t.status();
    EXPECT_EQ(*t, *s) << text;
  }

  auto two =
      ShardSelector::Parse(Range("object.metadata.uid", kLow, kMid) + " || " +
                           Range("object.metadata.uid", kMid, kTop));
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->ranges().size(), 2u);
  EXPECT_EQ(two->ranges()[1].end, absl::uint128(1) << 64);
  auto again = ShardSelector::Parse(two->ToString());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *two);

  auto ns = ShardSelector::Parse(Range("object.metadata.namespace",
                                       "'0x00000000000000aa'",
                                       "'0x00000000000000ff'"));
  ASSERT_TRUE(ns.ok()) << ns.status();
  EXPECT_EQ(ns->field(), ShardField::kNamespace);

  auto three = ShardSelector::Parse(
      "shardRange(object.metadata.uid, '0x0000000000000000', "
      "'0x0000000000000005') || (shardRange(object.metadata.uid, "
      "'0x0000000000000005', '0x000000000000000a') || "
      "shardRange(object.metadata.uid, '0x000000000000000a', "
      "'0x000000000000000f'))");
  ASSERT_TRUE(three.ok()) << three.status();
  ASSERT_EQ(three->ranges().size(), 3u);
  EXPECT_EQ(three->ranges()[2].start, 10);
}

TEST(ShardSelectorParseTest, KubeMessagesForMalformedSelectors) {
  const std::string uid = "object.metadata.uid";
  struct Case {
    std::string in;
    std::string message;
  } cases[] = {
      {"",
       "empty shard selector is not allowed; omit the parameter for "
       "unfiltered lists"},
      {"   ",
       "empty shard selector is not allowed; omit the parameter for "
       "unfiltered lists"},
      {Range(uid, "'0000000000000000'", kMid),
       "hexStart must have '0x' prefix, got \"0000000000000000\""},
      {Range(uid, kLow, "'8000000000000000'"),
       "hexEnd must have '0x' prefix, got \"8000000000000000\""},
      {Range(uid, "'0x'", kMid), "hexStart: hex value is required after '0x'"},
      {Range("object.metadata.name", "'0x00'", "'0x80'"),
       "unsupported field path \"object.metadata.name\"; supported: "
       "object.metadata.uid, object.metadata.namespace"},
      {Range("object.metadata.labels", "'0x00'", "'0x80'"),
       "unsupported field path \"object.metadata.labels\"; supported: "
       "object.metadata.uid, object.metadata.namespace"},
      {"invalidFunc(object.metadata.uid, '0x00', '0x80')",
       "unsupported function \"invalidFunc\"; only shardRange() and || are "
       "allowed"},
      {Range(uid, "'0x000000000000000000'", "'0x80'"),
       "hexStart: hex value too long (18 chars, max 17): "
       "\"000000000000000000\""},
      {Range(uid, "'0x0g'", "'0x80'"),
       "hexStart: invalid hex character \"g\" in \"0x0g\""},
      {Range(uid, "'0x000000000000000A'", kMid),
       "hexStart: invalid hex character \"A\" in \"0x000000000000000A\""},
      {Range(uid, "'0x0'", "'0x8'") + " && " + Range(uid, "'0x8'", "'0xf'"),
       "unsupported function \"_&&_\"; only shardRange() and || are "
       "allowed"},
      {Range(uid, "0", "8"), "hexStart must be a string literal, got int64"},
      {Range(uid, "0u", "8"), "hexStart must be a string literal, got uint64"},
      {Range(uid, "true", "8"), "hexStart must be a string literal, got bool"},
      {"object.metadata.uid > '0x0'",
       "unsupported function \"_>_\"; only shardRange() and || are allowed"},
      {"object.metadata.uid",
       "unexpected expression kind 7; expected shardRange() call or || "
       "operator"},
      {"shardRange(object.metadata.uid, '0x0')",
       "shardRange() requires exactly 3 arguments, got 2"},
      {Range(uid, "hex(0)", "'0x8'"),
       "hexStart must be a string literal (e.g. '0xff'), got expression kind "
       "1"},
      {Range("'object.metadata.uid'", kLow, kMid),
       "shardRange() first argument: expected field path (e.g. "
       "object.metadata.uid), got expression kind 5"},
      {Range(uid, kLow, kMid) + " || " +
           Range("object.metadata.namespace", kMid, kTop),
       "all shard ranges must use the same field, got \"object.metadata.uid\" "
       "and \"object.metadata.namespace\""},
      {Range(uid, "'0x0'", kMid),
       "hexStart must be a 0x-prefixed 16-digit hex value, got \"0x0\" (did "
       "you mean \"0x0000000000000000\"?)"},
      {Range(uid, kLow, "'0xff'"),
       "hexEnd must be a 0x-prefixed 16-digit hex value, got \"0xff\" (did you "
       "mean \"0x00000000000000ff\"?)"},
      {Range(uid, "'0x20000000000000000'", kTop),
       "hexStart: 17-digit hex value must be '0x10000000000000000' (2^64), "
       "got \"0x20000000000000000\""},
      {Range(uid, kMid, kMid),
       "shard range start 0x8000000000000000 must be less than end "
       "0x8000000000000000"},
      {Range(uid, "'0xffffffffffffffff'", kLow),
       "shard range start 0xffffffffffffffff must be less than end "
       "0x0000000000000000"},
      {Range(uid, kLow, kMid) + " || " + Range(uid, "'0x1'", kMid),
       "hexStart must be a 0x-prefixed 16-digit hex value, got \"0x1\" (did "
       "you mean \"0x0000000000000001\"?)"},
  };
  for (const Case& c : cases) {
    auto s = ShardSelector::Parse(c.in);
    EXPECT_FALSE(s.ok()) << c.in;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << c.in;
    EXPECT_EQ(std::string(s.status().message()), c.message) << c.in;
  }
}

TEST(ShardSelectorParseTest, SyntaxErrorsAreCelParseErrors) {
  for (const char* text : {
           "shardRange(object.metadata.uid, '0x0000000000000000', "
           "'0x8000000000000000'",
           "shardRange(object.metadata.uid, '0x0000000000000000, "
           "'0x8000000000000000')",
           "shardRange(object.metadata.uid,,)",
           "shardRange(object.metadata.uid, '0x0000000000000000', "
           "'0x8000000000000000') ||",
           "shardRange(object.metadata.uid, '0x0', '0x1') shardRange()",
           "#",
       }) {
    auto s = ShardSelector::Parse(text);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_THAT(std::string(s.status().message()),
                ::testing::StartsWith("CEL parse error: Syntax error: "))
        << text;
  }
}

TEST(ShardSelectorParseTest, LongChainsAndDeepNesting) {
  // A long || chain keeps its ranges in the order written.
  std::string chain;
  for (int i = 0; i < 1000; ++i) {
    api::ShardRange r = ShardRange::Of(i, 1000);
    if (!chain.empty()) chain += " || ";
    chain += "shardRange(object.metadata.uid, '" + FormatShardBound(r.start) +
             "', '" + FormatShardBound(r.end) + "')";
  }
  auto s = ShardSelector::Parse(chain);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->ranges().size(), 1000u);
  for (int i = 0; i < 1000; ++i)
    EXPECT_EQ(s->ranges()[i], ShardRange::Of(i, 1000));
  EXPECT_EQ(s->ToString(), chain);

  // Deep nesting is a parse error, not a deep recursion.
  for (const std::string& deep :
       {std::string(20000, '(') + "x" + std::string(20000, ')'),
        std::string(20000, '!') + "x", "x" + std::string(20000, '+') + "x",
        "object" + std::string(5000, '.') + "uid"}) {
    auto d = ShardSelector::Parse(deep);
    ASSERT_FALSE(d.ok());
    EXPECT_THAT(std::string(d.status().message()),
                ::testing::StartsWith("CEL parse error: "));
  }
  auto huge = ShardSelector::Parse("x" + std::string(100000, ' ') + "x");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(std::string(huge.status().message()),
            "CEL parse error: expression code point size exceeds limit: size: "
            "100002, limit 100000");
}

TEST(ShardSelectorMatchTest, HashesTheChosenField) {
  const std::string uid = "5c9e4a3e-0d52-4c1b-9a7e-2b8f7d0f4e11";
  const uint64_t h = Fnv1a64(uid);
  // A one-value range around the uid's hash.
  ShardSelector exact = ShardSelector::ForRanges(
      ShardField::kUid, {ShardRange{absl::uint128(h), absl::uint128(h) + 1}});
  EXPECT_TRUE(exact.Matches(uid, "default"));
  EXPECT_FALSE(exact.Matches(uid + "x", "default"));
  ShardSelector below = ShardSelector::ForRanges(
      ShardField::kUid, {ShardRange{0, absl::uint128(h)}});
  EXPECT_FALSE(below.Matches(uid, "default"));

  // Halves partition; their union matches everything.
  auto lo = ShardSelector::ForRanges(ShardField::kUid, {ShardRange::Of(0, 2)});
  auto hi = ShardSelector::ForRanges(ShardField::kUid, {ShardRange::Of(1, 2)});
  auto both = ShardSelector::ForRanges(
      ShardField::kUid, {ShardRange::Of(0, 2), ShardRange::Of(1, 2)});
  for (int i = 0; i < 200; ++i) {
    std::string u = "uid-" + std::to_string(i);
    EXPECT_NE(lo.Matches(u, ""), hi.Matches(u, "")) << u;
    EXPECT_TRUE(both.Matches(u, ""));
  }
  EXPECT_TRUE(ShardSelector().Matches("anything", ""));

  // By namespace: the uid does not matter, and "" is the cluster scope.
  const uint64_t ns_hash = Fnv1a64("team-a");
  auto by_ns = ShardSelector::ForRanges(
      ShardField::kNamespace,
      {ShardRange{absl::uint128(ns_hash), absl::uint128(ns_hash) + 1}});
  EXPECT_TRUE(by_ns.Matches("u1", "team-a"));
  EXPECT_TRUE(by_ns.Matches("u2", "team-a"));
  EXPECT_FALSE(by_ns.Matches("u1", "team-b"));

  rapidjson::Document d;
  d.Parse(R"({"metadata":{"name":"x","namespace":"team-a","uid":"u1"}})");
  EXPECT_TRUE(by_ns.Matches(d));
  d.Parse(R"({"metadata":{"name":"x","uid":"u1"}})");
  EXPECT_FALSE(by_ns.Matches(d));
  auto cluster = ShardSelector::ForRanges(
      ShardField::kNamespace,
      {ShardRange{absl::uint128(Fnv1a64("")), absl::uint128(Fnv1a64("")) + 1}});
  EXPECT_TRUE(cluster.Matches(d));
}

}  // namespace
}  // namespace api
}  // namespace kcr
