#include "runtime/client/watch_decoder.h"

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "api/errors/errors.h"
#include "gtest/gtest.h"

namespace kcr::client {
namespace {

std::string ReadTestdata(const std::string& name) {
  std::ifstream in("test/runtime/client/testdata/" + name, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

// A comparable summary of an event.
std::string Describe(const WatchEvent& e) {
  std::string out(EventTypeName(e.type));
  out += " ";
  out += e.object ? e.object->ToJson() : "<null>";
  if (!e.error.ok()) out += " error=" + e.error.ToString();
  return out;
}

std::vector<std::string> DecodeChunks(
    const std::vector<std::string_view>& chunks, absl::Status* finish) {
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  for (std::string_view c : chunks) {
    absl::Status s = decoder.Feed(c, &events);
    EXPECT_TRUE(s.ok()) << s;
  }
  *finish = decoder.Finish();
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(Describe(e));
  return out;
}

class RecordedStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    stream_ = ReadTestdata("watch_stream.json");
    ASSERT_FALSE(stream_.empty());
    absl::Status finish;
    whole_ = DecodeChunks({stream_}, &finish);
    ASSERT_TRUE(finish.ok()) << finish;
  }
  std::string stream_;
  std::vector<std::string> whole_;
};

TEST_F(RecordedStreamTest, DecodesEveryEventType) {
  ASSERT_EQ(whole_.size(), 6u);
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  ASSERT_TRUE(decoder.Feed(stream_, &events).ok());
  EXPECT_EQ(events[0].type, EventType::kAdded);
  EXPECT_EQ(events[0].object->name(), "cm1");
  EXPECT_EQ(events[0].object->resource_version(), "101");
  EXPECT_EQ(events[1].type, EventType::kModified);
  EXPECT_EQ(events[2].type, EventType::kBookmark);
  EXPECT_EQ(events[2].object->resource_version(), "150");
  EXPECT_EQ(events[2].object->Annotation("k8s.io/initial-events-end"), "true");
  EXPECT_EQ(events[3].type, EventType::kDeleted);
  EXPECT_EQ(events[4].object->kind(), "Pod");
  EXPECT_EQ(events[5].type, EventType::kError);
  EXPECT_TRUE(api::IsResourceExpired(events[5].error));
  EXPECT_EQ(events[5].error.message(), "too old resource version: 100 (200)");
  EXPECT_EQ(decoder.events_decoded(), 6);
}

TEST_F(RecordedStreamTest, EverySplitPointGivesTheSameEvents) {
  for (size_t i = 0; i <= stream_.size(); ++i) {
    std::string_view s(stream_);
    absl::Status finish;
    auto got = DecodeChunks({s.substr(0, i), s.substr(i)}, &finish);
    ASSERT_TRUE(finish.ok()) << "split at " << i;
    ASSERT_EQ(got, whole_) << "split at " << i;
  }
}

TEST_F(RecordedStreamTest, EveryPairOfSplitPointsInTheFirstEvents) {
  // Three-way splits over the first two events (escapes, unicode, nesting).
  std::string_view s(stream_);
  size_t limit = s.find('\n', s.find('\n') + 1) + 1;
  for (size_t i = 0; i <= limit; i += 29) {
    for (size_t j = i; j <= limit; ++j) {
      absl::Status finish;
      auto got = DecodeChunks({s.substr(0, i), s.substr(i, j - i), s.substr(j)},
                              &finish);
      ASSERT_TRUE(finish.ok());
      ASSERT_EQ(got, whole_) << i << "," << j;
    }
  }
}

TEST_F(RecordedStreamTest, ByteByByte) {
  std::vector<std::string_view> chunks;
  for (size_t i = 0; i < stream_.size(); ++i) {
    chunks.push_back(std::string_view(stream_).substr(i, 1));
  }
  absl::Status finish;
  EXPECT_EQ(DecodeChunks(chunks, &finish), whole_);
  EXPECT_TRUE(finish.ok());
}

TEST_F(RecordedStreamTest, EventsWithoutNewlinesOrWithCrlf) {
  std::string joined;
  std::string crlf;
  for (size_t start = 0; start < stream_.size();) {
    size_t end = stream_.find('\n', start);
    joined += stream_.substr(start, end - start);
    crlf += stream_.substr(start, end - start) + "\r\n\r\n";
    start = end + 1;
  }
  absl::Status finish;
  EXPECT_EQ(DecodeChunks({joined}, &finish), whole_);
  EXPECT_EQ(DecodeChunks({crlf}, &finish), whole_);
}

TEST(WatchDecoderTest, LinesThatAreNotOneEventEach) {
  // Each is read as whole lines first: a line holding part of an event, or
  // more than one, must still give exactly the events in it, in order.
  const std::string a =
      R"({"type":"ADDED","object":{"metadata":{"name":"a"}}})";
  const std::string b =
      R"({"type":"MODIFIED","object":{"metadata":{"name":"b"}}})";
  const std::string c =
      R"({"type":"DELETED","object":{"metadata":{"name":"c"}}})";
  const std::string pretty =
      "{\n  \"type\": \"ADDED\",\n  \"object\": {\n    \"metadata\": "
      "{\"name\": \"p\"}\n  }\n}\n";
  const std::string cut_before_brace =
      "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"q\"}}\n}\n";
  const std::string extra_field =
      R"({"type":"ADDED","object":{"metadata":{"name":"x"}},"more":{"y":1}})";
  const std::vector<std::string> want = {"a", "b", "c", "p", "q", "x", "a"};
  const std::string stream = a + b + "\n" + c + "\n" + pretty +
                             cut_before_brace + extra_field + "\n" + a + "\n";
  for (size_t split = 0; split <= stream.size(); ++split) {
    absl::Status finish;
    WatchDecoder decoder;
    std::vector<WatchEvent> events;
    ASSERT_TRUE(
        decoder.Feed(std::string_view(stream).substr(0, split), &events).ok());
    ASSERT_TRUE(
        decoder.Feed(std::string_view(stream).substr(split), &events).ok());
    ASSERT_TRUE(decoder.Finish().ok());
    std::vector<std::string> names;
    for (const auto& e : events) names.push_back(std::string(e.object->name()));
    EXPECT_EQ(names, want) << "split at " << split;
  }
}

TEST(WatchDecoderTest, InvalidEventOnItsOwnLineIsAnError) {
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  absl::Status s = decoder.Feed(
      "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n"
      "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":5}}}\n",
      &events);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].object->name(), "a");
}

