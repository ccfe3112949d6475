// Fault injection, many concurrent watchers, authentication and shutdown of
// the local API server, through HTTP.
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/apiserver/test_client.h"

namespace kcr {
namespace apiserver {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kCms[] = "/api/v1/namespaces/default/configmaps";

class FaultsTest : public ::testing::Test {
 protected:
  void Start(ApiServerOptions options) {
    options.controllers.node_simulator = false;
    auto s = ApiServer::Start(std::move(options));
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    client_ = std::make_unique<TestClient>("127.0.0.1", server_->port());
  }
  void StartWithEndpoint() {
    ApiServerOptions options;
    options.enable_fault_endpoint = true;
    Start(options);
  }
  std::string Create(const std::string& name) {
    TestResponse r =
        client_->Post(kCms, R"({"metadata":{"name":")" + name + R"("}})");
    EXPECT_EQ(r.status, 201) << r.body;
    return r.Str("/metadata/resourceVersion");
  }

  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<TestClient> client_;
};

TEST_F(FaultsTest, ControlEndpointIsOffByDefault) {
  Start(ApiServerOptions());
  EXPECT_EQ(client_->Get("/fault-injection").status, 404);
  EXPECT_EQ(client_->Post("/fault-injection/compact", "").status, 404);
}

TEST_F(FaultsTest, WatchClosesAfterNEvents) {
  ApiServerOptions options;
  options.faults.watch_close_after_events = 2;
  Start(options);
  Create("a");
  Create("b");
  Create("c");
  auto w = client_->Watch(std::string(kCms) + "?watch=1");
  EXPECT_TRUE(w->Next().has_value());
  EXPECT_TRUE(w->Next().has_value());
  EXPECT_FALSE(w->Next().has_value());
  EXPECT_TRUE(w->ended());
}

TEST_F(FaultsTest, WatchClosesAfterDuration) {
  ApiServerOptions options;
  options.faults.watch_close_after = absl::Milliseconds(200);
  Start(options);
  auto w = client_->Watch(std::string(kCms) + "?watch=1");
  EXPECT_EQ(w->status(), 200);
  while (w->Next().has_value()) {
  }
  EXPECT_TRUE(w->ended());
}

TEST_F(FaultsTest, InjectedErrorsAndThrottlingNeverChangeState) {
  StartWithEndpoint();
  Create("a");
  TestResponse set = client_->Put("/fault-injection", R"({"errorFraction":1})");
  EXPECT_EQ(set.status, 200) << set.body;
  TestResponse e = client_->Post(kCms, R"({"metadata":{"name":"b"}})");
  EXPECT_EQ(e.status, 500);
  EXPECT_EQ(e.Str("/reason"), "InternalError");
  EXPECT_EQ(client_->Get("/healthz").status, 200);  // only resource requests
  client_->Put(
      "/fault-injection",
      R"({"errorFraction":0,"throttleFraction":1,"retryAfterSeconds":3})");
  TestResponse t = client_->Get(kCms);
  EXPECT_EQ(t.status, 429);
  EXPECT_EQ(t.Str("/reason"), "TooManyRequests");
  EXPECT_EQ(t.Header("retry-after"), "3");
  EXPECT_EQ(t.Int("/details/retryAfterSeconds"), 3);
  client_->Put("/fault-injection", R"({"throttleFraction":0})");
  TestResponse list = client_->Get(kCms);
  EXPECT_EQ(list.status, 200);
  EXPECT_THAT(list.body, HasSubstr(R"("name":"a")"));
  EXPECT_EQ(list.body.find(R"("name":"b")"), std::string::npos);
  EXPECT_EQ(client_->Put("/fault-injection", R"({"errorFraction":2})").status,
            400);
}

// Which requests were delayed is read from the injector's counter, never
// from how long they took, so a slow machine cannot pass or fail it; the
// only timing check is a lower bound, which slowness cannot break.
TEST_F(FaultsTest, InjectedDelaySlowsResourceRequestsOnly) {
  StartWithEndpoint();
  ASSERT_EQ(
      client_->Put("/fault-injection", R"({"delayMilliseconds":300})").status,
      200);
  EXPECT_EQ(client_->Get("/fault-injection").Int("/delayMilliseconds"), 300);
  EXPECT_EQ(server_->faults()->delays_injected(), 0);
  const absl::Time start = absl::Now();
  EXPECT_EQ(client_->Get(kCms).status, 200);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  EXPECT_EQ(server_->faults()->delays_injected(), 1);
  EXPECT_EQ(client_->Get("/healthz").status, 200);
  EXPECT_EQ(client_->Get("/api/v1").status, 200);
  EXPECT_EQ(server_->faults()->delays_injected(), 1)
      << "only resource requests";
  ASSERT_EQ(
      client_->Put("/fault-injection", R"({"delayMilliseconds":0})").status,
      200);
  EXPECT_EQ(client_->Get(kCms).status, 200);
  EXPECT_EQ(server_->faults()->delays_injected(), 1) << "delay switched off";
}

// Memory is bounded by the objects plus the configured history: however
// many writes go by, the history keeps at most history_size events.
TEST_F(FaultsTest, HistoryStaysWithinItsConfiguredSize) {
  ApiServerOptions options;
  options.history_size = 50;
  Start(options);
  std::string first = Create("a");
  for (int i = 0; i < 200; ++i) {
    TestResponse r =
        client_->Patch(std::string(kCms) + "/a",
                       R"({"data":{"i":")" + std::to_string(i) + R"("}})",
                       "application/merge-patch+json");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_LE(server_->storage()->HistorySize(), 50u);
  }
  EXPECT_EQ(server_->storage()->HistorySize(), 50u);
  auto w =
      client_->Watch(std::string(kCms) + "?watch=1&resourceVersion=" + first);
  auto line = w->Next();
  ASSERT_TRUE(line.has_value());
  EXPECT_THAT(*line, HasSubstr(R"("code":410)"));
}

TEST_F(FaultsTest, CompactNowExpiresOlderWatches) {
  StartWithEndpoint();
  std::string rv = Create("a");
  Create("b");
  EXPECT_EQ(client_->Post("/fault-injection/compact", "").status, 200);
  auto w = client_->Watch(std::string(kCms) + "?watch=1&resourceVersion=" + rv);
  auto line = w->Next();
  ASSERT_TRUE(line.has_value());
  EXPECT_THAT(*line, StartsWith(R"({"type":"ERROR")"));
  EXPECT_THAT(*line, HasSubstr(R"("code":410)"));
  // A list still works, and a watch from now on is fine.
  TestResponse list = client_->Get(kCms);
  EXPECT_EQ(list.status, 200);
  auto fresh = client_->Watch(std::string(kCms) + "?watch=1&resourceVersion=" +
                              list.Str("/metadata/resourceVersion"));
  Create("c");
  auto c = fresh->Next();
  ASSERT_TRUE(c.has_value());
  EXPECT_THAT(*c, StartsWith(R"({"type":"ADDED")"));
}

TEST_F(FaultsTest, RestartDropsConnectionsAndKeepsState) {
  StartWithEndpoint();
  std::string rv = Create("a");
  auto w = client_->Watch(std::string(kCms) + "?watch=1&resourceVersion=" + rv);
  ASSERT_EQ(w->status(), 200);
  EXPECT_EQ(client_->Post("/fault-injection/restart", "").status, 200);
  while (w->Next().has_value()) {
  }
  EXPECT_TRUE(w->ended());
  TestResponse got = client_->Get(std::string(kCms) + "/a");
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.Str("/metadata/resourceVersion"), rv);
}

TEST_F(FaultsTest, TwoHundredConcurrentWatchersAndPromptShutdown) {
  Start(ApiServerOptions());
  std::vector<std::unique_ptr<WatchStream>> watches;
  for (int i = 0; i < 200; ++i) {
    watches.push_back(client_->Watch(std::string(kCms) + "?watch=1"));
    ASSERT_EQ(watches.back()->status(), 200) << i;
  }
  Create("a");
  for (auto& w : watches) {
    auto line = w->Next();
    ASSERT_TRUE(line.has_value());
    EXPECT_THAT(*line, StartsWith(R"({"type":"ADDED")"));
  }
  EXPECT_EQ(server_->handler()->active_watches(), 200);
  // Each watch would run for half an hour or more on its own (the server's
  // min request timeout): Stop returning at all, well inside the test's
  // timeout, shows that it ends the streams itself.
  server_->Stop();
  for (auto& w : watches) {
    while (w->Next().has_value()) {
    }
    EXPECT_TRUE(w->ended());
  }
}

TEST_F(FaultsTest, BadRequestsNeverCrashTheServer) {
  Start(ApiServerOptions());
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"POST", "not json"},
      {"POST", "[1,2]"},
      {"POST", "{\"metadata\":5}"},
      {"POST", std::string(3000, '[')},
      {"PUT", "{}"},
      {"PATCH", "{"},
      {"DELETE", "{\"propagationPolicy\":7}"}};
  for (const auto& [method, body] : bad) {
    std::string path = method == "POST" ? kCms : std::string(kCms) + "/x";
    TestResponse r =
        client_->Do(method, path, body,
                    method == "PATCH" ? "application/merge-patch+json"
                                      : "application/json");
    EXPECT_GE(r.status, 400) << method << " " << body.substr(0, 20);
    EXPECT_LT(r.status, 500) << method << " " << body.substr(0, 20) << r.body;
  }
  for (const char* q : {"?limit=x", "?resourceVersion=abc",
                        "?watch=1&timeoutSeconds=-1&resourceVersion=zz",
                        "?labelSelector=%%%", "?continue=%00"}) {
    TestResponse r = client_->Get(std::string(kCms) + q);
    EXPECT_GE(r.status, 400) << q;
    EXPECT_LT(r.status, 500) << q;
  }
  EXPECT_EQ(client_->Get("/healthz").status, 200);
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
