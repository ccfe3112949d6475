// List and watch semantics of the local API server through HTTP, one test
// per rule: selectors, paging, resourceVersion rules, watch streams.
#include <memory>
#include <string>
#include <vector>

#include "api/object_builder.h"
#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "rapidjson/pointer.h"
#include "test/apiserver/test_client.h"
#include "test/fakes/fake_clock.h"

namespace kcr {
namespace apiserver {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kCms[] = "/api/v1/namespaces/default/configmaps";

class ListWatchTest : public ::testing::Test {
 protected:
  // The tests compare resourceVersions with those of their own writes, so
  // nothing else writes: no simulated node and no Lease renewals.
  void SetUp() override {
    ApiServerOptions options;
    options.controllers.node_simulator = false;
    options.controllers.control_plane_leases = false;
    Start(options);
  }
  void Start(ApiServerOptions options) {
    // These tests count and watch the ConfigMaps they write in default;
    // the namespace's own kube-root-ca.crt is cluster_furniture_test's.
    options.controllers.root_ca_cert_publisher = false;
    server_.reset();
    auto s = ApiServer::Start(std::move(options));
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    client_ = std::make_unique<TestClient>("127.0.0.1", server_->port());
  }
  std::string Create(const std::string& name,
                     const std::string& labels = "{}") {
    TestResponse r = client_->Post(kCms, R"({"metadata":{"name":")" + name +
                                             R"(","labels":)" + labels +
                                             R"(},"data":{"k":"v"}})");
    EXPECT_EQ(r.status, 201) << r.body;
    return r.Str("/metadata/resourceVersion");
  }
  std::vector<std::string> Names(const TestResponse& r) {
    std::vector<std::string> out;
    rapidjson::Document d = r.Json();
    if (!d.IsObject() || !d.HasMember("items")) return out;
    for (const auto& i : d["items"].GetArray()) {
      out.push_back(i["metadata"]["name"].GetString());
    }
    return out;
  }
  static std::string Type(const std::string& line) {
    rapidjson::Document d;
    d.Parse(line.c_str());
    return d.HasParseError() ? "" : d["type"].GetString();
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

TEST_F(ListWatchTest, LabelSelectorFullSyntax) {
  Create("a", R"({"env":"prod","tier":"web"})");
  Create("b", R"({"env":"qa"})");
  Create("c", R"({"env":"dev","canary":"1"})");
  EXPECT_THAT(Names(client_->Get(std::string(kCms) +
                                 "?labelSelector=env%20in%20(prod,qa)")),
              ElementsAre("a", "b"));
  EXPECT_THAT(
      Names(client_->Get(std::string(kCms) +
                         "?labelSelector=env%20notin%20(prod),!canary")),
      ElementsAre("b"));
  EXPECT_THAT(Names(client_->Get(std::string(kCms) + "?labelSelector=tier")),
              ElementsAre("a"));
  EXPECT_THAT(
      Names(client_->Get(std::string(kCms) + "?labelSelector=env!%3Dprod")),
      ElementsAre("b", "c"));
  TestResponse bad =
      client_->Get(std::string(kCms) + "?labelSelector=a%20in%20");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.Str("/reason"), "BadRequest");
}

TEST_F(ListWatchTest, FieldSelectorsByNameNamespaceAndPodPhase) {
  Create("a");
  Create("b");
  EXPECT_THAT(
      Names(client_->Get("/api/v1/configmaps?fieldSelector=metadata.name%3Db")),
      ElementsAre("b"));
  EXPECT_THAT(Names(client_->Get("/api/v1/"
                                 "configmaps?fieldSelector=metadata.namespace%"
                                 "3Ddefault,metadata.name!%3Db")),
              ElementsAre("a"));
  client_->Post(
      "/api/v1/namespaces/default/pods",
      R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}})");
  EXPECT_THAT(
      Names(client_->Get("/api/v1/pods?fieldSelector=status.phase%3DPending")),
      ElementsAre("p"));
  EXPECT_THAT(
      Names(client_->Get("/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1")),
      ElementsAre());
  client_->Post(
      "/api/v1/namespaces/default/pods",
      R"({"metadata":{"name":"q"},"spec":{"nodeName":"node-1","containers":[{"name":"c","image":"i"}]}})");
  EXPECT_THAT(
      Names(client_->Get("/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1")),
      ElementsAre("q"));
  EXPECT_THAT(
      Names(client_->Get(
          "/api/v1/"
          "pods?fieldSelector=spec.nodeName!%3Dnode-1,status.phase%3DPending")),
      ElementsAre("p"));
}

