#include "runtime/client/list_decoder.h"

#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/json_limits.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kcr::client {
namespace {

using ::testing::HasSubstr;

// What a decode produced, comparable across chunkings.
struct Decoded {
  std::vector<std::string> items;  // each item's JSON
  ListMeta meta;
  absl::Status status;  // the first error, from Feed or Finish
};

Decoded Decode(const std::vector<std::string_view>& chunks,
               ListDecoderOptions options = {}) {
  Decoded out;
  ListDecoder decoder(options, [&out](api::ObjectPtr item) {
    out.items.push_back(item->ToJson());
    return absl::OkStatus();
  });
  for (std::string_view c : chunks) {
    out.status = decoder.Feed(c);
    if (!out.status.ok()) return out;
  }
  out.status = decoder.Finish();
  out.meta = decoder.meta();
  return out;
}

Decoded DecodeWhole(std::string_view body, ListDecoderOptions options = {}) {
  return Decode({body}, options);
}

constexpr char kList[] =
    R"({"kind":"PodList","apiVersion":"v1",)"
    R"("metadata":{"resourceVersion":"42","continue":"c1",)"
    R"("remainingItemCount":7},)"
    R"("items":[{"metadata":{"name":"a","namespace":"x"},)"
    R"("spec":{"s":"br}ace\"q\\","n":[1,{"k":[]}]}},)"
    R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"b"}},)"
    R"({ "metadata" : {"name":"c","labels":{"kind":"x"}} }]})";

TEST(ListDecoderTest, DecodesItemsAndMetadata) {
  Decoded d = DecodeWhole(kList);
  ASSERT_TRUE(d.status.ok()) << d.status;
  ASSERT_EQ(d.items.size(), 3u);
  EXPECT_EQ(d.items[0],
            R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"a",)"
            R"("namespace":"x"},"spec":{"s":"br}ace\"q\\","n":[1,{"k":[]}]}})");
  EXPECT_EQ(d.items[1],
            R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"b"}})");
  EXPECT_EQ(d.items[2],
            R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"c",)"
            R"("labels":{"kind":"x"}}})");
  EXPECT_EQ(d.meta.kind, "PodList");
  EXPECT_EQ(d.meta.api_version, "v1");
  EXPECT_EQ(d.meta.resource_version, "42");
  EXPECT_EQ(d.meta.continue_token, "c1");
  EXPECT_EQ(d.meta.remaining_item_count, 7);
}

TEST(ListDecoderTest, EveryChunkSplitDecodesTheSame) {
  const std::string body = kList;
  const Decoded whole = DecodeWhole(body);
  ASSERT_TRUE(whole.status.ok());
  for (size_t a = 0; a <= body.size(); ++a) {
    for (size_t b = a; b <= body.size(); b += 7) {
      std::string_view v = body;
      Decoded d = Decode({v.substr(0, a), v.substr(a, b - a), v.substr(b)});
      ASSERT_TRUE(d.status.ok()) << a << "," << b << ": " << d.status;
      ASSERT_EQ(d.items, whole.items) << a << "," << b;
      ASSERT_EQ(d.meta.resource_version, "42");
    }
  }
  // One byte at a time.
  std::vector<std::string_view> bytes;
  for (size_t i = 0; i < body.size(); ++i)
    bytes.push_back(std::string_view(body).substr(i, 1));
  Decoded d = Decode(bytes);
  ASSERT_TRUE(d.status.ok()) << d.status;
  EXPECT_EQ(d.items, whole.items);
}

TEST(ListDecoderTest, MetadataAfterItems) {
  const std::string body =
      R"({"items":[{"metadata":{"name":"a"}},{"kind":"Pod","metadata":)"
      R"({"name":"b"}}],"metadata":{"resourceVersion":"9"},)"
      R"("kind":"PodList","apiVersion":"v1","extra":[true,null,1.5e3]})";
  for (size_t split = 0; split <= body.size(); ++split) {
    std::string_view v = body;
    Decoded d = Decode({v.substr(0, split), v.substr(split)});
    ASSERT_TRUE(d.status.ok()) << split << ": " << d.status;
    ASSERT_EQ(d.items.size(), 2u);
    // Held until the list's kind and apiVersion were seen, then filled.
    EXPECT_EQ(d.items[0],
              R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}})");
    EXPECT_EQ(d.items[1],
              R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"}})");
    EXPECT_EQ(d.meta.resource_version, "9");
    EXPECT_EQ(d.meta.kind, "PodList");
  }
}