TEST_F(RecordedStreamTest, StreamCutAtEveryPointInsideAnEventIsDataLoss) {
  // Cutting at any byte inside the last event loses it, with an error.
  size_t last_start = stream_.rfind("{\"type\"");
  for (size_t cut = last_start + 1; cut < stream_.size() - 1; ++cut) {
    WatchDecoder decoder;
    std::vector<WatchEvent> events;
    ASSERT_TRUE(
        decoder.Feed(std::string_view(stream_).substr(0, cut), &events).ok());
    EXPECT_EQ(events.size(), 5u);
    absl::Status s = decoder.Finish();
    ASSERT_EQ(s.code(), absl::StatusCode::kDataLoss) << cut;
    EXPECT_NE(s.message().find("middle of an event"), std::string::npos);
    // Sticky.
    EXPECT_EQ(decoder.Feed("{}", &events).code(), absl::StatusCode::kDataLoss);
  }
}

TEST(WatchDecoderTest, HugeObjectInSmallChunks) {
  std::string big(4 << 20, 'x');
  // An escaped quote every 1000 bytes: `\"` decodes to one byte.
  size_t escapes = 0;
  for (size_t i = 1000; i < big.size(); i += 1000, ++escapes) {
    big[i - 1] = '\\';
    big[i] = '"';
  }
  std::string event =
      R"({"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"big","namespace":"d"},"data":{"k":")" +
      big + "\"}}}\n";
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  for (size_t i = 0; i < event.size(); i += 4093) {
    ASSERT_TRUE(
        decoder.Feed(std::string_view(event).substr(i, 4093), &events).ok());
  }
  ASSERT_TRUE(decoder.Finish().ok());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].object->name(), "big");
  EXPECT_EQ(events[0].object->Find("/data/k")->GetStringLength(),
            big.size() - escapes);
}

