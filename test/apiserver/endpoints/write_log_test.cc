// The write log: every stored write in storage order, with its client,
// verb and answer, through C++ and GET /fault-injection/writes.
#include "apiserver/endpoints/write_log.h"

#include <atomic>
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

constexpr char kCms[] = "/api/v1/namespaces/default/configmaps";

// "verb resource/subresource ns/name ua code"
std::string Line(const WriteRecord& r) {
  return r.verb + " " + r.resource + (r.subresource.empty() ? "" : "/") +
         r.subresource + " " + r.namespace_ + "/" + r.name + " " +
         r.user_agent + " " + std::to_string(r.code);
}

// The test client's writes only: the built-in controllers write beside it.
std::vector<WriteRecord> Mine(const std::vector<WriteRecord>& records) {
  std::vector<WriteRecord> out;
  for (const WriteRecord& r : records) {
    if (r.user_agent == "tester/1.0") out.push_back(r);
  }
  return out;
}

std::vector<std::string> Lines(const std::vector<WriteRecord>& records) {
  std::vector<std::string> out;
  for (const WriteRecord& r : Mine(records)) out.push_back(Line(r));
  return out;
}

TEST(WriteLogTest, KeepsTheLastRecordsAndNumbersOn) {
  WriteLog log(3);
  for (int i = 0; i < 5; ++i) {
    WriteRecord r;
    r.name = std::to_string(i);
    EXPECT_EQ(log.Append(r), i + 1);
  }
  EXPECT_EQ(log.last_seq(), 5);
  std::vector<WriteRecord> all = log.Since(0);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].seq, 3);
  EXPECT_EQ(all[0].name, "2");
  ASSERT_EQ(log.Since(4).size(), 1u);
  EXPECT_EQ(log.Since(4)[0].seq, 5);
  EXPECT_TRUE(log.Since(5).empty());
  log.Clear();
  EXPECT_TRUE(log.Since(0).empty());
  WriteRecord r;
  EXPECT_EQ(log.Append(r), 6);
}

TEST(WriteLogTest, DeliversInOrderToSubscribersOnly) {
  WriteLog log;
  log.Append(WriteRecord());  // before anyone subscribed: never delivered
  std::vector<int64_t> seen;
  const int64_t id =
      log.Subscribe([&seen](const WriteRecord& r) { seen.push_back(r.seq); });
  log.Append(WriteRecord());
  log.Append(WriteRecord());
  log.Deliver();
  log.Deliver();
  EXPECT_EQ(seen, (std::vector<int64_t>{2, 3}));
  log.Unsubscribe(id);
  log.Append(WriteRecord());
  log.Deliver();
  EXPECT_EQ(seen.size(), 2u);
}

TEST(WriteLogTest, RecordJson) {
  WriteRecord r;
  r.seq = 4;
  r.resource_version = "17";
  r.verb = "patch";
  r.group = "apps";
  r.version = "v1";
  r.resource = "deployments";
  r.subresource = "status";
  r.namespace_ = "default";
  r.name = "web";
  r.user_agent = "kubectl/v1.32 \"x\"";
  r.code = 200;
  EXPECT_EQ(WriteLog::ToJson({r}),
            R"({"items":[{"seq":4,"resourceVersion":"17","verb":"patch",)"
            R"("group":"apps","version":"v1","resource":"deployments",)"
            R"("subresource":"status","namespace":"default","name":"web",)"
            R"("userAgent":"kubectl/v1.32 \"x\"","code":200}]})");
}

class ServerWriteLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ApiServerOptions options;
    options.controllers.node_simulator = false;
    options.enable_fault_endpoint = true;
    auto s = ApiServer::Start(std::move(options));
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    client_ = std::make_unique<TestClient>("127.0.0.1", server_->port());
    client_->SetHeader("User-Agent", "tester/1.0");
  }

  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<TestClient> client_;
};

TEST_F(ServerWriteLogTest, RecordsEveryStoredWriteOfARequest) {
  WriteLog* log = server_->write_log();
  const int64_t mark = log->last_seq();
  ASSERT_EQ(client_->Post(kCms, R"({"metadata":{"name":"a"}})").status, 201);
  // Failed requests and dry runs store nothing.
  ASSERT_EQ(client_->Post(kCms, R"({"metadata":{"name":"a"}})").status, 409);
  ASSERT_EQ(client_
                ->Post(std::string(kCms) + "?dryRun=All",
                       R"({"metadata":{"name":"b"}})")
                .status,
            201);
  ASSERT_EQ(client_
                ->Put(std::string(kCms) + "/a",
                      R"({"metadata":{"name":"a"},"data":{"k":"v"}})")
                .status,
            200);
  ASSERT_EQ(client_
                ->Patch(std::string(kCms) + "/a", R"({"data":{"k":"w"}})",
                        "application/merge-patch+json")
                .status,
            200);
  ASSERT_EQ(
      client_
          ->Post(kCms, R"({"metadata":{"name":"c","labels":{"gone":"yes"}}})")
          .status,
      201);
  ASSERT_EQ(client_->Delete(std::string(kCms) + "/a").status, 200);
  ASSERT_EQ(
      client_->Delete(std::string(kCms) + "?labelSelector=gone%3Dyes").status,
      200);
  EXPECT_THAT(Lines(log->Since(mark)),
              ::testing::ElementsAre(
                  "create configmaps default/a tester/1.0 201",
                  "update configmaps default/a tester/1.0 200",
                  "patch configmaps default/a tester/1.0 200",
                  "create configmaps default/c tester/1.0 201",
                  "delete configmaps default/a tester/1.0 200",
                  "deletecollection configmaps default/c tester/1.0 200"));
  // Storage order: consecutive resourceVersions, versions and groups.
  std::vector<WriteRecord> all = log->Since(mark);
  for (size_t i = 1; i < all.size(); ++i) {
    EXPECT_EQ(all[i].seq, all[i - 1].seq + 1);
    EXPECT_EQ(std::stoll(all[i - 1].resource_version) + 1,
              std::stoll(all[i].resource_version));
  }
  std::vector<WriteRecord> records = Mine(all);
  EXPECT_EQ(records[0].version, "v1");
  EXPECT_EQ(records[0].group, "");
}