TEST(ListDecoderTest, ItemsWithTheirOwnTypeAreNotHeld) {
  std::vector<std::string> seen;
  ListDecoder decoder({}, [&seen](api::ObjectPtr item) {
    seen.push_back(std::string(item->name()));
    return absl::OkStatus();
  });
  ASSERT_TRUE(decoder
                  .Feed(R"({"items":[{"kind":"A","apiVersion":"v1",)"
                        R"("metadata":{"name":"a"}},)")
                  .ok());
  EXPECT_EQ(seen, std::vector<std::string>{"a"});
  ASSERT_TRUE(
      decoder.Feed(R"({"metadata":{"name":"b"}}],"kind":"AList",)").ok());
  EXPECT_EQ(seen.size(), 1u);  // b waits for apiVersion
  ASSERT_TRUE(decoder.Feed(R"("apiVersion":"x/v1"})").ok());
  ASSERT_TRUE(decoder.Finish().ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b"}));
}

TEST(ListDecoderTest, EmptyAndNullItems) {
  Decoded d = DecodeWhole(R"({"kind":"PodList","items":[]})");
  EXPECT_TRUE(d.status.ok()) << d.status;
  EXPECT_TRUE(d.items.empty());
  d = DecodeWhole(R"({"kind":"PodList","apiVersion":"v1","items":null})");
  EXPECT_TRUE(d.status.ok()) << d.status;
  d = DecodeWhole(R"({"kind":"PodList","metadata":{}})");
  EXPECT_TRUE(d.status.ok()) << d.status;
  d = DecodeWhole(
      R"({"kind":"XList","apiVersion":"v1","items":[{"metadata":{}}, {}]})");
  // {} has no metadata: not a Kubernetes object.
  EXPECT_EQ(d.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(d.items.size(), 1u);
}

TEST(ListDecoderTest, StripsManagedFields) {
  ListDecoderOptions options;
  options.parse_options.strip_managed_fields = true;
  Decoded d = DecodeWhole(
      R"({"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a",)"
      R"("managedFields":[{"manager":"m"}]}}]})",
      options);
  ASSERT_TRUE(d.status.ok()) << d.status;
  EXPECT_EQ(d.items[0],
            R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}})");
}

TEST(ListDecoderTest, EscapedMemberNames) {
  Decoded d =
      DecodeWhole(R"({"ki\u006ed":"PodList","apiVersion":"v1","\u0069tems":[)"
                  R"({"\u006bind":"Own","metadata":{"name":"a"}}]})");
  ASSERT_TRUE(d.status.ok()) << d.status;
  EXPECT_EQ(d.meta.kind, "PodList");
  ASSERT_EQ(d.items.size(), 1u);
  EXPECT_EQ(d.items[0],
            R"({"apiVersion":"v1","kind":"Own","metadata":{"name":"a"}})");
}

struct Hostile {
  std::string name;
  std::string body;
  absl::StatusCode code;
  std::string message;
};

class HostileListTest : public ::testing::TestWithParam<Hostile> {};

TEST_P(HostileListTest, IsAClearError) {
  const Hostile& h = GetParam();
  ListDecoderOptions options;
  options.max_item_bytes = 4096;
  Decoded d = DecodeWhole(h.body, options);
  EXPECT_EQ(d.status.code(), h.code) << d.status;
  EXPECT_THAT(std::string(d.status.message()), HasSubstr(h.message));
  // Every split gives the same error.
  for (size_t split = 0; split <= h.body.size(); split += 3) {
    std::string_view v = h.body;
    Decoded s = Decode({v.substr(0, split), v.substr(split)}, options);
    EXPECT_EQ(s.status, d.status) << split;
  }
}

std::string Nested(int depth) {
  return absl::StrCat(R"({"kind":"PodList","items":[{"metadata":{},"x":)",
                      std::string(depth, '['), std::string(depth, ']'), "}]}");
}

