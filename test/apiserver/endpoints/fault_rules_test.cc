// Fault rules aimed at one client's requests or one kind's watch events:
// dropped watch events, through C++ and over the control endpoint.
#include <memory>
#include <optional>
#include <string>
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
    auto s = ApiServer::Start(std::move(options));
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    client_ = std::make_unique<TestClient>("127.0.0.1", server_->port(),
                                           absl::Seconds(3));
    client_->SetHeader("User-Agent", "tester/1.0");
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

  std::string Now() {
    return std::to_string(server_->storage()->CurrentResourceVersion());
  }

  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<TestClient> client_;
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

}  // namespace
}  // namespace apiserver
}  // namespace kcr
