#include "bench/informer/replay_server.h"

#include <poll.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "bench/informer/harness_util.h"
#include "bench/informer/pod_corpus.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace kcr::bench {
namespace {

constexpr int64_t kPods = 5;
constexpr int64_t kUpdates = 7;

// One HTTP/1.1 connection to the server, read by hand.
class Connection {
 public:
  explicit Connection(int port) {
    absl::StatusOr<int> fd = ConnectLoopback(port);
    EXPECT_TRUE(fd.ok()) << fd.status();
    fd_ = fd.ok() ? *fd : -1;
  }
  ~Connection() {
    if (fd_ >= 0) close(fd_);
  }

  // Sends a GET (or POST) and returns the status code; the body is then
  // read with Body() or, for a chunked answer, Line().
  int Send(const std::string& method, const std::string& target) {
    EXPECT_TRUE(WriteAll(fd_, absl::StrCat(method, " ", target,
                                           " HTTP/1.1\r\nHost: x\r\n"
                                           "Content-Length: 0\r\n\r\n"))
                    .ok());
    std::string head = ReadUntil("\r\n\r\n");
    int code = 0;
    if (head.size() > 12) {
      EXPECT_TRUE(absl::SimpleAtoi(head.substr(9, 3), &code));
    }
    size_t at = head.find("Content-Length: ");
    content_length_ = -1;
    if (at != std::string::npos) {
      size_t eol = head.find("\r\n", at);
      EXPECT_TRUE(absl::SimpleAtoi(head.substr(at + 16, eol - at - 16),
                                   &content_length_));
    }
    return code;
  }

  std::string Body() {
    while (static_cast<int64_t>(buffer_.size()) < content_length_ && Fill()) {
    }
    std::string body = buffer_.substr(0, content_length_);
    buffer_.erase(0, content_length_);
    return body;
  }

  // The next line of a chunked body ("" when the stream ended).
  std::string Line() {
    while (line_buffer_.find('\n') == std::string::npos) {
      std::string size_line = ReadUntil("\r\n");
      size_t size = 0;
      if (size_line.empty() ||
          !absl::SimpleHexAtoi(size_line.substr(0, size_line.size() - 2),
                               &size) ||
          size == 0) {
        return "";
      }
      while (buffer_.size() < size + 2 && Fill()) {
      }
      line_buffer_.append(buffer_, 0, size);
      buffer_.erase(0, size + 2);
    }
    size_t nl = line_buffer_.find('\n');
    std::string line = line_buffer_.substr(0, nl);
    line_buffer_.erase(0, nl + 1);
    return line;
  }

  // Whether bytes are waiting to be read now.
  bool Readable() {
    if (!buffer_.empty() || !line_buffer_.empty()) return true;
    pollfd p{fd_, POLLIN, 0};
    return poll(&p, 1, 0) > 0;
  }

 private:
  bool Fill() {
    char chunk[65536];
    ssize_t n = read(fd_, chunk, sizeof(chunk));
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }
  std::string ReadUntil(const std::string& end) {
    size_t at;
    while ((at = buffer_.find(end)) == std::string::npos) {
      if (!Fill()) return "";
    }
    std::string out = buffer_.substr(0, at + end.size());
    buffer_.erase(0, at + end.size());
    return out;
  }

  int fd_ = -1;
  std::string buffer_;
  std::string line_buffer_;
  int64_t content_length_ = -1;
};

rapidjson::Document Parse(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  EXPECT_FALSE(doc.HasParseError()) << json.substr(0, 200);
  return doc;
}

std::string Str(const rapidjson::Value& v) {
  return v.IsString() ? std::string(v.GetString(), v.GetStringLength()) : "";
}

class ReplayServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PodCorpus::Options options;
    options.pods = kPods;
    options.updates = kUpdates;
    options.namespaces = {"b", "a"};
    absl::StatusOr<std::unique_ptr<PodCorpus>> corpus =
        PodCorpus::Create(options);
    ASSERT_TRUE(corpus.ok()) << corpus.status();
    corpus_ = *std::move(corpus);
    ReplayServer::Options server_options;
    server_options.bookmark_interval = absl::Milliseconds(1);
    server_ = std::make_unique<ReplayServer>(corpus_.get(), server_options);
    ASSERT_TRUE(server_->Start(0).ok());
  }

  // Names of a list's items, following continue tokens from `first`.
  std::vector<std::string> ListAll(const std::string& path,
                                   const std::string& first, int* pages) {
    std::vector<std::string> names;
    Connection c(server_->port());
    std::string target = path + first;
    *pages = 0;
    for (;;) {
      EXPECT_EQ(c.Send("GET", target), 200);
      rapidjson::Document doc = Parse(c.Body());
      ++*pages;
      EXPECT_EQ(Str(doc["metadata"]["resourceVersion"]), "5");
      for (const auto& item : doc["items"].GetArray()) {
        names.push_back(Str(item["metadata"]["namespace"]) + "/" +
                        Str(item["metadata"]["name"]));
      }
      const auto& meta = doc["metadata"];
      if (!meta.HasMember("continue")) break;
      EXPECT_EQ(
          meta["remainingItemCount"].GetInt64(),
          static_cast<int64_t>(
              corpus_->ScopeOrder(path == "/api/v1/pods" ? "" : "a")->size() -
              names.size()));
      target = absl::StrCat(path, "?limit=2&continue=", Str(meta["continue"]));
    }
    return names;
  }

  std::unique_ptr<PodCorpus> corpus_;
  std::unique_ptr<ReplayServer> server_;
};

