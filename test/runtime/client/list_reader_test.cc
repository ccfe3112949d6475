#include "runtime/client/list_reader.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/fakes/fake_body_reader.h"

namespace kcr::client {
namespace {

using ::testing::HasSubstr;

using FakeBody = ::kcr::testing::FakeBodyReader;

std::string Items(int n) {
  std::string body = R"({"kind":"ConfigMapList","apiVersion":"v1",)"
                     R"("metadata":{"resourceVersion":"5"},"items":[)";
  for (int i = 0; i < n; ++i) {
    if (i > 0) body += ",";
    absl::StrAppend(&body, R"({"metadata":{"name":"cm-)", i,
                    R"(","namespace":"d"},"data":{"k":")",
                    std::string(static_cast<size_t>(i % 300), 'v'), R"("}})");
  }
  return body + "]}";
}

struct Result {
  std::vector<std::string> names;
  absl::StatusOr<ListMeta> meta;
};

Result Read(const Context& ctx, BodyReader& body, int parse_threads) {
  Result r;
  ListReaderOptions options;
  options.parse_threads = parse_threads;
  r.meta = ReadList(ctx, body, options, [&r](api::ObjectPtr item) {
    EXPECT_EQ(item->kind(), "ConfigMap");
    r.names.push_back(std::string(item->name()));
    return absl::OkStatus();
  });
  return r;
}

class ListReaderTest : public ::testing::TestWithParam<int> {};

TEST_P(ListReaderTest, HandsOverEveryItemInOrder) {
  const int n = 3000;
  for (size_t chunk : {size_t{1} << 16, size_t{977}, size_t{10}}) {
    FakeBody body(Items(n), chunk);
    Result r = Read(Context::Background(), body, GetParam());
    ASSERT_TRUE(r.meta.ok()) << r.meta.status();
    EXPECT_EQ(r.meta->resource_version, "5");
    ASSERT_EQ(r.names.size(), static_cast<size_t>(n)) << chunk;
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(r.names[static_cast<size_t>(i)], absl::StrCat("cm-", i));
    }
  }
}

TEST_P(ListReaderTest, BrokenBodyMidListIsDataLoss) {
  std::string body = Items(100);
  body.resize(body.size() / 2);
  FakeBody reader(body, 1000, absl::UnavailableError("connection reset"));
  Result r = Read(Context::Background(), reader, GetParam());
  ASSERT_FALSE(r.meta.ok());
  EXPECT_EQ(r.meta.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(r.meta.status().message()),
              HasSubstr("connection reset"));
  EXPECT_GT(r.names.size(), 10u);
  EXPECT_LT(r.names.size(), 100u);
}

TEST_P(ListReaderTest, BadItemStopsAfterTheGoodOnes) {
  std::string body = Items(50);
  body.replace(body.find(R"("name":"cm-20")"), 14, R"("name":20     )");
  FakeBody reader(body, 512);
  Result r = Read(Context::Background(), reader, GetParam());
  EXPECT_EQ(r.meta.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.meta.status().message()),
              HasSubstr("items[20] at offset"));
  EXPECT_EQ(r.names.size(), 20u);
}