// Field labels kube computes rather than reads as they are: a missing bool
// is "false", a missing count "0", a Job's status.successful is
// status.succeeded, the legacy bare "name" is metadata.name, an Event's
// "source" its source.component — in lists and in watches.
TEST_F(ListWatchTest, FieldLabelsKubeComputes) {
  client_->Post(
      "/api/v1/namespaces/default/pods",
      R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}})");
  client_->Post(
      "/api/v1/namespaces/default/pods",
      R"({"metadata":{"name":"h"},"spec":{"hostNetwork":true,"containers":[{"name":"c","image":"i"}]}})");
  EXPECT_THAT(Names(client_->Get(
                  "/api/v1/pods?fieldSelector=spec.hostNetwork%3Dfalse")),
              ElementsAre("p"));
  EXPECT_THAT(
      Names(client_->Get("/api/v1/pods?fieldSelector=spec.hostNetwork%3Dtrue")),
      ElementsAre("h"));
  client_->Post("/api/v1/nodes", R"({"metadata":{"name":"n1"}})");
  client_->Post("/api/v1/nodes",
                R"({"metadata":{"name":"n2"},"spec":{"unschedulable":true}})");
  EXPECT_THAT(Names(client_->Get(
                  "/api/v1/nodes?fieldSelector=spec.unschedulable%3Dfalse")),
              ElementsAre("n1"));
  EXPECT_THAT(
      Names(client_->Get("/api/v1/namespaces?fieldSelector=name%3Ddefault")),
      ElementsAre("default"));
  const char* job =
      R"({"metadata":{"name":"j"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"i"}]}}}})";
  ASSERT_EQ(client_->Post("/apis/batch/v1/namespaces/default/jobs", job).status,
            201);
  EXPECT_THAT(Names(client_->Get(
                  "/apis/batch/v1/jobs?fieldSelector=status.successful%3D0")),
              ElementsAre("j"));
  EXPECT_THAT(Names(client_->Get(
                  "/apis/batch/v1/jobs?fieldSelector=status.successful%3D1")),
              ElementsAre());
  ASSERT_EQ(client_
                ->Put("/apis/batch/v1/namespaces/default/jobs/j/status",
                      R"({"metadata":{"name":"j"},"status":{"succeeded":1}})")
                .status,
            200);
  EXPECT_THAT(Names(client_->Get(
                  "/apis/batch/v1/jobs?fieldSelector=status.successful%3D1")),
              ElementsAre("j"));
  client_->Post(
      "/api/v1/namespaces/default/persistentvolumeclaims",
      R"({"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}})");
  EXPECT_THAT(Names(client_->Get(
                  "/api/v1/persistentvolumeclaims?fieldSelector=name%3Ddata")),
              ElementsAre("data"));
  client_->Post(
      "/api/v1/namespaces/default/events",
      R"({"metadata":{"name":"e"},"involvedObject":{"kind":"Pod","name":"p","namespace":"default"},"reason":"R","source":{"component":"kubelet"}})");
  EXPECT_THAT(
      Names(client_->Get("/api/v1/events?fieldSelector=source%3Dkubelet")),
      ElementsAre("e"));

  // A watch reads the same: an RC's missing status.replicas is "0".
  auto w = client_->Watch(
      "/api/v1/namespaces/default/replicationcontrollers?watch=1&"
      "fieldSelector=status.replicas%3D0");
  client_->Post(
      "/api/v1/namespaces/default/replicationcontrollers",
      R"({"metadata":{"name":"rc"},"spec":{"replicas":0,"selector":{"app":"x"},"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}})");
  auto line = w->Next();
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(Type(*line), "ADDED");
  EXPECT_EQ(Field(*line, "/object/metadata/name"), "rc");
}

TEST_F(ListWatchTest, UnsupportedFieldLabelIsBadRequest) {
  TestResponse r =
      client_->Get(std::string(kCms) + "?fieldSelector=data.k%3Dv");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.Str("/message"), "field label not supported: data.k");
  TestResponse w = client_->Get(
      std::string(kCms) + "?watch=1&fieldSelector=status.phase%3DRunning");
  EXPECT_EQ(w.status, 400);
}