TEST_F(ReplayServerTest, ResourceVersionZeroListsEverythingWhateverTheLimit) {
  int pages = 0;
  std::vector<std::string> names =
      ListAll("/api/v1/pods", "?resourceVersion=0&limit=2", &pages);
  EXPECT_EQ(pages, 1);
  // Namespace "a" (pods 1, 3) sorts before "b" (0, 2, 4).
  EXPECT_EQ(names, (std::vector<std::string>{
                       "a/" + PodName(1), "a/" + PodName(3), "b/" + PodName(0),
                       "b/" + PodName(2), "b/" + PodName(4)}));
}

TEST_F(ReplayServerTest, LimitPagesWithContinueTokens) {
  int pages = 0;
  std::vector<std::string> names = ListAll("/api/v1/pods", "?limit=2", &pages);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(names.size(), 5u);
  EXPECT_EQ(names.back(), "b/" + PodName(4));

  names = ListAll("/api/v1/namespaces/a/pods", "?limit=1", &pages);
  EXPECT_EQ(pages, 2);
  EXPECT_EQ(names,
            (std::vector<std::string>{"a/" + PodName(1), "a/" + PodName(3)}));
}

TEST_F(ReplayServerTest, RejectsABadContinueTokenAndUnknownPaths) {
  Connection c(server_->port());
  EXPECT_EQ(c.Send("GET", "/api/v1/pods?limit=1&continue=bm9wZQ"), 400);
  c.Body();
  EXPECT_EQ(c.Send("GET", "/api/v1/services"), 404);
  c.Body();
  EXPECT_EQ(c.Send("GET", "/version"), 200);
  EXPECT_TRUE(Parse(c.Body()).HasMember("gitVersion"));
}

TEST_F(ReplayServerTest, WatchHoldsUpdatesUntilReleasedThenStreamsThemAll) {
  Connection watch(server_->port());
  ASSERT_EQ(watch.Send("GET",
                       "/api/v1/pods?watch=true&resourceVersion=5&"
                       "allowWatchBookmarks=true"),
            200);
  // A full round trip on another connection: had the watch not been held,
  // its events would be on the way by now.
  {
    Connection other(server_->port());
    ASSERT_EQ(other.Send("GET", "/version"), 200);
    other.Body();
  }
  EXPECT_FALSE(watch.Readable());

  ASSERT_TRUE(StartUpdates(server_->port()).ok());
  for (int64_t k = 0; k < kUpdates; ++k) {
    rapidjson::Document event = Parse(watch.Line());
    EXPECT_EQ(Str(event["type"]), "MODIFIED");
    EXPECT_EQ(Str(event["object"]["metadata"]["resourceVersion"]),
              std::to_string(kPods + 1 + k));
    EXPECT_EQ(Str(event["object"]["metadata"]["name"]), PodName(k % kPods));
  }
  rapidjson::Document bookmark = Parse(watch.Line());
  EXPECT_EQ(Str(bookmark["type"]), "BOOKMARK");
  EXPECT_EQ(Str(bookmark["object"]["metadata"]["resourceVersion"]),
            std::to_string(kPods + kUpdates));
}

TEST_F(ReplayServerTest, WatchResumingInsideTheHistoryStreamsAtOnce) {
  Connection watch(server_->port());
  ASSERT_EQ(
      watch.Send("GET", "/api/v1/namespaces/b/pods?watch=1&resourceVersion=7"),
      200);
  // Updates 2.. (resourceVersion 8..) of pods in namespace b (0, 2, 4).
  std::vector<std::string> rvs;
  for (int64_t k = 2; k < kUpdates; ++k) {
    if (corpus_->namespace_of(k % kPods) != 0) continue;
    rapidjson::Document event = Parse(watch.Line());
    rvs.push_back(Str(event["object"]["metadata"]["resourceVersion"]));
    EXPECT_EQ(rvs.back(), std::to_string(kPods + 1 + k));
  }
  EXPECT_EQ(rvs.size(), 3u);  // updates 2, 4 and 5 change pods 2, 4 and 0
}

TEST_F(ReplayServerTest, WatchFromBeforeTheSnapshotIsExpired) {
  Connection watch(server_->port());
  ASSERT_EQ(watch.Send("GET", "/api/v1/pods?watch=true&resourceVersion=2"),
            200);
  rapidjson::Document event = Parse(watch.Line());
  EXPECT_EQ(Str(event["type"]), "ERROR");
  EXPECT_EQ(event["object"]["code"].GetInt(), 410);
  EXPECT_EQ(watch.Line(), "");
}

TEST_F(ReplayServerTest, StopEndsOpenWatches) {
  Connection watch(server_->port());
  ASSERT_EQ(watch.Send("GET", "/api/v1/pods?watch=true&resourceVersion=5"),
            200);
  server_->Stop();
  EXPECT_EQ(watch.Line(), "");
}

}  // namespace
}  // namespace kcr::bench
