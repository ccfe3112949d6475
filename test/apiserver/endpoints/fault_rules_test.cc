// Fault rules aimed at one client's requests or one kind's watch events:
// dropped watch events, through C++ and over the control endpoint.
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "test/apiserver/test_client.h"

namespace kcr {
namespace apiserver {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kCms[] = "/api/v1/namespaces/default/configmaps";
constexpr char kController[] = "controller/1.0";

class FaultRulesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ApiServerOptions options;
    // Nothing writes ConfigMaps but the test.
    options.controllers.node_simulator = false;
    options.controllers.root_ca_cert_publisher = false;
    options.enable_fault_endpoint = true;
    // Bookmarks show how far a held stream has gone.
    options.bookmark_interval = absl::Milliseconds(50);
    auto s = ApiServer::Start(std::move(options));
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    client_ = std::make_unique<TestClient>("127.0.0.1", server_->port(),
                                           absl::Seconds(3));
    client_->SetHeader("User-Agent", "tester/1.0");
    controller_ = std::make_unique<TestClient>("127.0.0.1", server_->port(),
                                               absl::Seconds(3));
    controller_->SetHeader("User-Agent", kController);
  }

  TestResponse CreateAs(TestClient* client, const std::string& name) {
    return client->Post(kCms, R"({"metadata":{"name":")" + name + R"("}})");
  }

  // Creates or patches ConfigMap `name` with data k=`value`; returns its
  // resourceVersion.
  std::string Write(const std::string& name, const std::string& value) {
    TestResponse r = client_->Patch(
        std::string(kCms) + "/" + name + "?fieldManager=t",
        R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
            R"("},"data":{"k":")" + value + R"("}})",
        "application/apply-patch+yaml");
    EXPECT_TRUE(r.status == 200 || r.status == 201) << r.body;
    return r.Str("/metadata/resourceVersion");
  }

  std::unique_ptr<WatchStream> Watch(const std::string& user_agent,
                                     const std::string& rv) {
    return client_->Watch(std::string(kCms) + "?watch=1&resourceVersion=" + rv,
                          {{"User-Agent", user_agent}});
  }

  // "TYPE name=value" of each event the stream sends before the next
  // write of ConfigMap "end" (a reader cannot tell a quiet stream from a
  // slow one, so the test ends each batch with that write).
  std::vector<std::string> Events(WatchStream* w) {
    Write("end", std::to_string(++ends_));
    std::vector<std::string> out;
    while (std::optional<std::string> line = w->Next()) {
      rapidjson::Document d;
      d.Parse(line->c_str());
      if (!d.IsObject() || !d.HasMember("object")) continue;
      const rapidjson::Value& o = d["object"];
      if (std::string(d["type"].GetString()) == "BOOKMARK") continue;
      const std::string name = o["metadata"]["name"].GetString();
      std::string value = o.HasMember("data") && o["data"].HasMember("k")
                              ? o["data"]["k"].GetString()
                              : "";
      if (name == "end") {
        if (value == std::to_string(ends_)) break;
        continue;
      }
      out.push_back(std::string(d["type"].GetString()) + " " + name + "=" +
                    value);
    }
    return out;
  }

  // The next line of a stream: "TYPE name=value", or "BOOKMARK <rv>".
  static std::string Next(WatchStream* w) {
    std::optional<std::string> line = w->Next();
    if (!line.has_value()) return "(end)";
    rapidjson::Document d;
    d.Parse(line->c_str());
    const rapidjson::Value& o = d["object"];
    const std::string type = d["type"].GetString();
    if (type == "BOOKMARK") {
      return type + " " + o["metadata"]["resourceVersion"].GetString();
    }
    return type + " " + o["metadata"]["name"].GetString() + "=" +
           (o.HasMember("data") ? o["data"]["k"].GetString() : "");
  }

  std::string Now() {
    return std::to_string(server_->storage()->CurrentResourceVersion());
  }

  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<TestClient> client_;
  // Requests as the controller under test.
  std::unique_ptr<TestClient> controller_;
  int ends_ = 0;
};