INSTANTIATE_TEST_SUITE_P(
    Bodies, HostileListTest,
    ::testing::Values(
        Hostile{"Array", "[1,2]", absl::StatusCode::kInvalidArgument,
                "the body is not a JSON object ('[') at offset 0"},
        Hostile{"Scalar", "  42", absl::StatusCode::kInvalidArgument,
                "at offset 2"},
        Hostile{"Empty", "", absl::StatusCode::kDataLoss,
                "list response is empty"},
        Hostile{"NotAList", R"({"kind":"Pod","metadata":{"name":"a"}})",
                absl::StatusCode::kInvalidArgument, "not a list"},
        Hostile{"ItemsNotArray", R"({"kind":"PodList","items":{"a":1}})",
                absl::StatusCode::kInvalidArgument,
                "items is not an array at offset 26"},
        Hostile{"ItemNotObject",
                R"({"kind":"PodList","items":[{"metadata":{}},7]})",
                absl::StatusCode::kInvalidArgument,
                "items[1] is not a JSON object ('7') at offset 43"},
        Hostile{"ItemNotKubernetesObject",
                R"({"kind":"PodList","items":[{"metadata":7}]})",
                absl::StatusCode::kInvalidArgument,
                "items[0] at offset 27: metadata is not an object"},
        Hostile{"BadJsonInItem",
                R"({"kind":"PodList","items":[{"metadata":{}, x}]})",
                absl::StatusCode::kInvalidArgument,
                "items[0] at offset 27: invalid JSON"},
        Hostile{"MissingComma",
                R"({"kind":"PodList","items":[{"metadata":{}} {}]})",
                absl::StatusCode::kInvalidArgument,
                "expected ',' or ']' after items[0], found '{' at offset 43"},
        Hostile{"TrailingGarbage",
                R"({"kind":"PodList","items":[]} {"kind":"x"})",
                absl::StatusCode::kInvalidArgument,
                "data after the end of the list ('{') at offset 30"},
        Hostile{"BadMember",
                R"({"kind":"PodList","metadata":{"a":},"items":[]})",
                absl::StatusCode::kInvalidArgument,
                "member \"metadata\" is not valid JSON"},
        Hostile{"DeepItem", Nested(300), absl::StatusCode::kInvalidArgument,
                "items[0] nests deeper than 256 levels at offset"},
        Hostile{"DeepMember",
                absl::StrCat(R"({"x":)", std::string(300, '['),
                             std::string(300, ']'), "}"),
                absl::StatusCode::kInvalidArgument,
                "member \"x\" nests deeper than 256 levels at offset 261"},
        Hostile{"HugeItem",
                absl::StrCat(R"({"kind":"PodList","items":[{"metadata":{},)",
                             R"("x":")", std::string(5000, 'a'), "\"}]}"),
                absl::StatusCode::kResourceExhausted,
                "items[0] at offset 27 exceeds the limit of 4096 bytes"},
        Hostile{"TruncatedInItem",
                R"({"kind":"PodList","items":[{"metadata":{"name":"a"}},{"met)",
                absl::StatusCode::kDataLoss,
                "list response ended early after 58 bytes (1 complete items)"},
        Hostile{"TruncatedAfterItems", R"({"kind":"PodList","items":[])",
                absl::StatusCode::kDataLoss, "ended early after 28 bytes"},
        Hostile{"TruncatedScalar", R"({"kind":"PodList","items":[],"n":12)",
                absl::StatusCode::kDataLoss, "ended early"},
        Hostile{"TrailingComma", R"({"kind":"PodList","items":[],})",
                absl::StatusCode::kInvalidArgument,
                "expected a member name, found '}' at offset 29"},
        Hostile{"InvalidUtf8InItem",
                "{\"kind\":\"PodList\",\"items\":[{\"metadata\":"
                "{\"name\":\"a\xff\xfe\"}}]}",
                absl::StatusCode::kInvalidArgument,
                "items[0] at offset 27: invalid JSON"},
        Hostile{"TwoItems", R"({"kind":"PodList","items":[],"items":[]})",
                absl::StatusCode::kInvalidArgument, "a second \"items\""}),
    [](const ::testing::TestParamInfo<Hostile>& info) {
      return info.param.name;
    });

// Items whose escapes, strings and brackets fall at every position of a
// 64-byte block, and on both sides of every chunk boundary: the framer's
// vector scan (whole chunks) must frame exactly as its byte-at-a-time
// loop (1-byte chunks), errors included.
// Pairs of the value and the body.
std::vector<std::pair<std::string, std::string>> EscapeBodies() {
  const std::vector<std::string> values = {
      R"("a\"b")",
      R"("\\")",
      R"("\\\"}")",
      R"("x\\\\")",
      R"("\\\\\"{[")",
      R"("\u0041\n\t\/")",
      R"("}]\",{\\")",
      R"(["\"",{"\\":"\\\""}])",
      R"("\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\")",
      // Not JSON: a backslash outside strings escapes nothing.
      R"(1\"}")",
      R"(\\"x")",
      R"({\"a":1})",
      R"("a"\,"b")",
  };
  std::vector<std::pair<std::string, std::string>> bodies;
  for (const std::string& value : values) {
    for (int pad = 0; pad < 66; ++pad) {
      bodies.emplace_back(
          value,
          absl::StrCat(
              R"({"kind":"PodList","apiVersion":"v1","items":[{"metadata":)",
              R"({"name":")", std::string(pad, 'p'), R"("},"x":)", value,
              R"(,"y":")", std::string(65 - pad, 'q'), R"("},)",
              R"({"k\u0069nd":"Own","metadata":{"name":"b"},")",
              std::string(pad, 'k'), R"(":)", value, R"(}]})"));
    }
  }
  return bodies;
}