TEST_F(ListWatchTest, LimitAndContinueWithRemainingItemCount) {
  for (const char* n : {"a", "b", "c", "d", "e"}) Create(n);
  TestResponse p1 = client_->Get(std::string(kCms) + "?limit=2");
  EXPECT_THAT(Names(p1), ElementsAre("a", "b"));
  EXPECT_EQ(p1.Int("/metadata/remainingItemCount"), 3);
  std::string token = p1.Str("/metadata/continue");
  ASSERT_FALSE(token.empty());
  TestResponse p2 =
      client_->Get(std::string(kCms) + "?limit=2&continue=" + token);
  EXPECT_THAT(Names(p2), ElementsAre("c", "d"));
  EXPECT_EQ(p2.Int("/metadata/remainingItemCount"), 1);
  EXPECT_EQ(p2.Str("/metadata/resourceVersion"),
            p1.Str("/metadata/resourceVersion"));
  TestResponse p3 = client_->Get(
      std::string(kCms) + "?limit=2&continue=" + p2.Str("/metadata/continue"));
  EXPECT_THAT(Names(p3), ElementsAre("e"));
  EXPECT_EQ(p3.Str("/metadata/continue"), "");
  EXPECT_EQ(p3.Int("/metadata/remainingItemCount"), -1);
}

TEST_F(ListWatchTest, RemainingItemCountOmittedWithSelector) {
  for (const char* n : {"a", "b", "c"}) Create(n, R"({"x":"1"})");
  TestResponse r =
      client_->Get(std::string(kCms) + "?limit=1&labelSelector=x%3D1");
  EXPECT_THAT(Names(r), ElementsAre("a"));
  EXPECT_FALSE(r.Str("/metadata/continue").empty());
  EXPECT_EQ(r.Int("/metadata/remainingItemCount"), -1);
}

TEST_F(ListWatchTest, ContinuePagesKeepTheFirstPagesSnapshot) {
  for (const char* n : {"a", "b", "c"}) Create(n);
  TestResponse p1 = client_->Get(std::string(kCms) + "?limit=1");
  Create("bb");
  client_->Delete(std::string(kCms) + "/c");
  TestResponse p2 = client_->Get(std::string(kCms) +
                                 "?continue=" + p1.Str("/metadata/continue"));
  EXPECT_THAT(Names(p2), ElementsAre("b", "c"));
}

TEST_F(ListWatchTest, ExpiredContinueIsGone) {
  ApiServerOptions options;
  options.history_size = 2;
  Start(options);
  for (const char* n : {"a", "b", "c"}) Create(n);
  TestResponse p1 = client_->Get(std::string(kCms) + "?limit=1");
  for (const char* n : {"d", "e", "f"}) Create(n);
  TestResponse r = client_->Get(std::string(kCms) +
                                "?continue=" + p1.Str("/metadata/continue"));
  EXPECT_EQ(r.status, 410);
  EXPECT_EQ(r.Str("/reason"), "Expired");
  EXPECT_THAT(r.Str("/message"),
              StartsWith("The provided continue parameter is too old"));
  TestResponse bad = client_->Get(std::string(kCms) + "?continue=garbage!");
  EXPECT_EQ(bad.status, 400);
}

TEST_F(ListWatchTest, ResourceVersionMatchRules) {
  Create("a");
  auto check = [&](const std::string& query, const std::string& message) {
    TestResponse r = client_->Get(std::string(kCms) + "?" + query);
    EXPECT_EQ(r.status, 422) << query;
    EXPECT_EQ(r.Str("/reason"), "Invalid") << query;
    EXPECT_EQ(r.Str("/details/kind"), "ListOptions");
    EXPECT_EQ(r.Str("/message"),
              "ListOptions.meta.k8s.io \"\" is invalid: " + message)
        << query;
  };
  check("resourceVersionMatch=NotOlderThan",
        "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden "
        "unless resourceVersion is provided");
  check("resourceVersion=0&resourceVersionMatch=Exact",
        "resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is "
        "forbidden for resourceVersion \"0\"");
  check("resourceVersion=5&resourceVersionMatch=Exact&continue=x",
        "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden "
        "when continue is provided");
  check(
      "sendInitialEvents=true",
      "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list");
}