TEST(WatchDecoderTest, ManyEventsInOneChunk) {
  std::string stream;
  for (int i = 0; i < 1000; ++i) {
    stream +=
        R"({"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c)" +
        std::to_string(i) + R"(","resourceVersion":")" + std::to_string(i) +
        "\"}}}\n";
  }
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  ASSERT_TRUE(decoder.Feed(stream, &events).ok());
  ASSERT_EQ(events.size(), 1000u);
  EXPECT_EQ(events[999].object->name(), "c999");
}

TEST(WatchDecoderTest, EventLargerThanTheLimitIsAnError) {
  WatchDecoderOptions options;
  options.max_event_bytes = 100;
  WatchDecoder decoder(options);
  std::vector<WatchEvent> events;
  std::string event = R"({"type":"ADDED","object":{"metadata":{"name":")" +
                      std::string(200, 'a') + "\"}}}";
  absl::Status s = decoder.Feed(event.substr(0, 50), &events);
  EXPECT_TRUE(s.ok());
  s = decoder.Feed(event.substr(50), &events);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  WatchDecoder one_chunk(options);
  EXPECT_EQ(one_chunk.Feed(event, &events).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(events.empty());
}

TEST(WatchDecoderTest, MalformedEventsAreErrorsNotCrashes) {
  const char* bad[] = {
      "x",                                                   // garbage
      "{\"type\":\"ADDED\",\"object\":{\"metadata\":{}},}",  // bad JSON
      "{\"object\":{\"metadata\":{}}}",                      // no type
      "{\"type\":7,\"object\":{\"metadata\":{}}}",  // type not a string
      "{\"type\":\"RENAMED\",\"object\":{\"metadata\":{}}}",  // unknown type
      "{\"type\":\"ADDED\"}",                                 // no object
      "{\"type\":\"ADDED\",\"object\":[]}",  // object not object
      "{\"type\":\"ADDED\",\"object\":{}}",  // no metadata
      "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":5}}}",
      // invalid UTF-8, in the form kube-apiserver writes and otherwise
      "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\xff\"}}}",
      "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"\xc3\"}}}\n",
      "{ "
      "\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"\xed\xa0\x80\"}}"
      "}",
      "]",
  };
  for (const char* b : bad) {
    WatchDecoder decoder;
    std::vector<WatchEvent> events;
    absl::Status s = decoder.Feed(b, &events);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << b;
    EXPECT_TRUE(events.empty()) << b;
    EXPECT_EQ(decoder.Finish().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(WatchDecoderTest, DeepNestingIsRejectedWithoutRecursion) {
  std::string deep = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{},\"x\":";
  deep += std::string(200000, '[');
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  absl::Status s = decoder.Feed(deep, &events);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("deeper"), std::string::npos);
}

TEST(WatchDecoderTest, EventsBeforeAnErrorAreKept) {
  std::string stream =
      "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n{"
      "\"type\":";
  stream += "\"ADDED\",\"object\":5}\n";
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  EXPECT_FALSE(decoder.Feed(stream, &events).ok());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].object->name(), "a");
}

TEST(WatchDecoderTest, EmptyStreamAndWhitespaceFinishCleanly) {
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  EXPECT_TRUE(decoder.Feed("", &events).ok());
  EXPECT_TRUE(decoder.Feed(" \n\r\n", &events).ok());
  EXPECT_TRUE(decoder.Finish().ok());
  EXPECT_TRUE(events.empty());
}

}  // namespace
}  // namespace kcr::client