TEST(ListDecoderTest, EscapesAtEveryBlockPositionAndChunkBoundary) {
  int ok = 0;
  for (const auto& [value, body] : EscapeBodies()) {
    std::vector<std::string_view> bytes;
    for (size_t i = 0; i < body.size(); ++i)
      bytes.push_back(std::string_view(body).substr(i, 1));
    const Decoded oracle = Decode(bytes);
    const Decoded whole = DecodeWhole(body);
    ASSERT_EQ(whole.status, oracle.status) << body;
    ASSERT_EQ(whole.items, oracle.items) << body;
    if (oracle.status.ok()) {
      ++ok;
      EXPECT_EQ(oracle.items.size(), 2u);
    }
    // Chunk boundaries at and around every byte of the two values.
    std::vector<size_t> splits;
    for (size_t at : {body.find(value), body.rfind(value)}) {
      for (size_t s = at - 1; s <= at + value.size() + 1; ++s) {
        splits.push_back(s);
      }
    }
    for (size_t split : splits) {
      std::string_view v = body;
      Decoded d = Decode({v.substr(0, split), v.substr(split)});
      ASSERT_EQ(d.status, oracle.status) << split << " " << body;
      ASSERT_EQ(d.items, oracle.items) << split << " " << body;
    }
  }
  // The valid ones decode (the test is not comparing errors only).
  EXPECT_EQ(ok, 9 * 66);
}

// Blocks deep inside an item are framed by their depth alone; empty "{}"
// and "[]" there, and closes that come back to the item's top level (where
// its own "kind" must still be seen), at every alignment in a block.
TEST(ListDecoderTest, DeepBlocksWithEmptyBracketsFrameAsBytesDo) {
  int ok = 0;
  for (int pad = 0; pad < 64; ++pad) {
    const std::string empties = absl::StrCat(R"("e":{},"f":[],"g":[{},[]],)",
                                             std::string(pad % 7, ' '));
    std::string deep = "1";
    for (int d = 0; d < 6; ++d) {
      deep = absl::StrCat(R"({"p":")", std::string(pad, 'p'), R"(",)", empties,
                          empties, R"("v":)", deep, "}");
    }
    const std::string body = absl::StrCat(
        R"({"kind":"PodList","apiVersion":"v1","items":[{"metadata":)",
        R"({"name":"a"},"spec":)", deep, R"(,"kind":"Own"},)",
        R"({"metadata":{"name":"b"},"x":[)", deep, R"(,{}],"y":{}}]})");
    std::vector<std::string_view> bytes;
    for (size_t i = 0; i < body.size(); ++i) {
      bytes.push_back(std::string_view(body).substr(i, 1));
    }
    const Decoded oracle = Decode(bytes);
    const Decoded whole = DecodeWhole(body);
    ASSERT_TRUE(oracle.status.ok()) << oracle.status << " " << body;
    ASSERT_EQ(whole.status, oracle.status) << body;
    ASSERT_EQ(whole.items, oracle.items) << body;
    ASSERT_EQ(whole.items.size(), 2u);
    EXPECT_THAT(whole.items[0], HasSubstr(R"("kind":"Own")"));
    EXPECT_THAT(whole.items[0], ::testing::Not(HasSubstr(R"("kind":"Pod")")));
    EXPECT_THAT(whole.items[1], HasSubstr(R"("kind":"Pod")"));
    ++ok;
  }
  EXPECT_EQ(ok, 64);
}

// An empty "{}" at the nesting limit is one level too deep, wherever it
// falls in a block; one level less is fine.
TEST(ListDecoderTest, EmptyBracketsAtTheDepthLimit) {
  for (int below = 0; below <= 1; ++below) {
    for (int pad = 0; pad < 64; ++pad) {
      // The item's '{' is level 1; then arrays up to level kMaxJsonDepth
      // - below, then "{}" one level more.
      const int arrays = api::kMaxJsonDepth - 1 - below;
      const std::string body = absl::StrCat(
          R"({"kind":"PodList","items":[{"p":")", std::string(pad, 'p'),
          R"(","x":)", std::string(arrays, '['), "{},{},[],{}",
          std::string(arrays, ']'), R"(,"metadata":{"name":"a"}}]})");
      std::vector<std::string_view> bytes;
      for (size_t i = 0; i < body.size(); ++i) {
        bytes.push_back(std::string_view(body).substr(i, 1));
      }
      const Decoded oracle = Decode(bytes);
      const Decoded whole = DecodeWhole(body);
      ASSERT_EQ(whole.status, oracle.status) << below << " " << pad;
      ASSERT_EQ(whole.items, oracle.items) << below << " " << pad;
      if (below == 0) {
        EXPECT_THAT(whole.status.message(), HasSubstr("nests deeper than"));
      } else {
        // Valid framing; parsing has its own limit, the same one.
        EXPECT_THAT(
            whole.status.message(),
            ::testing::Not(HasSubstr("nests deeper than 256 levels at")))
            << whole.status;
      }
    }
  }
}