TEST_F(ServerWriteLogTest, SubresourcesAndBuiltinControllers) {
  WriteLog* log = server_->write_log();
  const int64_t mark = log->last_seq();
  const std::string deploy = R"({"metadata":{"name":"web"},"spec":{
      "replicas":1,"selector":{"matchLabels":{"app":"web"}},
      "template":{"metadata":{"labels":{"app":"web"}},
      "spec":{"containers":[{"name":"c","image":"nginx"}]}}}})";
  const std::string deployments =
      "/apis/apps/v1/namespaces/default/deployments";
  ASSERT_EQ(client_->Post(deployments, deploy).status, 201);
  ASSERT_EQ(
      client_
          ->Patch(deployments + "/web/scale", R"({"spec":{"replicas":2}})",
                  "application/merge-patch+json")
          .status,
      200);
  // The deployment controller's ReplicaSet, under its own identity.
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  bool builtin = false;
  while (!builtin && absl::Now() < deadline) {
    for (const WriteRecord& r : log->Since(mark)) {
      if (r.user_agent == "kcr-builtin/deployment-controller" &&
          r.resource == "replicasets" && r.verb == "create") {
        EXPECT_EQ(r.group, "apps");
        EXPECT_EQ(r.code, 201);
        builtin = true;
      }
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_TRUE(builtin);
  std::vector<std::string> lines = Lines(log->Since(mark));
  EXPECT_EQ(lines[0], "create deployments default/web tester/1.0 201");
  EXPECT_EQ(lines[1], "patch deployments/scale default/web tester/1.0 200");
}

TEST_F(ServerWriteLogTest, SubscribersRunBeforeTheResponse) {
  std::atomic<int> delivered{0};
  server_->write_log()->Subscribe([&delivered](const WriteRecord& r) {
    if (r.user_agent == "tester/1.0") ++delivered;
  });
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(client_
                  ->Post(kCms, R"({"metadata":{"name":"s)" + std::to_string(i) +
                                   R"("}})")
                  .status,
              201);
    EXPECT_EQ(delivered.load(), i + 1);
  }
}

TEST_F(ServerWriteLogTest, ServedOverHttp) {
  ASSERT_EQ(client_->Post(kCms, R"({"metadata":{"name":"a"}})").status, 201);
  const int64_t mark = server_->write_log()->last_seq();
  ASSERT_EQ(client_->Post(kCms, R"({"metadata":{"name":"b"}})").status, 201);
  TestResponse r =
      client_->Get("/fault-injection/writes?since=" + std::to_string(mark));
  ASSERT_EQ(r.status, 200) << r.body;
  rapidjson::Document d = r.Json();
  ASSERT_TRUE(d["items"].IsArray());
  // The first of this client's records after the mark (the built-in
  // controllers write beside it).
  int found = -1;
  for (rapidjson::SizeType i = 0; i < d["items"].Size(); ++i) {
    EXPECT_GT(d["items"][i]["seq"].GetInt64(), mark);
    if (found < 0 &&
        std::string(d["items"][i]["userAgent"].GetString()) == "tester/1.0") {
      found = static_cast<int>(i);
    }
  }
  ASSERT_GE(found, 0) << r.body;
  const std::string at = "/items/" + std::to_string(found);
  EXPECT_EQ(r.Str((at + "/verb").c_str()), "create");
  EXPECT_EQ(r.Str((at + "/resource").c_str()), "configmaps");
  EXPECT_EQ(r.Str((at + "/version").c_str()), "v1");
  EXPECT_EQ(r.Str((at + "/namespace").c_str()), "default");
  EXPECT_EQ(r.Str((at + "/name").c_str()), "b");
  EXPECT_EQ(r.Int((at + "/code").c_str()), 201);
  EXPECT_EQ(client_->Get("/fault-injection/writes?since=x").status, 400);
  EXPECT_GE(client_->Get("/fault-injection/writes").Json()["items"].Size(), 2u);
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