TEST_F(ListWatchTest, ResourceVersionSemanticsOfList) {
  std::string rv_a = Create("a");
  Create("b");
  // "0" and "" and NotOlderThan an old version: the current state.
  EXPECT_THAT(Names(client_->Get(std::string(kCms) + "?resourceVersion=0")),
              ElementsAre("a", "b"));
  EXPECT_THAT(Names(client_->Get(std::string(kCms) + "?resourceVersion=" +
                                 rv_a + "&resourceVersionMatch=NotOlderThan")),
              ElementsAre("a", "b"));
  // Exact: the state at that version.
  TestResponse exact =
      client_->Get(std::string(kCms) + "?resourceVersion=" + rv_a +
                   "&resourceVersionMatch=Exact");
  EXPECT_THAT(Names(exact), ElementsAre("a"));
  EXPECT_EQ(exact.Str("/metadata/resourceVersion"), rv_a);
  TestResponse future =
      client_->Get(std::string(kCms) + "?resourceVersion=999999");
  EXPECT_EQ(future.status, 504);
  EXPECT_THAT(future.Str("/message"), StartsWith("Too large resource version"));
}

TEST_F(ListWatchTest, WatchFromResourceVersionSendsOnlyLaterChanges) {
  Create("a");
  std::string rv = Create("b");
  auto w =
      client_->Watch(std::string(kCms) + "?watch=true&resourceVersion=" + rv);
  Create("c");
  auto line = w->Next();
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(Type(*line), "ADDED");
  EXPECT_EQ(Field(*line, "/object/metadata/name"), "c");
}

TEST_F(ListWatchTest, BookmarksCarryOnlyTheResourceVersion) {
  ApiServerOptions options;
  options.bookmark_interval = absl::Milliseconds(50);
  Start(options);
  std::string rv = Create("a");
  auto w =
      client_->Watch(std::string(kCms) +
                     "?watch=1&allowWatchBookmarks=true&resourceVersion=" + rv);
  auto line = w->Next();
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(
      *line,
      R"({"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":")" +
          std::to_string(server_->storage()->CurrentResourceVersion()) +
          R"("}}})");
}

TEST_F(ListWatchTest, TimeoutSecondsEndsTheStreamCleanly) {
  auto w = client_->Watch(std::string(kCms) + "?watch=1&timeoutSeconds=1");
  EXPECT_EQ(w->status(), 200);
  while (w->Next().has_value()) {
  }
  EXPECT_TRUE(w->ended());
}

// kube-apiserver sends a last BOOKMARK shortly before a watch's deadline,
// even when the interval has not come round.
TEST_F(ListWatchTest, BookmarkBeforeTheTimeoutEndsTheStream) {
  std::string rv = Create("a");
  auto w = client_->Watch(std::string(kCms) +
                          "?watch=1&allowWatchBookmarks=true&timeoutSeconds=1&"
                          "resourceVersion=" +
                          rv);
  ASSERT_EQ(w->status(), 200);
  std::vector<std::string> types;
  std::string last;
  while (auto line = w->Next()) {
    types.push_back(Type(*line));
    last = *line;
  }
  EXPECT_TRUE(w->ended());
  EXPECT_THAT(types, ElementsAre("BOOKMARK"));
  EXPECT_EQ(Field(last, "/object/metadata/resourceVersion"), rv);
  // Without allowWatchBookmarks the stream just ends.
  auto plain = client_->Watch(
      std::string(kCms) + "?watch=1&timeoutSeconds=1&resourceVersion=" + rv);
  EXPECT_FALSE(plain->Next().has_value());
  EXPECT_TRUE(plain->ended());
}