TEST(ListDecoderTest, DepthErrorInsideALongItemNamesItsByte) {
  // The 257th '[' is at a known offset whatever the chunking.
  const std::string body =
      absl::StrCat(R"({"kind":"PodList","items":[{"a":"\\\"",)", R"("x":)",
                   std::string(300, '['), std::string(300, ']'), "}]}");
  const size_t at = body.find('[', body.find("\"x\":")) + 255;
  const Decoded whole = DecodeWhole(body);
  EXPECT_EQ(whole.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(whole.status.message()),
              HasSubstr(absl::StrCat("items[0] nests deeper than 256 levels "
                                     "at offset ",
                                     at)));
  for (size_t split = 1; split < body.size(); split += 5) {
    std::string_view v = body;
    EXPECT_EQ(Decode({v.substr(0, split), v.substr(split)}).status,
              whole.status)
        << split;
  }
}

// The framer tells the parser what it saw of each item (a non-ASCII byte,
// a "\u" escape) wherever in a block or chunk that is, so that the parse
// validates UTF-8 and repairs lone surrogates exactly when Object::Parse
// would; an item with neither, far enough from the next, says so.
TEST(ListDecoderTest, FramerReportsNonAsciiAndUnicodeEscapes) {
  struct Case {
    std::string value;  // a JSON string value put inside the first item
    bool non_ascii;
    bool unicode_escape;
  };
  const std::vector<Case> cases = {
      {R"("plain")", false, false},
      {"\"caf\xC3\xA9\"", true, false},
      {R"("\u00e9")", false, true},
      {R"("a\udc00b")", false, true},
      {R"("\\u")", false, false},  // an escaped backslash, then 'u'
      {"\"\xff\"", true, false},
      {"\"\\\xC3\xA9\"", true, false},  // an escaped non-ASCII byte
  };
  for (const Case& c : cases) {
    for (int pad = 0; pad < 66; ++pad) {
      const std::string body = absl::StrCat(
          R"({"kind":"PodList","apiVersion":"v1","items":[{"metadata":)",
          R"({"name":")", std::string(pad, 'p'), R"("},"x":)", c.value,
          R"(,"y":")", std::string(65 - pad, 'q'), R"("},)",
          R"({"metadata":{"name":"b"},"z":")", std::string(70, 'z'), R"("}]})");
      // Whole, byte by byte, and split around the value.
      std::vector<std::vector<std::string_view>> chunkings;
      chunkings.push_back({body});
      std::vector<std::string_view> bytes;
      for (size_t i = 0; i < body.size(); ++i) {
        bytes.push_back(std::string_view(body).substr(i, 1));
      }
      chunkings.push_back(bytes);
      const size_t at = body.find(c.value);
      for (size_t split = at - 1; split <= at + c.value.size() + 1; ++split) {
        chunkings.push_back({std::string_view(body).substr(0, split),
                             std::string_view(body).substr(split)});
      }
      for (const auto& chunks : chunkings) {
        ListFramer framer;
        FramedItems framed;
        for (std::string_view chunk : chunks) {
          ASSERT_TRUE(framer.Feed(chunk, &framed).ok()) << body;
        }
        ASSERT_TRUE(framer.Finish(&framed).ok()) << body;
        ASSERT_EQ(framed.items.size(), 2u) << body;
        EXPECT_EQ(framed.items[0].non_ascii, c.non_ascii)
            << c.value << " " << pad << " chunks " << chunks.size();
        EXPECT_EQ(framed.items[0].unicode_escape, c.unicode_escape)
            << c.value << " " << pad << " chunks " << chunks.size();
        EXPECT_FALSE(framed.items[1].non_ascii) << body;
        EXPECT_FALSE(framed.items[1].unicode_escape) << body;
      }
      // And the decoded items are what Object::Parse makes of them.
      const Decoded d = DecodeWhole(body);
      const std::string item = absl::StrCat(
          R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")",
          std::string(pad, 'p'), R"("},"x":)", c.value, R"(,"y":")",
          std::string(65 - pad, 'q'), R"("})");
      absl::StatusOr<api::ObjectPtr> want = api::Object::Parse(item);
      if (want.ok()) {
        ASSERT_TRUE(d.status.ok()) << d.status << " " << body;
        EXPECT_EQ(d.items[0], (*want)->ToJson()) << body;
      } else {
        EXPECT_EQ(d.status.code(), absl::StatusCode::kInvalidArgument);
        EXPECT_THAT(d.status.message(),
                    HasSubstr(std::string(want.status().message())))
            << body;
      }
    }
  }
}