TEST_P(ListReaderTest, CancelClosesABlockedBody) {
  std::string body = Items(10);
  body.resize(body.size() - 20);
  FakeBody reader(body, 1 << 16, absl::OkStatus(), /*block=*/true);
  auto [ctx, cancel] = WithCancel(Context::Background());
  Result r;
  ListReaderOptions options;
  options.parse_threads = GetParam();
  r.meta =
      ReadList(ctx, reader, options, [&, cancel = cancel](api::ObjectPtr item) {
        r.names.push_back(std::string(item->name()));
        if (r.names.size() == 9) cancel();
        return absl::OkStatus();
      });
  EXPECT_EQ(r.meta.status().code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(reader.cancelled());
  EXPECT_EQ(r.names.size(), 9u);
}

TEST_P(ListReaderTest, CallersErrorStopsTheReader) {
  FakeBody reader(Items(2000), 100);
  int calls = 0;
  ListReaderOptions options;
  options.parse_threads = GetParam();
  auto meta = ReadList(
      Context::Background(), reader, options, [&calls](api::ObjectPtr) {
        return ++calls == 5 ? absl::AbortedError("enough") : absl::OkStatus();
      });
  EXPECT_EQ(meta.status(), absl::AbortedError("enough"));
  EXPECT_EQ(calls, 5);
}

// Reads the body until the first item arrives, then cancels; a bound of
// 10 s (never reached when the reader hands items over) fails the test
// instead of hanging it.
Result ReadUntilFirstItem(BodyReader& body, int parse_threads) {
  auto [bounded, unused] =
      WithTimeout(Context::Background(), absl::Seconds(10));
  auto [ctx, cancel] = WithCancel(bounded);
  Result r;
  ListReaderOptions options;
  options.parse_threads = parse_threads;
  r.meta =
      ReadList(ctx, body, options, [&, cancel = cancel](api::ObjectPtr item) {
        r.names.push_back(std::string(item->name()));
        cancel();
        return absl::OkStatus();
      });
  return r;
}

// Reads that fill the reader's buffer are gathered into one batch, but only
// up to a bound: a body that stalls after a megabyte of full reads has had
// its first items handed over.
TEST_P(ListReaderTest, FullReadsAreHandedOverInBoundedBatches) {
  std::string body = Items(8000);
  ASSERT_GT(body.size(), size_t{1} << 20);
  body.resize(size_t{1} << 20);
  FakeBody reader(body, size_t{1} << 16, absl::OkStatus(), /*block=*/true);
  Result r = ReadUntilFirstItem(reader, GetParam());
  EXPECT_EQ(r.meta.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(r.names.size(), 1u);
}

// A read shorter than the buffer (the network is behind) hands its batch
// over at once, however small.
TEST_P(ListReaderTest, ShortReadIsHandedOverAtOnce) {
  std::string body = Items(8000);
  body.resize(size_t{100} << 10);
  FakeBody reader(body, std::vector<size_t>{size_t{1} << 16, 1000},
                  absl::OkStatus(), /*block=*/true);
  Result r = ReadUntilFirstItem(reader, GetParam());
  EXPECT_EQ(r.meta.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(r.names.size(), 1u);
}

// Items larger than a batch (256 KiB): the batch that holds one grows
// until it is whole, and every item arrives intact and in order, however
// the body is cut; past max_item_bytes the item is refused after the items
// before it.
TEST_P(ListReaderTest, ItemsLargerThanABatchArriveWhole) {
  const std::vector<size_t> sizes = {100, 700 << 10, 50, 300 << 10, 10};
  std::string body = R"({"kind":"ConfigMapList","apiVersion":"v1",)"
                     R"("metadata":{"resourceVersion":"5"},"items":[)";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i > 0) body += ",";
    absl::StrAppend(&body, R"({"metadata":{"name":"cm-)", i,
                    R"(","namespace":"d"},"data":{"k":")",
                    std::string(sizes[i], 'v'), R"("}})");
  }
  body += "]}";
  for (size_t chunk : {size_t{1} << 16, size_t{977}, size_t{100000}}) {
    FakeBody reader(body, chunk);
    std::vector<std::string> seen;
    ListReaderOptions options;
    options.parse_threads = GetParam();
    absl::StatusOr<ListMeta> meta = ReadList(
        Context::Background(), reader, options, [&seen](api::ObjectPtr item) {
          const rapidjson::Value* k = item->Find("/data/k");
          seen.push_back(absl::StrCat(
              std::string(item->name()), " ",
              k != nullptr && k->IsString() ? k->GetStringLength() : 0));
          return absl::OkStatus();
        });
    ASSERT_TRUE(meta.ok()) << meta.status();
    ASSERT_EQ(seen.size(), sizes.size()) << chunk;
    for (size_t i = 0; i < sizes.size(); ++i) {
      EXPECT_EQ(seen[i], absl::StrCat("cm-", i, " ", sizes[i])) << chunk;
    }

    FakeBody limited(body, chunk);
    seen.clear();
    options.decoder.max_item_bytes = 200 << 10;
    meta = ReadList(Context::Background(), limited, options,
                    [&seen](api::ObjectPtr item) {
                      seen.push_back(std::string(item->name()));
                      return absl::OkStatus();
                    });
    EXPECT_EQ(meta.status().code(), absl::StatusCode::kResourceExhausted)
        << chunk;
    EXPECT_THAT(std::string(meta.status().message()),
                HasSubstr("items[1] at offset"));
    EXPECT_EQ(seen, std::vector<std::string>{"cm-0"}) << chunk;
  }
}

TEST(ListReaderDoneTest, DoneContextReadsNothing) {
  FakeBody reader(Items(3), 100);
  auto [ctx, cancel] = WithCancel(Context::Background());
  cancel();
  Result r = Read(ctx, reader, 1);
  EXPECT_EQ(r.meta.status().code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(r.names.empty());
  EXPECT_TRUE(reader.cancelled());
}

INSTANTIATE_TEST_SUITE_P(ParseThreads, ListReaderTest,
                         ::testing::Values(0, 1, 3));

}  // namespace
}  // namespace kcr::client