// Timeouts and bookmarks follow the server's clock, not the wall clock.
TEST_F(ListWatchTest, WatchTimeoutAndBookmarksFollowTheServersClock) {
  testing::FakeClock clock;
  ApiServerOptions options;
  options.controllers.node_simulator = false;
  options.controllers.control_plane_leases = false;
  options.clock = &clock;
  options.bookmark_interval = absl::Seconds(60);
  Start(options);
  std::string rv = Create("a");
  auto w =
      client_->Watch(std::string(kCms) +
                     "?watch=1&allowWatchBookmarks=true&timeoutSeconds=300&"
                     "resourceVersion=" +
                     rv);
  ASSERT_EQ(w->status(), 200);
  clock.BlockUntilWaiters(1);  // the watch waits for events
  clock.Advance(absl::Seconds(60));
  auto bookmark = w->Next();
  ASSERT_TRUE(bookmark.has_value());
  EXPECT_EQ(Type(*bookmark), "BOOKMARK");
  EXPECT_EQ(Field(*bookmark, "/object/metadata/resourceVersion"), rv);

  std::string b = Create("b");
  auto added = w->Next();
  ASSERT_TRUE(added.has_value());
  EXPECT_EQ(Type(*added), "ADDED");
  // Nothing more until the server's clock reaches the timeout; then a last
  // bookmark, and the stream ends.
  clock.BlockUntilWaiters(1);
  clock.Advance(absl::Seconds(240));
  std::vector<std::string> types;
  std::string last;
  while (auto line = w->Next()) {
    types.push_back(Type(*line));
    last = *line;
  }
  EXPECT_TRUE(w->ended());
  EXPECT_THAT(types, ElementsAre("BOOKMARK"));
  EXPECT_EQ(Field(last, "/object/metadata/resourceVersion"), b);
}

TEST_F(ListWatchTest, SingleObjectWatchByName) {
  Create("a");
  Create("b");
  auto w = client_->Watch(std::string(kCms) +
                          "?watch=1&fieldSelector=metadata.name%3Db");
  auto first = w->Next();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(Field(*first, "/object/metadata/name"), "b");
  client_->Patch(std::string(kCms) + "/a", R"({"data":{"k":"1"}})",
                 "application/merge-patch+json");
  client_->Patch(std::string(kCms) + "/b", R"({"data":{"k":"2"}})",
                 "application/merge-patch+json");
  auto next = w->Next();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(Type(*next), "MODIFIED");
  EXPECT_EQ(Field(*next, "/object/metadata/name"), "b");
}

TEST_F(ListWatchTest, SelectorTransitionsAreDeletedAndAdded) {
  std::string rv = Create("a", R"({"app":"x"})");
  auto w =
      client_->Watch(std::string(kCms) +
                     "?watch=1&labelSelector=app%3Dx&resourceVersion=" + rv);
  client_->Patch(std::string(kCms) + "/a",
                 R"({"metadata":{"labels":{"app":"y"}}})",
                 "application/merge-patch+json");
  auto gone = w->Next();
  ASSERT_TRUE(gone.has_value());
  EXPECT_EQ(Type(*gone), "DELETED");
  client_->Patch(std::string(kCms) + "/a",
                 R"({"metadata":{"labels":{"app":"x"}}})",
                 "application/merge-patch+json");
  auto back = w->Next();
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(Type(*back), "ADDED");
  EXPECT_EQ(Field(*back, "/object/metadata/labels/app"), "x");
}

TEST_F(ListWatchTest, SendInitialEventsEndsWithAnnotatedBookmark) {
  Create("a");
  std::string rv = Create("b");
  auto w = client_->Watch(
      std::string(kCms) +
      "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&"
      "allowWatchBookmarks=true&resourceVersion=");
  ASSERT_EQ(w->status(), 200);
  auto e1 = w->Next();
  auto e2 = w->Next();
  auto bm = w->Next();
  ASSERT_TRUE(e1 && e2 && bm);
  EXPECT_EQ(Type(*e1), "ADDED");
  EXPECT_EQ(Type(*e2), "ADDED");
  EXPECT_EQ(Type(*bm), "BOOKMARK");
  EXPECT_EQ(
      Field(*bm, "/object/metadata/annotations/k8s.io~1initial-events-end"),
      "true");
  EXPECT_EQ(Field(*bm, "/object/metadata/resourceVersion"), rv);
  Create("c");
  auto live = w->Next();
  ASSERT_TRUE(live.has_value());
  EXPECT_EQ(Field(*live, "/object/metadata/name"), "c");
}

