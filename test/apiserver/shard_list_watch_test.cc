// shardSelector (KEP-5866) on list and watch through HTTP: a sharded list
// or watch returns exactly the objects whose hashed uid or namespace falls
// in the selector's ranges, pages keep the selector, and a malformed
// selector is kube-apiserver's 400.
#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/selector/shard_selector.h"
#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "rapidjson/pointer.h"
#include "test/apiserver/test_client.h"

namespace kcr {
namespace apiserver {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kCms[] = "/api/v1/namespaces/default/configmaps";

std::string UrlEncode(const std::string& s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string Half(int index, const char* field = "object.metadata.uid") {
  api::ShardRange r = api::ShardRange::Of(index, 2);
  return std::string("shardRange(") + field + ", '" +
         api::FormatShardBound(r.start) + "', '" +
         api::FormatShardBound(r.end) + "')";
}

bool InHalf(int index, const std::string& value) {
  return api::ShardRange::Of(index, 2).Contains(api::Fnv1a64(value));
}

class ShardListWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ApiServerOptions options;
    options.controllers.node_simulator = false;
    options.controllers.control_plane_leases = false;
    options.controllers.root_ca_cert_publisher = false;
    auto s = ApiServer::Start(std::move(options));
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    client_ = std::make_unique<TestClient>("127.0.0.1", server_->port());
  }

  // Creates a ConfigMap and returns its uid.
  std::string Create(const std::string& ns, const std::string& name) {
    TestResponse r =
        client_->Post("/api/v1/namespaces/" + ns + "/configmaps",
                      R"({"metadata":{"name":")" + name + R"("}})");
    EXPECT_EQ(r.status, 201) << r.body;
    return r.Str("/metadata/uid");
  }
  void CreateNamespace(const std::string& name) {
    TestResponse r = client_->Post(
        "/api/v1/namespaces", R"({"metadata":{"name":")" + name + R"("}})");
    EXPECT_EQ(r.status, 201) << r.body;
  }