TEST_F(FaultRulesTest, DroppedEventsNeverReachTheMatchingWatchers) {
  FaultInjector* faults = server_->faults();
  EXPECT_FALSE(faults->active());
  const std::string start = Now();
  WatchDrop drop;
  drop.match.resource = "configmaps";
  drop.match.name = "a";
  drop.match.user_agent = "controller/";
  drop.count = 2;
  ASSERT_TRUE(faults->DropWatchEvents(drop).ok());
  EXPECT_TRUE(faults->active());
  auto mine = Watch(kController, start);
  auto other = Watch("other/1.0", start);
  Write("a", "1");  // dropped
  Write("b", "1");
  Write("a", "2");  // dropped
  Write("a", "3");
  EXPECT_THAT(Events(mine.get()), ElementsAre("ADDED b=1", "MODIFIED a=3"));
  EXPECT_THAT(Events(other.get()), ElementsAre("ADDED a=1", "ADDED b=1",
                                               "MODIFIED a=2", "MODIFIED a=3"));
  EXPECT_EQ(faults->rules_fired(), 2);
  // A watch resumed from before them does not see them either.
  auto resumed = Watch(kController, start);
  EXPECT_THAT(Events(resumed.get()), ElementsAre("ADDED b=1", "MODIFIED a=3"));
  faults->ClearRules();
  EXPECT_FALSE(faults->active());
  auto cleared = Watch(kController, start);
  EXPECT_EQ(Events(cleared.get()).size(), 4u);
}

TEST_F(FaultRulesTest, DropsByVerbOverHttp) {
  TestResponse set = client_->Put(
      "/fault-injection",
      R"({"watchDrops":[{"verb":"delete","resource":"configmaps","count":1}]})");
  ASSERT_EQ(set.status, 200) << set.body;
  EXPECT_THAT(set.body, HasSubstr(R"("watchDrops":[{"verb":"delete",)"));
  const std::string start = Now();
  auto w = Watch(kController, start);
  Write("a", "1");
  ASSERT_EQ(client_->Delete(std::string(kCms) + "/a").status, 200);
  Write("a", "2");
  EXPECT_THAT(Events(w.get()), ElementsAre("ADDED a=1", "ADDED a=2"));
  TestResponse got = client_->Get("/fault-injection");
  EXPECT_EQ(got.Int("/rulesFired"), 1);
  EXPECT_THAT(got.body, HasSubstr(R"("watchDrops":[])"));
  EXPECT_EQ(client_->Put("/fault-injection", R"({"watchDrops":[{"count":0}]})")
                .status,
            400);
  EXPECT_EQ(client_->Put("/fault-injection", R"({"watchDrops":[{"kind":"x"}]})")
                .status,
            400);
}

TEST_F(FaultRulesTest, ConflictOnTheNthMatchingRequest) {
  FaultInjector* faults = server_->faults();
  ErrorRule rule;
  rule.match.verb = "create";
  rule.match.resource = "configmaps";
  rule.match.user_agent = "controller/";
  rule.nth = 2;
  rule.code = 409;
  ASSERT_TRUE(faults->AddErrorRule(rule).ok());
  EXPECT_EQ(CreateAs(client_.get(), "t").status, 201);  // not the controller
  EXPECT_EQ(controller_->Get(kCms).status, 200);        // not a create
  EXPECT_EQ(CreateAs(controller_.get(), "x").status, 201);
  const int64_t mark = server_->write_log()->last_seq();
  TestResponse conflict = CreateAs(controller_.get(), "y");
  EXPECT_EQ(conflict.status, 409);
  EXPECT_EQ(conflict.Str("/reason"), "Conflict");
  EXPECT_EQ(conflict.Str("/message"),
            "Operation cannot be fulfilled on configmaps \"y\": the object "
            "has been modified; please apply your changes to the latest "
            "version and try again");
  EXPECT_EQ(conflict.Str("/details/name"), "y");
  for (const WriteRecord& w : server_->write_log()->Since(mark)) {
    EXPECT_NE(w.user_agent, kController) << "nothing stored";
  }
  EXPECT_EQ(client_->Get(std::string(kCms) + "/y").status, 404);
  EXPECT_EQ(faults->rules_fired(), 1);
  // Spent: fires once.
  EXPECT_EQ(CreateAs(controller_.get(), "y").status, 201);
  EXPECT_FALSE(faults->active());
  rule.code = 418;
  EXPECT_FALSE(faults->AddErrorRule(rule).ok());
  rule.code = 409;
  rule.after_store = true;
  EXPECT_FALSE(faults->AddErrorRule(rule).ok());
}

