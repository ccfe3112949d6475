#include "runtime/client/stream_watcher.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/mutex.h"
#include "gtest/gtest.h"
#include "runtime/client/watch_decoder.h"
#include "test/fakes/fake_body_reader.h"

namespace kcr::client {
namespace {

using FakeBody = ::kcr::testing::FakeBodyReader;

std::string ReadTestdata(const std::string& name) {
  std::ifstream in("test/runtime/client/testdata/" + name, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

std::string Describe(const WatchEvent& e) {
  std::string out(EventTypeName(e.type));
  out += " ";
  out += e.object ? e.object->ToJson() : "<null>";
  return out;
}

struct Result {
  std::vector<std::string> events;
  absl::Status status;
};

Result Drain(std::unique_ptr<BodyReader> body) {
  auto watch = NewStreamWatcher(Context::Background(), std::move(body), {});
  Result r;
  WatchEvent e;
  while (watch->Next(&e)) r.events.push_back(Describe(e));
  r.status = watch->status();
  return r;
}

// What WatchDecoder makes of `stream` fed whole.
Result Decoded(const std::string& stream) {
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  Result r;
  r.status = decoder.Feed(stream, &events);
  if (r.status.ok()) r.status = decoder.Finish();
  for (const auto& e : events) r.events.push_back(Describe(e));
  return r;
}

std::string Event(const char* type, const std::string& name) {
  return absl::StrCat(R"({"type":")", type,
                      R"(","object":{"kind":"ConfigMap","apiVersion":"v1",)",
                      R"("metadata":{"name":")", name, R"("}}})");
}

// Lines that are one event each, and lines that are not: pretty-printed,
// run together, with more after the object, blank, with CRLF.
std::string MixedStream() {
  return Event("ADDED", "a") + "\n" + Event("MODIFIED", "b") +
         Event("MODIFIED", "c") + "\n\n" +
         "{\n  \"type\": \"DELETED\",\n  \"object\": {\"metadata\": "
         "{\"name\": \"d\"}}\n}\n" +
         R"({"type":"ADDED","object":{"metadata":{"name":"e"}},"x":{"y":1}})" +
         "\r\n" + Event("ADDED", "f") + "\n" + Event("ADDED", "g") + "\n" +
         Event("ADDED", "h") + "\n" + Event("DELETED", "i");
}

TEST(StreamWatcherTest, EveryPairOfReadsGivesTheDecodersEvents) {
  for (const std::string& stream :
       {ReadTestdata("watch_stream.json"), MixedStream()}) {
    ASSERT_FALSE(stream.empty());
    const Result want = Decoded(stream);
    ASSERT_TRUE(want.status.ok()) << want.status;
    // A read of 0 bytes is the end: every split leaves both reads some.
    for (size_t split = 1; split < stream.size(); ++split) {
      Result got = Drain(std::make_unique<FakeBody>(
          stream, std::vector<size_t>{split, stream.size()}));
      EXPECT_TRUE(got.status.ok()) << got.status << " split " << split;
      EXPECT_EQ(got.events, want.events) << "split " << split;
    }
  }
}

TEST(StreamWatcherTest, ReadsOfEverySize) {
  const std::string stream = MixedStream();
  const Result want = Decoded(stream);
  for (size_t size = 1; size < 200; ++size) {
    Result got =
        Drain(std::make_unique<FakeBody>(stream, std::vector<size_t>{size}));
    EXPECT_TRUE(got.status.ok()) << got.status << " size " << size;
    EXPECT_EQ(got.events, want.events) << "size " << size;
  }
}

TEST(StreamWatcherTest, BufferedCountsTheEventsOfTheCurrentRead) {
  const std::string stream = Event("ADDED", "a") + "\n" + Event("ADDED", "b") +
                             "\n" + Event("ADDED", "c") + "\n";
  // One read brings all three.
  auto watch = NewStreamWatcher(
      Context::Background(),
      std::make_unique<FakeBody>(stream, std::vector<size_t>{stream.size()}),
      {});
  EXPECT_EQ(watch->Buffered(), 0u);
  WatchEvent e;
  for (size_t left : {2u, 1u, 0u}) {
    ASSERT_TRUE(watch->Next(&e));
    EXPECT_EQ(watch->Buffered(), left);
  }
  EXPECT_FALSE(watch->Next(&e));
  EXPECT_TRUE(watch->status().ok()) << watch->status();
  EXPECT_EQ(watch->Buffered(), 0u);
}

TEST(StreamWatcherTest, EndsAsTheDecoderSays) {
  const std::string two = Event("ADDED", "a") + "\n" + Event("ADDED", "b");
  const std::string half = two.substr(0, two.size() - 5);
  // Cut inside an event: data loss, whether the body ended or broke.
  Result cut = Drain(std::make_unique<FakeBody>(half, std::vector<size_t>{7}));
  EXPECT_EQ(cut.status.code(), absl::StatusCode::kDataLoss) << cut.status;
  EXPECT_EQ(cut.events.size(), 1u);
  Result broken_inside = Drain(std::make_unique<FakeBody>(
      half, std::vector<size_t>{100}, absl::UnavailableError("reset")));
  EXPECT_EQ(broken_inside.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(broken_inside.status.message().find("reset"), std::string::npos);
  // Broken between events: unavailable, after every event.
  Result broken = Drain(std::make_unique<FakeBody>(
      two + "\n", std::vector<size_t>{100}, absl::UnavailableError("reset")));
  EXPECT_EQ(broken.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(broken.events.size(), 2u);
  // An event that does not decode: the events before it, then its error.
  Result bad = Drain(std::make_unique<FakeBody>(
      two + "\n" + R"({"type":"ADDED","object":{"metadata":{"name":5}}})" +
          "\n" + Event("ADDED", "c") + "\n",
      std::vector<size_t>{1000}));
  EXPECT_EQ(bad.status.code(), absl::StatusCode::kInvalidArgument)
      << bad.status;
  EXPECT_EQ(bad.events.size(), 2u);
}

TEST(StreamWatcherTest, ASlowConsumerSlowsTheReading) {
  std::string stream;
  for (int i = 0; i < 5000; ++i) {
    absl::StrAppend(&stream, Event("MODIFIED", absl::StrCat("cm-", i)), "\n");
  }
  // Reads of one event or so each: far more reads than batches may wait.
  auto body = std::make_unique<FakeBody>(stream, std::vector<size_t>{100},
                                         absl::OkStatus(), /*block=*/true);
  FakeBody* fake = body.get();
  auto watch = NewStreamWatcher(Context::Background(), std::move(body), {});
  WatchEvent e;
  ASSERT_TRUE(watch->Next(&e));
  // The reader fills what may wait and stops: no clock needed, since it
  // never reads on however long it is given.
  int reads = 0;
  for (int i = 0; i < 1000 && reads != fake->reads_done(); ++i) {
    reads = fake->reads_done();
    std::this_thread::yield();
  }
  EXPECT_LT(fake->reads_done(), 100);
  int events = 1;
  while (events < 5000 && watch->Next(&e)) ++events;
  EXPECT_EQ(events, 5000);
  EXPECT_EQ(e.object->name(), "cm-4999");
  watch->Stop();
  EXPECT_FALSE(watch->Next(&e));
  EXPECT_EQ(watch->status().code(), absl::StatusCode::kCancelled);
}

TEST(StreamWatcherTest, StopEndsTheStreamAtOnce) {
  const std::string stream = Event("ADDED", "a") + "\n" + Event("ADDED", "b") +
                             "\n" + Event("ADDED", "c");
  auto watch = NewStreamWatcher(
      Context::Background(),
      std::make_unique<FakeBody>(stream + "\n", std::vector<size_t>{1000},
                                 absl::OkStatus(), /*block=*/true),
      {});
  WatchEvent e;
  ASSERT_TRUE(watch->Next(&e));
  watch->Stop();
  // Events already decoded are not handed out after Stop.
  EXPECT_FALSE(watch->Next(&e));
  EXPECT_EQ(watch->status().code(), absl::StatusCode::kCancelled);
}

TEST(StreamWatcherTest, ANextContextEndingEndsTheStream) {
  auto watch = NewStreamWatcher(
      Context::Background(),
      std::make_unique<FakeBody>("", std::vector<size_t>{1}, absl::OkStatus(),
                                 /*block=*/true),
      {});
  auto [ctx, cancel] = WithCancel(Context::Background());
  std::thread canceller([cancel = cancel] { cancel(); });
  WatchEvent e;
  EXPECT_FALSE(watch->Next(ctx, &e));  // blocked until the cancel
  canceller.join();
  EXPECT_EQ(watch->status().code(), absl::StatusCode::kCancelled);
  EXPECT_FALSE(watch->Next(&e));
}

}  // namespace
}  // namespace kcr::client