TEST(ListDecoderTest, SinkErrorStops) {
  int calls = 0;
  ListDecoder decoder({}, [&calls](api::ObjectPtr) {
    ++calls;
    return absl::AbortedError("enough");
  });
  EXPECT_TRUE(absl::IsAborted(decoder.Feed(kList)));
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(absl::IsAborted(decoder.Finish()));  // sticky
}

TEST(ListDecoderTest, ErrorsAreSticky) {
  ListDecoder decoder({}, [](api::ObjectPtr) { return absl::OkStatus(); });
  absl::Status first = decoder.Feed("[");
  EXPECT_FALSE(first.ok());
  EXPECT_EQ(decoder.Feed("{}"), first);
  EXPECT_EQ(decoder.Finish(), first);
}

}  // namespace
// What a framer made of a body, fed in the given chunks.
struct Framing {
  std::string status;
  std::vector<std::string> items;  // bytes and every field, printed
  std::string meta;
  int64_t offset = 0;
};

Framing FrameWith(bool avx2, std::string_view body,
                  const std::vector<size_t>& splits) {
  ListFramer framer;
  framer.set_avx2_block_scan(avx2);
  FramedItems framed;
  absl::Status status;
  size_t from = 0;
  for (size_t i = 0; i <= splits.size() && status.ok(); ++i) {
    const size_t to = i < splits.size() ? splits[i] : body.size();
    status = framer.Feed(body.substr(from, to - from), &framed);
    from = to;
  }
  if (status.ok()) status = framer.Finish(&framed);
  Framing f;
  f.status = status.ToString();
  for (const FramedItems::Item& item : framed.items) {
    f.items.push_back(absl::StrCat(
        item.index, " ", item.offset, " ", item.begin, " ", item.needs_kind,
        item.needs_api_version, item.check_type, item.non_ascii,
        item.unicode_escape, " ", framed.bytes.substr(item.begin, item.size)));
  }
  f.meta = absl::StrCat(framer.meta().kind, " ", framer.meta().api_version, " ",
                        framed.kind_member, framed.api_version_member);
  f.offset = framer.offset();
  return f;
}

// A random item of the pieces that matter to the block scan: strings with
// escapes (a run of backslashes, \u, an escaped quote), brackets, empty
// "{}" / "[]", deep nesting, commas, non-ASCII bytes and top-level keys
// ("kind", "apiVersion", escaped ones), at every position of a block.
std::string RandomItem(std::mt19937* rng, int max_depth) {
  static const std::vector<std::string> kStrings = {
      R"("a")",       R"("\\")", R"("\"")",      R"("\\\"}]")",
      R"("\u00e9x")", R"("{[")", "\"\xc3\xa9\"", R"("]},")",
      R"("\\\\\\")",  R"("")",   R"("\/")",      R"("q\\u")"};
  const auto pick = [rng](size_t n) {
    return static_cast<size_t>((*rng)() % n);
  };
  std::string out = "{";
  int members = 1 + static_cast<int>(pick(4));
  for (int m = 0; m < members; ++m) {
    if (m > 0) out += ",";
    switch (pick(6)) {
      case 0:
        out += R"("kind":"Pod")";
        break;
      case 1:
        out += R"("apiVersion":"v1")";
        break;
      case 2:
        out += R"("ki\u006ed":"Pod")";
        break;
      default: {
        out +=
            absl::StrCat("\"k", pick(100), std::string(pick(70), 'p'), "\":");
        // A value: nested arrays / objects of strings and numbers.
        std::function<void(int)> value = [&](int depth) {
          const size_t kind = depth >= max_depth ? pick(3) : pick(6);
          if (kind == 0) {
            out += kStrings[pick(kStrings.size())];
          } else if (kind == 1) {
            out += absl::StrCat(pick(100000));
          } else if (kind == 2) {
            out += absl::StrCat("\"", std::string(pick(130), 'x'), "\"");
          } else if (kind == 3) {
            out += pick(2) == 0 ? "{}" : "[]";
          } else if (kind == 4) {
            out += "[";
            const size_t n = pick(4);
            for (size_t i = 0; i < n; ++i) {
              if (i > 0) out += ",";
              value(depth + 1);
            }
            out += "]";
          } else {
            out += "{";
            const size_t n = pick(4);
            for (size_t i = 0; i < n; ++i) {
              if (i > 0) out += ",";
              out += absl::StrCat(kStrings[pick(kStrings.size())], ":");
              value(depth + 1);
            }
            out += "}";
          }
        };
        value(1);
      }
    }
  }
  out += "}";
  return out;
}