TEST_F(FaultRulesTest, ThrottleAndInternalErrorOverHttp) {
  TestResponse set = client_->Put(
      "/fault-injection",
      R"({"errorRules":[{"verb":"update","userAgent":"controller/","nth":1,)"
      R"("code":429,"retryAfterSeconds":2},{"verb":"get","name":"a",)"
      R"("code":500}]})");
  ASSERT_EQ(set.status, 200) << set.body;
  EXPECT_THAT(set.body, HasSubstr(R"("code":429,"retryAfterSeconds":2,)"
                                  R"("afterStore":false,"matched":0})"));
  ASSERT_EQ(CreateAs(client_.get(), "a").status, 201);
  TestResponse throttled =
      controller_->Put(std::string(kCms) + "/a",
                       R"({"metadata":{"name":"a"},"data":{"k":"v"}})");
  EXPECT_EQ(throttled.status, 429);
  EXPECT_EQ(throttled.Str("/reason"), "TooManyRequests");
  EXPECT_EQ(throttled.Header("retry-after"), "2");
  EXPECT_EQ(throttled.Int("/details/retryAfterSeconds"), 2);
  TestResponse internal = client_->Get(std::string(kCms) + "/a");
  EXPECT_EQ(internal.status, 500);
  EXPECT_EQ(internal.Str("/reason"), "InternalError");
  EXPECT_EQ(client_->Get(std::string(kCms) + "/a").status, 200);
  TestResponse got = client_->Get("/fault-injection");
  EXPECT_EQ(got.Int("/rulesFired"), 2);
  EXPECT_THAT(got.body, HasSubstr(R"("errorRules":[])"));
  EXPECT_EQ(client_
                ->Put("/fault-injection",
                      R"({"errorRules":[{"code":409,"afterStore":true}]})")
                .status,
            400);
  EXPECT_EQ(
      client_->Put("/fault-injection", R"({"errorRules":[{"nth":0}]})").status,
      400);
}

TEST_F(FaultRulesTest, TimeoutBeforeOrAfterTheWriteIsStored) {
  FaultInjector* faults = server_->faults();
  ErrorRule before;
  before.match.name = "lost";
  before.code = 504;
  ASSERT_TRUE(faults->AddErrorRule(before).ok());
  TestResponse lost = CreateAs(controller_.get(), "lost");
  EXPECT_EQ(lost.status, 504);
  EXPECT_EQ(lost.Str("/reason"), "Timeout");
  EXPECT_EQ(lost.Str("/message"),
            "Timeout: request did not complete within requested timeout - "
            "context deadline exceeded");
  EXPECT_EQ(client_->Get(std::string(kCms) + "/lost").status, 404);

  ErrorRule after = before;
  after.match.name = "kept";
  after.after_store = true;
  ASSERT_TRUE(faults->AddErrorRule(after).ok());
  const int64_t mark = server_->write_log()->last_seq();
  TestResponse kept = CreateAs(controller_.get(), "kept");
  EXPECT_EQ(kept.status, 504);
  EXPECT_EQ(kept.Str("/reason"), "Timeout");
  EXPECT_EQ(client_->Get(std::string(kCms) + "/kept").status, 200);
  std::vector<WriteRecord> writes;
  for (const WriteRecord& w : server_->write_log()->Since(mark)) {
    if (w.user_agent == kController) writes.push_back(w);
  }
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].name, "kept");
  EXPECT_EQ(writes[0].code, 504);
  EXPECT_EQ(writes[0].user_agent, kController);
  // A request that fails on its own keeps its answer.
  ASSERT_TRUE(faults->AddErrorRule(after).ok());
  EXPECT_EQ(CreateAs(controller_.get(), "kept").status, 409);
}