TEST_F(ListWatchTest, SendInitialEventsWithoutNotOlderThanIsInvalid) {
  TestResponse r =
      client_->Get(std::string(kCms) +
                   "?watch=1&sendInitialEvents=true&allowWatchBookmarks=true");
  EXPECT_EQ(r.status, 422);
  EXPECT_THAT(r.Str("/message"), HasSubstr("resourceVersionMatch"));
  TestResponse m = client_->Get(
      std::string(kCms) +
      "?watch=1&resourceVersionMatch=NotOlderThan&resourceVersion=1");
  EXPECT_EQ(m.status, 422);
}

TEST_F(ListWatchTest, TableWatchSendsOneRowTables) {
  Create("a");
  const std::string accept =
      "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
  auto w = client_->Watch(std::string(kCms) + "?watch=1", {{"Accept", accept}});
  auto first = w->Next();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(Field(*first, "/object/kind"), "Table");
  EXPECT_THAT(*first, HasSubstr("columnDefinitions\":[{"));
  Create("b");
  auto second = w->Next();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(Field(*second, "/object/kind"), "Table");
  EXPECT_THAT(*second, Not(HasSubstr("columnDefinitions\":[{")));
  EXPECT_EQ(Field(*second, "/object/rows/0/cells/0"), "b");
}

TEST_F(ListWatchTest, LargeListsAreStreamedWhole) {
  ResourceInfoPtr cms = server_->resources()->Lookup("", "v1", "configmaps");
  for (int i = 0; i < 1500; ++i) {
    auto b = api::ObjectBuilder::FromJson(R"({"metadata":{"name":"cm-)" +
                                          std::to_string(10000 + i) +
                                          R"("},"data":{"k":"v"}})");
    ASSERT_TRUE(
        server_->registry()->Create(*cms, "default", std::move(*b)).ok());
  }
  TestResponse r = client_->Get(kCms);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("transfer-encoding"), "chunked");
  std::vector<std::string> names = Names(r);
  ASSERT_EQ(names.size(), 1500u);
  EXPECT_EQ(names.front(), "cm-10000");
  EXPECT_EQ(names.back(), "cm-11499");
  EXPECT_EQ(r.Str("/kind"), "ConfigMapList");
  EXPECT_FALSE(r.Str("/metadata/resourceVersion").empty());
}

TEST_F(ListWatchTest, ListAsTableForKubectlGet) {
  Create("a");
  TestResponse r =
      client_->Get(std::string(kCms) + "?limit=500",
                   {{"Accept",
                     "application/json;as=Table;v=v1;g=meta.k8s.io,application/"
                     "json;as=Table;"
                     "v=v1beta1;g=meta.k8s.io,application/json"}});
  EXPECT_EQ(r.Str("/kind"), "Table");
  EXPECT_EQ(r.Str("/columnDefinitions/0/name"), "Name");
  EXPECT_EQ(r.Str("/rows/0/cells/0"), "a");
  EXPECT_EQ(r.Str("/rows/0/object/kind"), "PartialObjectMetadata");
}

// --- Metadata only (client-go's metadata client) ---

constexpr char kAcceptMetadataList[] =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
    "application/json";
constexpr char kAcceptMetadata[] =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,"
    "application/json";

TEST_F(ListWatchTest, ListAsPartialObjectMetadataList) {
  Create("a", R"({"app":"web"})");
  Create("b");
  TestResponse r = client_->Get(std::string(kCms) + "?limit=1",
                                {{"Accept", kAcceptMetadataList}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Str("/kind"), "PartialObjectMetadataList");
  EXPECT_EQ(r.Str("/apiVersion"), "meta.k8s.io/v1");
  EXPECT_FALSE(r.Str("/metadata/resourceVersion").empty());
  EXPECT_FALSE(r.Str("/metadata/continue").empty());
  rapidjson::Document d = r.Json();
  ASSERT_EQ(d["items"].Size(), 1u);
  const rapidjson::Value& item = d["items"][0];
  EXPECT_STREQ(item["kind"].GetString(), "PartialObjectMetadata");
  EXPECT_STREQ(item["apiVersion"].GetString(), "meta.k8s.io/v1");
  EXPECT_STREQ(item["metadata"]["name"].GetString(), "a");
  EXPECT_STREQ(item["metadata"]["labels"]["app"].GetString(), "web");
  EXPECT_FALSE(item.HasMember("data"));  // metadata only
  EXPECT_EQ(item.MemberCount(), 3u);
}

TEST_F(ListWatchTest, LargeListAsPartialObjectMetadataListIsStreamed) {
  ResourceInfoPtr cms = server_->resources()->Lookup("", "v1", "configmaps");
  for (int i = 0; i < 1200; ++i) {
    auto b = api::ObjectBuilder::FromJson(R"({"metadata":{"name":"cm-)" +
                                          std::to_string(10000 + i) +
                                          R"("},"data":{"k":"v"}})");
    ASSERT_TRUE(
        server_->registry()->Create(*cms, "default", std::move(*b)).ok());
  }
  TestResponse r = client_->Get(kCms, {{"Accept", kAcceptMetadataList}});
  EXPECT_EQ(r.Header("transfer-encoding"), "chunked");
  EXPECT_EQ(r.Str("/kind"), "PartialObjectMetadataList");
  EXPECT_EQ(Names(r).size(), 1200u);
  EXPECT_EQ(r.Str("/items/1199/kind"), "PartialObjectMetadata");
  EXPECT_THAT(r.body, Not(HasSubstr("\"data\"")));
}