// Bodies for comparing two ways of framing: the escape and depth-limit
// bodies, and random lists of RandomItem, whole, cut short and with a
// byte broken; with `kind_last`, also lists whose kind and apiVersion come
// after their items (the framer holds the items until then).
std::vector<std::string> FramerBodies(std::mt19937& rng, bool kind_last) {
  std::vector<std::string> bodies;
  for (const auto& [name, body] : EscapeBodies()) bodies.push_back(body);
  for (int depth : {api::kMaxJsonDepth - 3, api::kMaxJsonDepth - 1,
                    api::kMaxJsonDepth, api::kMaxJsonDepth + 1}) {
    bodies.push_back(Nested(depth));
  }
  for (int b = 0; b < 600; ++b) {
    const bool last = kind_last && b % 2 == 1;
    std::string body = last
                           ? "{\"items\":["
                           : R"({"kind":"PodList","apiVersion":"v1","items":[)";
    const int items = 1 + static_cast<int>(rng() % 6);
    for (int i = 0; i < items; ++i) {
      if (i > 0) body += ",";
      body += RandomItem(&rng, b % 3 == 0 ? api::kMaxJsonDepth + 2 : 6);
    }
    body +=
        last
            ? R"(],"kind":"PodList","metadata":{"resourceVersion":"7"},"apiVersion":"v1"})"
            : R"(],"metadata":{"resourceVersion":"7"}})";
    bodies.push_back(body);
    bodies.push_back(body.substr(0, rng() % body.size()));
    std::string broken = body;
    broken[rng() % broken.size()] = "]}\"\\,{["[rng() % 7];
    bodies.push_back(broken);
  }
  return bodies;
}

// Random cut points of `body` (and none at all).
std::vector<std::vector<size_t>> Splittings(std::mt19937& rng,
                                            std::string_view body) {
  std::vector<std::vector<size_t>> splittings = {{}};
  for (int s = 0; s < 3 && !body.empty(); ++s) {
    std::vector<size_t> splits;
    for (size_t at = rng() % 97; at < body.size(); at += 1 + rng() % 97) {
      splits.push_back(at);
    }
    splittings.push_back(splits);
  }
  return splittings;
}

// Framing's items without where their bytes lie in the batch.
std::vector<std::string> WithoutBegin(const Framing& f) {
  std::vector<std::string> out;
  for (const std::string& item : f.items) {
    // "index offset begin flags bytes": drop the third field.
    const size_t a = item.find(' ');
    const size_t b = item.find(' ', a + 1);
    const size_t c = item.find(' ', b + 1);
    out.push_back(item.substr(0, b) + item.substr(c));
  }
  return out;
}

// As ListReader frames: each chunk read into the batch's own bytes and
// framed there (FeedInPlace); a batch handed over after `per_batch` chunks,
// its unfinished item carried over to the next.
Framing FrameInPlace(std::string_view body, const std::vector<size_t>& splits,
                     size_t per_batch) {
  ListFramer framer;
  std::vector<FramedItems> batches(1);
  FramedItems carry;
  absl::Status status;
  size_t from = 0;
  size_t chunks = 0;
  size_t last_fed = 0;  // the batch that Feed or Finish last wrote to
  for (size_t i = 0; i <= splits.size() && status.ok(); ++i) {
    const size_t to = i < splits.size() ? splits[i] : body.size();
    last_fed = batches.size() - 1;
    FramedItems& batch = batches.back();
    const size_t at = batch.bytes.size();
    batch.bytes.append(body.substr(from, to - from));
    status = framer.FeedInPlace(&batch, at);
    from = to;
    if (++chunks % per_batch == 0) {
      framer.CarryOver(&batch, &carry);
      batches.emplace_back();
      framer.CarryOver(&carry, &batches.back());
    }
  }
  if (status.ok()) {
    status = framer.Finish(&batches.back());
    // Finish sets the members only when it succeeds.
    if (status.ok()) last_fed = batches.size() - 1;
  }
  Framing f;
  f.status = status.ToString();
  for (const FramedItems& batch : batches) {
    for (const FramedItems::Item& item : batch.items) {
      f.items.push_back(absl::StrCat(
          item.index, " ", item.offset, " ", item.begin, " ", item.needs_kind,
          item.needs_api_version, item.check_type, item.non_ascii,
          item.unicode_escape, " ", batch.bytes.substr(item.begin, item.size)));
    }
  }
  f.meta = absl::StrCat(framer.meta().kind, " ", framer.meta().api_version, " ",
                        batches[last_fed].kind_member,
                        batches[last_fed].api_version_member);
  f.offset = framer.offset();
  return f;
}