TEST_F(FaultRulesTest, HeldEventsWaitInOrderUntilReleased) {
  FaultInjector* faults = server_->faults();
  const std::string start = Now();
  WatchHold hold;
  hold.match.resource = "configmaps";
  hold.match.name = "a";
  hold.match.user_agent = "controller/";
  const int64_t id = faults->HoldWatch(hold);
  auto mine = client_->Watch(std::string(kCms) +
                                 "?watch=1&allowWatchBookmarks=true&"
                                 "resourceVersion=" +
                                 start,
                             {{"User-Agent", kController}});
  auto other = Watch("other/1.0", start);
  Write("b", "1");
  const std::string held_rv = Write("a", "1");
  Write("b", "2");  // behind the held event
  EXPECT_THAT(Events(other.get()),
              ElementsAre("ADDED b=1", "ADDED a=1", "MODIFIED b=2"));
  EXPECT_EQ(Next(mine.get()), "ADDED b=1");
  // Bookmarks go on, never past the held event.
  const int64_t before_held = std::stoll(held_rv) - 1;
  for (int i = 0; i < 3; ++i) {
    std::string line = Next(mine.get());
    ASSERT_THAT(line, ::testing::StartsWith("BOOKMARK ")) << line;
    EXPECT_LE(std::stoll(line.substr(9)), before_held);
  }
  faults->ReleaseWatchHold(id);
  EXPECT_FALSE(faults->active());
  std::vector<std::string> released;
  while (released.size() < 2) {
    std::string line = Next(mine.get());
    if (line.rfind("BOOKMARK", 0) != 0) released.push_back(line);
  }
  EXPECT_THAT(released, ElementsAre("ADDED a=1", "MODIFIED b=2"));
}

TEST_F(FaultRulesTest, HoldsOverHttp) {
  TestResponse set = client_->Put(
      "/fault-injection",
      R"({"watchHolds":[{"resource":"configmaps","userAgent":"controller/"}]})");
  ASSERT_EQ(set.status, 200) << set.body;
  EXPECT_THAT(set.body, HasSubstr(R"("watchHolds":[{"id":1,"verb":"",)"));
  auto mine = Watch(kController, Now());
  Write("a", "1");
  Write("a", "2");
  TestResponse released =
      client_->Post("/fault-injection/release-watch-holds", "");
  ASSERT_EQ(released.status, 200) << released.body;
  EXPECT_EQ(released.Int("/released"), 1);
  EXPECT_THAT(Events(mine.get()), ElementsAre("ADDED a=1", "MODIFIED a=2"));
  EXPECT_THAT(client_->Get("/fault-injection").body,
              HasSubstr(R"("watchHolds":[])"));
}

// The controller's writes in the write log after `mark`.
std::vector<std::string> ControllerWrites(WriteLog* log, int64_t mark) {
  std::vector<std::string> out;
  for (const WriteRecord& w : log->Since(mark)) {
    if (w.user_agent == kController) out.push_back(w.verb + " " + w.name);
  }
  return out;
}