TEST_F(ListWatchTest, GetAsPartialObjectMetadata) {
  Create("a");
  TestResponse r =
      client_->Get(std::string(kCms) + "/a", {{"Accept", kAcceptMetadata}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Str("/kind"), "PartialObjectMetadata");
  EXPECT_EQ(r.Str("/apiVersion"), "meta.k8s.io/v1");
  EXPECT_EQ(r.Str("/metadata/name"), "a");
  EXPECT_THAT(r.body, Not(HasSubstr("\"data\"")));
  // v1beta1 too, as kube-apiserver.
  r = client_->Get(
      std::string(kCms) + "/a",
      {{"Accept",
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1"}});
  EXPECT_EQ(r.Str("/apiVersion"), "meta.k8s.io/v1beta1");
}

TEST_F(ListWatchTest, PartialObjectMetadataKindMustFitTheAnswer) {
  Create("a");
  TestResponse r = client_->Get(kCms, {{"Accept", kAcceptMetadata}});
  EXPECT_EQ(r.status, 406) << r.body;
  EXPECT_EQ(r.Str("/reason"), "NotAcceptable");
  EXPECT_THAT(r.Str("/message"),
              HasSubstr("you requested PartialObjectMetadata, but the "
                        "requested object is a list (ConfigMapList)"));
  r = client_->Get(std::string(kCms) + "/a", {{"Accept", kAcceptMetadataList}});
  EXPECT_EQ(r.status, 406) << r.body;
  EXPECT_THAT(r.Str("/message"),
              HasSubstr("but the requested object is not a list (ConfigMap)"));
  // An unknown version is not offered: plain JSON, the next choice.
  r = client_->Get(
      std::string(kCms) + "/a",
      {{"Accept",
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2,"
        "application/json"}});
  EXPECT_EQ(r.Str("/kind"), "ConfigMap");
}

TEST_F(ListWatchTest, WatchAsPartialObjectMetadata) {
  Create("a");
  auto w = client_->Watch(std::string(kCms) +
                              "?watch=1&allowWatchBookmarks=1"
                              "&sendInitialEvents=true"
                              "&resourceVersionMatch="
                              "NotOlderThan",
                          {{"Accept", kAcceptMetadata}});
  auto first = w->Next();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(Type(*first), "ADDED");
  EXPECT_EQ(Field(*first, "/object/kind"), "PartialObjectMetadata");
  EXPECT_EQ(Field(*first, "/object/apiVersion"), "meta.k8s.io/v1");
  EXPECT_EQ(Field(*first, "/object/metadata/name"), "a");
  EXPECT_THAT(*first, Not(HasSubstr("\"data\"")));
  auto bookmark = w->Next();
  ASSERT_TRUE(bookmark.has_value());
  EXPECT_EQ(Type(*bookmark), "BOOKMARK");
  EXPECT_EQ(Field(*bookmark, "/object/kind"), "PartialObjectMetadata");
  EXPECT_EQ(Field(*bookmark, "/object/apiVersion"), "meta.k8s.io/v1");
  Create("b");
  auto second = w->Next();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(Field(*second, "/object/kind"), "PartialObjectMetadata");
  EXPECT_EQ(Field(*second, "/object/metadata/name"), "b");
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