TEST(ListFramerTest, InPlaceFramingFramesAsFeedDoes) {
  std::mt19937 rng(20261130);
  int compared = 0;
  for (const std::string& body : FramerBodies(rng, /*kind_last=*/true)) {
    for (const std::vector<size_t>& splits : Splittings(rng, body)) {
      const Framing copied =
          FrameWith(ListFramer::Avx2BlockScanAvailable(), body, splits);
      for (size_t per_batch : {size_t{1}, size_t{3}, size_t{1} << 30}) {
        const Framing in_place = FrameInPlace(body, splits, per_batch);
        ASSERT_EQ(in_place.status, copied.status) << body;
        ASSERT_EQ(WithoutBegin(in_place), WithoutBegin(copied)) << body;
        ASSERT_EQ(in_place.meta, copied.meta) << body;
        ASSERT_EQ(in_place.offset, copied.offset) << body;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 6000);
}

TEST(ListFramerTest, InPlaceFramingKeepsTheItemLimit) {
  // An item that grows past the limit across batches is refused at the
  // same byte, whichever batch holds it.
  const std::string body = absl::StrCat(R"({"kind":"PodList","items":[{"a":")",
                                        std::string(5000, 'x'), R"("}]})");
  std::vector<size_t> splits;
  for (size_t at = 100; at < body.size(); at += 100) splits.push_back(at);
  ListFramer framer(4096);
  std::vector<FramedItems> batches(1);
  FramedItems carry;
  absl::Status status;
  size_t from = 0;
  for (size_t to : splits) {
    FramedItems& batch = batches.back();
    const size_t at = batch.bytes.size();
    batch.bytes.append(std::string_view(body).substr(from, to - from));
    status = framer.FeedInPlace(&batch, at);
    from = to;
    if (!status.ok()) break;
    framer.CarryOver(&batch, &carry);
    batches.emplace_back();
    framer.CarryOver(&carry, &batches.back());
  }
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(
      std::string(status.message()),
      HasSubstr("items[0] at offset 27 exceeds the limit of 4096 bytes"));
}

TEST(ListFramerTest, Avx2BlockScanFramesAsThePortableOneDoes) {
  if (!ListFramer::Avx2BlockScanAvailable()) {
    GTEST_SKIP() << "this CPU has no AVX2 / PCLMULQDQ";
  }
  std::mt19937 rng(20261129);
  std::vector<std::string> bodies;
  for (const auto& [name, body] : EscapeBodies()) bodies.push_back(body);
  for (int depth : {api::kMaxJsonDepth - 3, api::kMaxJsonDepth - 1,
                    api::kMaxJsonDepth, api::kMaxJsonDepth + 1}) {
    bodies.push_back(Nested(depth));
  }
  for (int b = 0; b < 600; ++b) {
    std::string body = R"({"kind":"PodList","apiVersion":"v1","items":[)";
    const int items = 1 + static_cast<int>(rng() % 6);
    for (int i = 0; i < items; ++i) {
      if (i > 0) body += ",";
      body += RandomItem(&rng, b % 3 == 0 ? api::kMaxJsonDepth + 2 : 6);
    }
    body += R"(],"metadata":{"resourceVersion":"7"}})";
    bodies.push_back(body);
    // Cut short, and with a byte changed (a bracket, quote or backslash
    // where it breaks the JSON): the same error, at the same offset.
    bodies.push_back(body.substr(0, rng() % body.size()));
    std::string broken = body;
    broken[rng() % broken.size()] = "]}\"\\,{["[rng() % 7];
    bodies.push_back(broken);
  }
  int compared = 0;
  for (const std::string& body : bodies) {
    std::vector<std::vector<size_t>> splittings = {{}};
    for (int s = 0; s < 3 && !body.empty(); ++s) {
      std::vector<size_t> splits;
      for (size_t at = rng() % 97; at < body.size(); at += 1 + rng() % 97) {
        splits.push_back(at);
      }
      splittings.push_back(splits);
    }
    for (const std::vector<size_t>& splits : splittings) {
      const Framing portable = FrameWith(false, body, splits);
      const Framing avx2 = FrameWith(true, body, splits);
      ASSERT_EQ(avx2.status, portable.status) << body;
      ASSERT_EQ(avx2.items, portable.items) << body;
      ASSERT_EQ(avx2.meta, portable.meta) << body;
      ASSERT_EQ(avx2.offset, portable.offset) << body;
      ++compared;
    }
  }
  EXPECT_GT(compared, 2000);
}

}  // namespace kcr::client