TEST_F(FaultRulesTest, CrashFenceDropsEverythingAfterTheKthWrite) {
  FaultInjector* faults = server_->faults();
  std::vector<std::string> crashed_agents;
  faults->SetCrashCallback([&crashed_agents](const std::string& agent) {
    crashed_agents.push_back(agent);
  });
  ASSERT_TRUE(faults->SetCrashRule({"controller/", 2}).ok());
  auto watch = Watch(kController, Now());
  const int64_t mark = server_->write_log()->last_seq();
  EXPECT_EQ(CreateAs(client_.get(), "t").status, 201);  // not counted
  EXPECT_EQ(CreateAs(controller_.get(), "x").status, 201);
  EXPECT_FALSE(faults->crashed(kController));
  // Stored, then the client is gone: no answer.
  TestResponse fenced = CreateAs(controller_.get(), "y");
  EXPECT_EQ(fenced.status, 0) << fenced.body;
  EXPECT_TRUE(faults->crashed(kController));
  EXPECT_TRUE(faults->WaitCrashed(absl::Now()));
  EXPECT_THAT(crashed_agents, ElementsAre(kController));
  EXPECT_EQ(client_->Get(std::string(kCms) + "/y").status, 200);
  EXPECT_EQ(controller_->Get(kCms).status, 0);
  EXPECT_EQ(controller_->Get("/api/v1").status, 0);
  EXPECT_EQ(CreateAs(controller_.get(), "z").status, 0);
  EXPECT_EQ(client_->Get(std::string(kCms) + "/z").status, 404);
  EXPECT_THAT(ControllerWrites(server_->write_log(), mark),
              ElementsAre("create x", "create y"));
  // Its watch is cut, not ended.
  while (watch->Next().has_value()) {
  }
  EXPECT_TRUE(watch->ended());
  faults->ClearCrashRule();
  EXPECT_FALSE(faults->crashed(kController));
  EXPECT_EQ(CreateAs(controller_.get(), "z").status, 201);
}

// Writes of the fenced client that are already under way when the fence
// goes up are refused: nothing of it is stored after the k-th write.
TEST_F(FaultRulesTest, CrashFenceHoldsUnderConcurrentWrites) {
  ASSERT_TRUE(server_->faults()->SetCrashRule({"controller/", 5}).ok());
  const int64_t mark = server_->write_log()->last_seq();
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t) {
    workers.emplace_back([this, t] {
      TestClient c("127.0.0.1", server_->port(), absl::Seconds(3));
      c.SetHeader("User-Agent", kController);
      for (int i = 0; i < 10; ++i) {
        CreateAs(&c, "w" + std::to_string(t) + "-" + std::to_string(i));
      }
    });
  }
  for (std::thread& w : workers) w.join();
  EXPECT_EQ(ControllerWrites(server_->write_log(), mark).size(), 5u);
  EXPECT_TRUE(server_->faults()->WaitCrashed(absl::Now() + absl::Seconds(5)));
}

TEST_F(FaultRulesTest, CrashFenceOverHttp) {
  TestResponse set = client_->Put(
      "/fault-injection",
      R"({"crashAfterWrite":{"userAgent":"controller/","writes":1}})");
  ASSERT_EQ(set.status, 200) << set.body;
  EXPECT_THAT(set.body, HasSubstr(R"("crashAfterWrite":{"userAgent":)"
                                  R"("controller/","writes":1,"counted":0,)"
                                  R"("crashed":false})"));
  EXPECT_EQ(CreateAs(controller_.get(), "x").status, 0);
  TestResponse got = client_->Get("/fault-injection");
  EXPECT_THAT(got.body, HasSubstr(R"("counted":1,"crashed":true})"));
  EXPECT_EQ(got.Int("/rulesFired"), 1);
  ASSERT_EQ(
      client_->Put("/fault-injection", R"({"crashAfterWrite":null})").status,
      200);
  EXPECT_EQ(controller_->Get(std::string(kCms) + "/x").status, 200);
  EXPECT_EQ(client_
                ->Put("/fault-injection",
                      R"({"crashAfterWrite":{"userAgent":"","writes":1}})")
                .status,
            400);
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