  // name -> uid of every item of a list response.
  static std::map<std::string, std::string> Items(const TestResponse& r) {
    std::map<std::string, std::string> out;
    rapidjson::Document d = r.Json();
    if (!d.IsObject() || !d.HasMember("items")) return out;
    for (const auto& i : d["items"].GetArray()) {
      out[i["metadata"]["name"].GetString()] = i["metadata"]["uid"].GetString();
    }
    return out;
  }
  static std::string Field(const std::string& line, const char* pointer) {
    rapidjson::Document d;
    d.Parse(line.c_str());
    if (d.HasParseError()) return "";
    const rapidjson::Value* v = rapidjson::Pointer(pointer).Get(d);
    return v != nullptr && v->IsString() ? v->GetString() : "";
  }

  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<TestClient> client_;
};

TEST_F(ShardListWatchTest, ComplementaryRangesPartitionAThousandConfigMaps) {
  std::map<std::string, std::string> uids;
  for (int i = 0; i < 1000; ++i) {
    std::string name = "cm-" + std::to_string(i);
    uids[name] = Create("default", name);
  }
  std::map<std::string, std::string> halves[2];
  for (int h = 0; h < 2; ++h) {
    TestResponse r = client_->Get(std::string(kCms) +
                                  "?shardSelector=" + UrlEncode(Half(h)));
    ASSERT_EQ(r.status, 200) << r.body;
    halves[h] = Items(r);
    // The applied selector comes back in metadata.shardInfo, and a sharded
    // list does not count what is left.
    EXPECT_EQ(r.Str("/metadata/shardInfo/selector"), Half(h));
    for (const auto& [name, uid] : halves[h]) {
      EXPECT_TRUE(InHalf(h, uid)) << name;
    }
  }
  // Every object in exactly one half, and each half is not trivial.
  EXPECT_EQ(halves[0].size() + halves[1].size(), 1000u);
  EXPECT_GT(halves[0].size(), 400u);
  EXPECT_GT(halves[1].size(), 400u);
  for (const auto& [name, uid] : uids) {
    EXPECT_EQ(halves[0].count(name) + halves[1].count(name), 1u) << name;
    EXPECT_EQ(halves[InHalf(0, uid) ? 0 : 1].count(name), 1u) << name;
  }
  // Joined by ||, the two cover the union, in both orders.
  for (const std::string& both :
       {Half(0) + " || " + Half(1), Half(1) + "||" + Half(0)}) {
    TestResponse all =
        client_->Get(std::string(kCms) + "?shardSelector=" + UrlEncode(both));
    ASSERT_EQ(all.status, 200) << all.body;
    EXPECT_EQ(Items(all), uids);
  }
  // Without the parameter, or with it empty: everything, no shardInfo.
  TestResponse plain = client_->Get(std::string(kCms) + "?shardSelector=");
  ASSERT_EQ(plain.status, 200);
  EXPECT_EQ(Items(plain), uids);
  EXPECT_FALSE(plain.Json()["metadata"].HasMember("shardInfo"));
}

TEST_F(ShardListWatchTest, PagesKeepTheSelector) {
  for (int i = 0; i < 120; ++i) Create("default", "cm-" + std::to_string(i));
  const std::string sel = UrlEncode(Half(1));
  TestResponse whole =
      client_->Get(std::string(kCms) + "?shardSelector=" + sel);
  ASSERT_EQ(whole.status, 200);
  std::map<std::string, std::string> paged;
  std::string token;
  int pages = 0;
  do {
    TestResponse r =
        client_->Get(std::string(kCms) + "?limit=10&shardSelector=" + sel +
                     "&continue=" + UrlEncode(token));
    ASSERT_EQ(r.status, 200) << r.body;
    ++pages;
    auto items = Items(r);
    EXPECT_LE(items.size(), 10u);
    for (const auto& [name, uid] : items) {
      EXPECT_TRUE(InHalf(1, uid)) << name;
      EXPECT_TRUE(paged.emplace(name, uid).second) << name << " twice";
    }
    rapidjson::Document d = r.Json();
    EXPECT_FALSE(d["metadata"].HasMember("remainingItemCount"));
    EXPECT_EQ(r.Str("/metadata/shardInfo/selector"), Half(1));
    token = r.Str("/metadata/continue");
  } while (!token.empty() && pages < 100);
  EXPECT_EQ(paged, Items(whole));
  EXPECT_GT(pages, 3);
}

TEST_F(ShardListWatchTest, NamespaceShardsKeepANamespaceTogether) {
  std::vector<std::string> namespaces = {"team-a", "team-b", "team-c",
                                         "team-d", "team-e", "team-f"};
  std::map<std::string, std::string> ns_of;
  for (const std::string& ns : namespaces) {
    CreateNamespace(ns);
    for (int i = 0; i < 5; ++i) {
      std::string name = ns + "-cm-" + std::to_string(i);
      Create(ns, name);
      ns_of[name] = ns;
    }
  }
  size_t seen = 0;
  for (int h = 0; h < 2; ++h) {
    const std::string sel = UrlEncode(Half(h, "object.metadata.namespace"));
    TestResponse r = client_->Get("/api/v1/configmaps?shardSelector=" + sel);
    ASSERT_EQ(r.status, 200) << r.body;
    std::set<std::string> got;
    for (const auto& [name, uid] : Items(r)) {
      if (ns_of.count(name) == 0) continue;  // the cluster's own ConfigMaps
      got.insert(name);
    }
    for (const auto& [name, ns] : ns_of) {
      EXPECT_EQ(got.count(name), InHalf(h, ns) ? 1u : 0u) << name;
    }
    seen += got.size();
    // The namespaced path applies the selector within the namespace.
    for (const std::string& ns : namespaces) {
      TestResponse in_ns = client_->Get("/api/v1/namespaces/" + ns +
                                        "/configmaps?shardSelector=" + sel);
      ASSERT_EQ(in_ns.status, 200);
      EXPECT_EQ(Items(in_ns).size(), InHalf(h, ns) ? 5u : 0u) << ns;
    }
  }
  EXPECT_EQ(seen, ns_of.size());
}

TEST_F(ShardListWatchTest, WatchDeliversExactlyTheEventsOfTheRange) {
  // Objects present before the watch come as its initial ADDED events.
  std::map<std::string, std::string> before;
  for (int i = 0; i < 20; ++i) {
    std::string name = "old-" + std::to_string(i);
    before[name] = Create("default", name);
  }
  auto w = client_->Watch(std::string(kCms) +
                          "?watch=1&shardSelector=" + UrlEncode(Half(0)));
  ASSERT_EQ(w->status(), 200);
  std::vector<std::string> expected;
  for (const auto& [name, uid] : before) {
    if (InHalf(0, uid)) expected.push_back("ADDED " + name);
  }
  std::vector<std::string> got;
  for (size_t i = 0; i < expected.size(); ++i) {
    auto line = w->Next();
    ASSERT_TRUE(line.has_value());
    got.push_back(Field(*line, "/type") + " " +
                  Field(*line, "/object/metadata/name"));
  }
  std::sort(got.begin(), got.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(got, expected);

  // Then create, update and delete 40 more: exactly the in-range ones'
  // ADDED, MODIFIED and DELETED come, in order.
  expected.clear();
  // In the order written.
  std::vector<std::pair<std::string, std::string>> fresh;
  for (int i = 0; i < 40; ++i) {
    std::string name = "new-" + std::to_string(i);
    fresh.emplace_back(name, Create("default", name));
  }
  for (const auto& [name, uid] : fresh) {
    TestResponse r =
        client_->Patch(std::string(kCms) + "/" + name, R"({"data":{"k":"v2"}})",
                       "application/merge-patch+json");
    ASSERT_EQ(r.status, 200) << r.body;
  }
  for (const auto& [name, uid] : fresh) {
    TestResponse r = client_->Delete(std::string(kCms) + "/" + name);
    ASSERT_EQ(r.status, 200) << r.body;
  }
  for (const char* type : {"ADDED", "MODIFIED", "DELETED"}) {
    for (const auto& [name, uid] : fresh) {
      if (InHalf(0, uid)) expected.push_back(std::string(type) + " " + name);
    }
  }
  // An in-range object written last marks the end: nothing out of range
  // may come before it.
  std::string sentinel;
  for (int i = 0; sentinel.empty(); ++i) {
    std::string name = "sentinel-" + std::to_string(i);
    if (InHalf(0, Create("default", name))) sentinel = name;
  }
  expected.push_back("ADDED " + sentinel);
  got.clear();
  while (got.size() < expected.size()) {
    auto line = w->Next();
    ASSERT_TRUE(line.has_value()) << "after " << got.size() << " events";
    std::string name = Field(*line, "/object/metadata/name");
    got.push_back(Field(*line, "/type") + " " + name);
    if (name == sentinel) break;
  }
  EXPECT_EQ(got, expected);
}

TEST_F(ShardListWatchTest, ServerIgnoringTheSelectorSendsEverything) {
  FaultOptions faults;
  faults.ignore_shard_selector = true;
  server_->faults()->set_options(faults);
  std::map<std::string, std::string> uids;
  for (int i = 0; i < 20; ++i) {
    std::string name = "cm-" + std::to_string(i);
    uids[name] = Create("default", name);
  }
  // A list: every object, and no shardInfo to say it was filtered.
  TestResponse r =
      client_->Get(std::string(kCms) + "?shardSelector=" + UrlEncode(Half(0)));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Items(r), uids);
  EXPECT_FALSE(r.Json()["metadata"].HasMember("shardInfo"));
  // A watch: the events of both halves.
  auto w = client_->Watch(std::string(kCms) +
                          "?watch=1&shardSelector=" + UrlEncode(Half(0)));
  ASSERT_EQ(w->status(), 200);
  std::set<std::string> got;
  for (size_t i = 0; i < uids.size(); ++i) {
    auto line = w->Next();
    ASSERT_TRUE(line.has_value());
    got.insert(Field(*line, "/object/metadata/name"));
  }
  EXPECT_EQ(got.size(), uids.size());
  // Through the control endpoint's JSON too.
  auto parsed =
      FaultOptions::FromJson(R"({"ignoreShardSelector":false})", faults);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(parsed->ignore_shard_selector);
  EXPECT_NE(faults.ToJson().find(R"("ignoreShardSelector":true)"),
            std::string::npos);
  EXPECT_FALSE(
      FaultOptions::FromJson(R"({"ignoreShardSelector":1})", faults).ok());
  server_->faults()->set_options(*parsed);
  r = client_->Get(std::string(kCms) + "?shardSelector=" + UrlEncode(Half(0)));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_LT(Items(r).size(), uids.size());
  EXPECT_EQ(r.Str("/metadata/shardInfo/selector"), Half(0));
}

TEST_F(ShardListWatchTest, MalformedSelectorIsBadRequest) {
  struct Case {
    std::string selector;
    std::string message;
  } cases[] = {
      {"shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
       "invalid shard selector: hexStart must be a 0x-prefixed 16-digit hex "
       "value, got \"0x0\" (did you mean \"0x0000000000000000\"?)"},
      {"shardRange(object.metadata.name, '0x0000000000000000', "
       "'0x8000000000000000')",
       "invalid shard selector: unsupported field path "
       "\"object.metadata.name\"; supported: object.metadata.uid, "
       "object.metadata.namespace"},
      {" ",
       "invalid shard selector: empty shard selector is not allowed; omit "
       "the parameter for unfiltered lists"},
  };
  for (const Case& c : cases) {
    for (const char* extra : {"", "&watch=1"}) {
      TestResponse r = client_->Get(std::string(kCms) + "?shardSelector=" +
                                    UrlEncode(c.selector) + extra);
      EXPECT_EQ(r.status, 400) << c.selector << extra;
      EXPECT_EQ(r.Str("/kind"), "Status");
      EXPECT_EQ(r.Str("/reason"), "BadRequest");
      EXPECT_EQ(r.Str("/message"), c.message) << extra;
    }
  }
  // deletecollection takes the same options.
  TestResponse d = client_->Delete(std::string(kCms) + "?shardSelector=x");
  EXPECT_EQ(d.status, 400);
  EXPECT_THAT(d.Str("/message"), HasSubstr("invalid shard selector: "));
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
