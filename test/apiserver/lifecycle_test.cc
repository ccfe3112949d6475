// Object lifecycle semantics of the local API server through HTTP: create
// and update rules, status subresources, generation, deletion with
// finalizers and propagation policies, namespaces, CRDs and custom
// resources, one test per rule. Built-in controllers are off unless a test
// needs one, so what is seen is the API server's own behaviour.
#include <functional>
#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "test/apiserver/test_client.h"
#include "test/util/eventually.h"

namespace kcr {
namespace apiserver {
namespace {

using ::kcr::testing::Eventually;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string ToJson(const rapidjson::Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  v.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

constexpr char kCms[] = "/api/v1/namespaces/default/configmaps";
constexpr char kPods[] = "/api/v1/namespaces/default/pods";
constexpr char kDeploys[] = "/apis/apps/v1/namespaces/default/deployments";
constexpr char kCrds[] =
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
constexpr char kWidgets[] = "/apis/example.com/v1/namespaces/default/widgets";

constexpr char kPod[] =
    R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}})";
constexpr char kDeployment[] =
    R"({"metadata":{"name":"d"},"spec":{"replicas":1,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}})";
constexpr char kCrd[] = R"({
  "apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
  "metadata":{"name":"widgets.example.com"},
  "spec":{"group":"example.com","scope":"Namespaced",
    "names":{"kind":"Widget","plural":"widgets","singular":"widget","shortNames":["wd"]},
    "versions":[{"name":"v1","served":true,"storage":true,
      "subresources":{"status":{}},
      "schema":{"openAPIV3Schema":{"type":"object","properties":{
        "spec":{"type":"object","required":["size"],"properties":{
          "size":{"type":"integer","minimum":1,"maximum":10},
          "color":{"type":"string","enum":["red","blue"]},
          "free":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},
        "status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}}}]}})";

class LifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(false); }
  void Start(bool controllers) {
    server_.reset();
    ApiServerOptions options;
    options.controllers.garbage_collector = controllers;
    options.controllers.namespace_controller = controllers;
    // The store's own rules are under test: nothing else writes status.
    options.controllers.node_simulator = false;
    options.controllers.deployment_controller = false;
    options.controllers.replicaset_controller = false;
    auto s = ApiServer::Start(std::move(options));
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    client_ = std::make_unique<TestClient>("127.0.0.1", server_->port());
  }
  void CreateCrd() {
    TestResponse r = client_->Post(kCrds, kCrd);
    ASSERT_EQ(r.status, 201) << r.body;
  }
  TestResponse Merge(const std::string& path, const std::string& patch) {
    return client_->Patch(path, patch, "application/merge-patch+json");
  }

  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<TestClient> client_;
};

TEST_F(LifecycleTest, NameAndNamespaceMismatchAreBadRequests) {
  client_->Post(kCms, R"({"metadata":{"name":"a"}})");
  TestResponse name =
      client_->Put(std::string(kCms) + "/a", R"({"metadata":{"name":"b"}})");
  EXPECT_EQ(name.status, 400);
  EXPECT_EQ(
      name.Str("/message"),
      "the name of the object (b) does not match the name on the URL (a)");
  TestResponse ns =
      client_->Post(kCms, R"({"metadata":{"name":"c","namespace":"other"}})");
  EXPECT_EQ(ns.status, 400);
  EXPECT_EQ(ns.Str("/message"),
            "the namespace of the provided object does not match the namespace "
            "sent on the request");
}

TEST_F(LifecycleTest, MissingNameIsInvalid) {
  TestResponse r = client_->Post(kCms, R"({"metadata":{}})");
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(r.Str("/message"),
            "ConfigMap \"\" is invalid: metadata.name: Required value: name or "
            "generateName is required");
  EXPECT_EQ(r.Str("/details/causes/0/reason"), "FieldValueRequired");
  EXPECT_EQ(r.Str("/details/causes/0/field"), "metadata.name");
}

TEST_F(LifecycleTest, MalformedBodyIsBadRequest) {
  TestResponse r = client_->Post(kCms, R"({"metadata":)");
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.Str("/message"), StartsWith("couldn't get version/kind"));
  TestResponse p = client_->Patch(std::string(kCms) + "/x", "[",
                                  "application/json-patch+json");
  EXPECT_EQ(p.status, 400);
}

TEST_F(LifecycleTest, UnknownPatchTypeIsUnsupportedMediaType) {
  client_->Post(kCms, R"({"metadata":{"name":"a"}})");
  TestResponse r = client_->Patch(std::string(kCms) + "/a", "{}", "text/plain");
  EXPECT_EQ(r.status, 415);
  EXPECT_EQ(r.Str("/reason"), "UnsupportedMediaType");
}

TEST_F(LifecycleTest, DryRunDoesNotPersist) {
  TestResponse r = client_->Post(std::string(kCms) + "?dryRun=All",
                                 R"({"metadata":{"name":"a"}})");
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(client_->Get(std::string(kCms) + "/a").status, 404);
}

TEST_F(LifecycleTest, PodStatusIsIgnoredOnMainWritesAndSpecOnStatusWrites) {
  TestResponse c = client_->Post(kPods, kPod);
  ASSERT_EQ(c.status, 201) << c.body;
  EXPECT_EQ(c.Str("/status/phase"), "Pending");
  TestResponse main = Merge(
      std::string(kPods) + "/p",
      R"({"metadata":{"labels":{"x":"1"}},"status":{"phase":"Running"}})");
  EXPECT_EQ(main.Str("/status/phase"), "Pending");
  EXPECT_EQ(main.Str("/metadata/labels/x"), "1");
  TestResponse status = Merge(
      std::string(kPods) + "/p/status",
      R"({"metadata":{"labels":{"x":"2"}},"status":{"phase":"Running"}})");
  EXPECT_EQ(status.status, 200) << status.body;
  EXPECT_EQ(status.Str("/status/phase"), "Running");
  EXPECT_EQ(status.Str("/metadata/labels/x"), "1");
}

TEST_F(LifecycleTest, DeploymentGenerationBumpsOnSpecAndAnnotationsOnly) {
  TestResponse c = client_->Post(kDeploys, kDeployment);
  ASSERT_EQ(c.status, 201) << c.body;
  EXPECT_EQ(c.Int("/metadata/generation"), 1);
  std::string d = std::string(kDeploys) + "/d";
  EXPECT_EQ(Merge(d, R"({"metadata":{"labels":{"l":"1"}}})")
                .Int("/metadata/generation"),
            1);
  EXPECT_EQ(Merge(d, R"({"metadata":{"annotations":{"a":"1"}}})")
                .Int("/metadata/generation"),
            2);
  EXPECT_EQ(Merge(d, R"({"spec":{"replicas":3}})").Int("/metadata/generation"),
            3);
  EXPECT_EQ(Merge(d + "/status", R"({"status":{"replicas":3}})")
                .Int("/metadata/generation"),
            3);
}

// apps/v1 defaulting of the strategy: absent or empty (as kubectl's
// generators send it) becomes a RollingUpdate of 25% / 25%; what is set is
// kept, and Recreate gets no rollingUpdate.
TEST_F(LifecycleTest, DeploymentStrategyDefaults) {
  auto create = [&](const std::string& name, const std::string& strategy) {
    std::string body =
        std::string(R"({"metadata":{"name":")") + name + R"("},"spec":{)" +
        strategy +
        R"("selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}})";
    TestResponse c = client_->Post(kDeploys, body);
    EXPECT_EQ(c.status, 201) << c.body;
    return c;
  };
  for (const auto& [name, strategy] :
       {std::pair<std::string, std::string>{"absent", ""},
        {"empty", R"("strategy":{},)"},
        {"typed", R"("strategy":{"type":"RollingUpdate"},)"}}) {
    TestResponse c = create(name, strategy);
    EXPECT_EQ(c.Str("/spec/strategy/type"), "RollingUpdate") << name;
    EXPECT_EQ(c.Str("/spec/strategy/rollingUpdate/maxUnavailable"), "25%")
        << name;
    EXPECT_EQ(c.Str("/spec/strategy/rollingUpdate/maxSurge"), "25%") << name;
  }
  TestResponse partial =
      create("partial", R"("strategy":{"rollingUpdate":{"maxSurge":1}},)");
  EXPECT_EQ(partial.Int("/spec/strategy/rollingUpdate/maxSurge"), 1);
  EXPECT_EQ(partial.Str("/spec/strategy/rollingUpdate/maxUnavailable"), "25%");
  TestResponse recreate =
      create("recreate", R"("strategy":{"type":"Recreate"},)");
  EXPECT_EQ(recreate.Str("/spec/strategy/type"), "Recreate");
  EXPECT_FALSE(recreate.Json()["spec"]["strategy"].HasMember("rollingUpdate"));
}

TEST_F(LifecycleTest,
       DeploymentStatusIsIgnoredOnMainWritesAndSpecOnStatusWrites) {
  ASSERT_EQ(client_->Post(kDeploys, kDeployment).status, 201);
  const std::string d = std::string(kDeploys) + "/d";
  TestResponse status = Merge(
      d + "/status",
      R"({"metadata":{"labels":{"x":"2"}},"spec":{"replicas":7},"status":{"replicas":1,"readyReplicas":1}})");
  ASSERT_EQ(status.status, 200) << status.body;
  EXPECT_EQ(status.Int("/status/readyReplicas"), 1);
  EXPECT_EQ(status.Int("/spec/replicas"), 1);
  EXPECT_EQ(status.Str("/metadata/labels/x"), "");
  TestResponse main =
      Merge(d, R"({"spec":{"replicas":3},"status":{"readyReplicas":9}})");
  ASSERT_EQ(main.status, 200) << main.body;
  EXPECT_EQ(main.Int("/spec/replicas"), 3);
  EXPECT_EQ(main.Int("/status/readyReplicas"), 1);
  // A PUT of the whole object keeps the stored status too.
  rapidjson::Document doc = main.Json();
  doc["status"]["readyReplicas"].SetInt(5);
  doc["spec"]["replicas"].SetInt(2);
  TestResponse put = client_->Put(d, ToJson(doc));
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(put.Int("/spec/replicas"), 2);
  EXPECT_EQ(put.Int("/status/readyReplicas"), 1);
}

// A resourceVersion inside a patch is a precondition, as for an update.
TEST_F(LifecycleTest, PatchWithStaleResourceVersionIsConflict) {
  std::string rv =
      client_->Post(kCms, R"({"metadata":{"name":"a"},"data":{"k":"1"}})")
          .Str("/metadata/resourceVersion");
  const std::string a = std::string(kCms) + "/a";
  TestResponse ok = Merge(a, R"({"metadata":{"resourceVersion":")" + rv +
                                 R"("},"data":{"k":"2"}})");
  ASSERT_EQ(ok.status, 200) << ok.body;
  const std::string conflict =
      "Operation cannot be fulfilled on configmaps \"a\": the object has been "
      "modified; please apply your changes to the latest version and try again";
  TestResponse merge = Merge(a, R"({"metadata":{"resourceVersion":")" + rv +
                                    R"("},"data":{"k":"3"}})");
  EXPECT_EQ(merge.status, 409);
  EXPECT_EQ(merge.Str("/reason"), "Conflict");
  EXPECT_EQ(merge.Str("/message"), conflict);
  TestResponse json = client_->Patch(
      a,
      R"([{"op":"replace","path":"/metadata/resourceVersion","value":")" + rv +
          R"("},{"op":"replace","path":"/data/k","value":"4"}])",
      "application/json-patch+json");
  EXPECT_EQ(json.status, 409);
  EXPECT_EQ(json.Str("/message"), conflict);
  EXPECT_EQ(client_->Get(a).Str("/data/k"), "2");
}

TEST_F(LifecycleTest, UpdateThatChangesNothingKeepsTheResourceVersion) {
  TestResponse c =
      client_->Post(kCms, R"({"metadata":{"name":"a"},"data":{"k":"v"}})");
  TestResponse same = Merge(std::string(kCms) + "/a", R"({"data":{"k":"v"}})");
  EXPECT_EQ(same.Str("/metadata/resourceVersion"),
            c.Str("/metadata/resourceVersion"));
}

TEST_F(LifecycleTest, ScaleSubresource) {
  client_->Post(kDeploys, kDeployment);
  TestResponse s = client_->Get(std::string(kDeploys) + "/d/scale");
  EXPECT_EQ(s.Str("/kind"), "Scale");
  EXPECT_EQ(s.Str("/apiVersion"), "autoscaling/v1");
  EXPECT_EQ(s.Int("/spec/replicas"), 1);
  EXPECT_EQ(s.Str("/status/selector"), "a=b");
  TestResponse put = client_->Put(
      std::string(kDeploys) + "/d/scale",
      R"({"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"d"},"spec":{"replicas":4}})");
  EXPECT_EQ(put.Int("/spec/replicas"), 4);
  EXPECT_EQ(client_->Get(std::string(kDeploys) + "/d").Int("/spec/replicas"),
            4);
}

TEST_F(LifecycleTest, DeleteResponseBodiesPerKind) {
  TestResponse pod = client_->Post(kPods, kPod);
  TestResponse dp = client_->Delete(std::string(kPods) + "/p");
  EXPECT_EQ(dp.status, 200);
  EXPECT_EQ(dp.Str("/kind"), "Pod");  // pods answer with the object
  EXPECT_EQ(dp.Str("/metadata/uid"), pod.Str("/metadata/uid"));
  client_->Post(kDeploys, kDeployment);
  TestResponse dd = client_->Delete(std::string(kDeploys) + "/d");
  EXPECT_EQ(dd.Str("/kind"), "Status");
  EXPECT_EQ(dd.Str("/details/group"), "apps");
  EXPECT_EQ(dd.Str("/details/kind"), "deployments");
}

TEST_F(LifecycleTest, FinalizersHoldDeletionUntilRemoved) {
  std::string rv =
      client_
          ->Post(kCms,
                 R"({"metadata":{"name":"a","finalizers":["x.io/hold"]}})")
          .Str("/metadata/resourceVersion");
  auto w = client_->Watch(std::string(kCms) + "?watch=1&resourceVersion=" + rv);
  TestResponse d = client_->Delete(std::string(kCms) + "/a");
  EXPECT_EQ(d.status, 200);
  EXPECT_EQ(d.Str("/kind"), "ConfigMap");
  EXPECT_FALSE(d.Str("/metadata/deletionTimestamp").empty());
  EXPECT_EQ(d.Int("/metadata/deletionGracePeriodSeconds"), 0);
  auto modified = w->Next();
  ASSERT_TRUE(modified.has_value());
  EXPECT_THAT(*modified, StartsWith(R"({"type":"MODIFIED")"));
  // No new finalizers once deleting.
  TestResponse add =
      Merge(std::string(kCms) + "/a",
            R"({"metadata":{"finalizers":["x.io/hold","y.io/new"]}})");
  EXPECT_EQ(add.status, 422);
  EXPECT_THAT(
      add.Str("/message"),
      HasSubstr("metadata.finalizers: Forbidden: no new finalizers can be "
                "added if the object is being deleted"));
  EXPECT_EQ(
      Merge(std::string(kCms) + "/a", R"({"metadata":{"finalizers":null}})")
          .status,
      200);
  auto deleted = w->Next();
  ASSERT_TRUE(deleted.has_value());
  EXPECT_THAT(*deleted, StartsWith(R"({"type":"DELETED")"));
  EXPECT_EQ(client_->Get(std::string(kCms) + "/a").status, 404);
}

TEST_F(LifecycleTest, PropagationPoliciesAddGcFinalizers) {
  client_->Post(kCms, R"({"metadata":{"name":"f"}})");
  client_->Post(kCms, R"({"metadata":{"name":"o"}})");
  TestResponse f = client_->Delete(std::string(kCms) + "/f",
                                   R"({"propagationPolicy":"Foreground"})");
  EXPECT_THAT(f.body, HasSubstr(R"("finalizers":["foregroundDeletion"])"));
  TestResponse o =
      client_->Delete(std::string(kCms) + "/o?propagationPolicy=Orphan");
  EXPECT_THAT(o.body, HasSubstr(R"("finalizers":["orphan"])"));
  TestResponse bad = client_->Delete(std::string(kCms) + "/o",
                                     R"({"propagationPolicy":"Sideways"})");
  EXPECT_EQ(bad.status, 422);
}

TEST_F(LifecycleTest, DeletePreconditionMismatchIsConflict) {
  client_->Post(kCms, R"({"metadata":{"name":"a"}})");
  TestResponse r = client_->Delete(std::string(kCms) + "/a",
                                   R"({"preconditions":{"uid":"not-it"}})");
  EXPECT_EQ(r.status, 409);
  EXPECT_THAT(r.Str("/message"),
              HasSubstr("Precondition failed: UID in precondition: not-it"));
}

TEST_F(LifecycleTest, DeleteCollectionHonoursSelectors) {
  client_->Post(kCms, R"({"metadata":{"name":"a","labels":{"x":"1"}}})");
  client_->Post(kCms, R"({"metadata":{"name":"b","labels":{"x":"2"}}})");
  TestResponse r = client_->Delete(std::string(kCms) + "?labelSelector=x%3D1");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Str("/kind"), "ConfigMapList");
  EXPECT_EQ(client_->Get(std::string(kCms) + "/a").status, 404);
  EXPECT_EQ(client_->Get(std::string(kCms) + "/b").status, 200);
}

TEST_F(LifecycleTest, TerminatingNamespaceRefusesNewContent) {
  client_->Post("/api/v1/namespaces", R"({"metadata":{"name":"team"}})");
  TestResponse d = client_->Delete("/api/v1/namespaces/team");
  EXPECT_EQ(d.Str("/status/phase"), "Terminating");
  TestResponse r = client_->Post("/api/v1/namespaces/team/configmaps",
                                 R"({"metadata":{"name":"a"}})");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.Str("/reason"), "Forbidden");
  EXPECT_EQ(r.Str("/message"),
            "configmaps \"a\" is forbidden: unable to create new content in "
            "namespace team because it is being terminated");
  EXPECT_EQ(r.Str("/details/causes/0/reason"), "NamespaceTerminating");
  EXPECT_EQ(r.Str("/details/causes/0/field"), "metadata.namespace");
}

TEST_F(LifecycleTest, NamespaceDeletionRemovesContentsWithController) {
  Start(true);
  client_->Post("/api/v1/namespaces", R"({"metadata":{"name":"team"}})");
  client_->Post("/api/v1/namespaces/team/configmaps",
                R"({"metadata":{"name":"a"}})");
  auto w = client_->Watch(
      "/api/v1/namespaces?watch=1&fieldSelector=metadata.name%3Dteam");
  client_->Delete("/api/v1/namespaces/team");
  bool deleted = false;
  while (auto line = w->Next()) {
    if (line->rfind(R"({"type":"DELETED")", 0) == 0) {
      deleted = true;
      break;
    }
  }
  EXPECT_TRUE(deleted);
  EXPECT_EQ(client_->Get("/api/v1/namespaces/team/configmaps/a").status, 404);
}

// The garbage collector, as kube-controller-manager runs it, seen through
// HTTP: background deletes the dependents of a gone owner, foreground keeps
// the owner until the dependents that block it are gone, orphan leaves the
// dependents without the reference.
TEST_F(LifecycleTest, GarbageCollectionByOwnerReferences) {
  Start(true);
  auto owner = [&](const std::string& name) {
    TestResponse r =
        client_->Post(kCms, R"({"metadata":{"name":")" + name + R"("}})");
    EXPECT_EQ(r.status, 201) << r.body;
    return r.Str("/metadata/uid");
  };
  auto dependent = [&](const std::string& name, const std::string& owner_name,
                       const std::string& uid, const std::string& extra) {
    TestResponse r = client_->Post(
        kCms,
        R"({"metadata":{"name":")" + name +
            R"(","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":")" +
            owner_name + R"(","uid":")" + uid + "\"" + extra + "}]}}");
    EXPECT_EQ(r.status, 201) << r.body;
  };
  auto gone = [&](const std::string& name) {
    return client_->Get(std::string(kCms) + "/" + name).status == 404;
  };

  // Background.
  dependent("bg-dep", "bg", owner("bg"), "");
  ASSERT_EQ(client_
                ->Delete(std::string(kCms) + "/bg",
                         R"({"propagationPolicy":"Background"})")
                .status,
            200);
  EXPECT_TRUE(Eventually([&] { return gone("bg-dep"); }));

  // Foreground, with a dependent that blocks its owner and holds a finalizer.
  const std::string uid = owner("fg");
  ASSERT_EQ(
      client_
          ->Post(
              kCms,
              R"({"metadata":{"name":"fg-dep","finalizers":["x.io/hold"],"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"fg","uid":")" +
                  uid + R"(","blockOwnerDeletion":true}]}})")
          .status,
      201);
  TestResponse fg = client_->Delete(std::string(kCms) + "/fg",
                                    R"({"propagationPolicy":"Foreground"})");
  EXPECT_THAT(fg.body, HasSubstr(R"("finalizers":["foregroundDeletion"])"));
  EXPECT_TRUE(Eventually([&] {
    return !client_->Get(std::string(kCms) + "/fg-dep")
                .Str("/metadata/deletionTimestamp")
                .empty();
  })) << "the collector never deleted the dependent";
  // A barrier instead of a pause: the collector's pass that removes the
  // dependent of another, background-deleted owner starts after fg-dep was
  // seen terminating, and each pass looks at every object, so by then it
  // has had its chance to (wrongly) let fg go.
  dependent("mark-dep", "mark", owner("mark"), "");
  ASSERT_EQ(client_
                ->Delete(std::string(kCms) + "/mark",
                         R"({"propagationPolicy":"Background"})")
                .status,
            200);
  EXPECT_TRUE(Eventually([&] { return gone("mark-dep"); }));
  TestResponse waiting = client_->Get(std::string(kCms) + "/fg");
  EXPECT_EQ(waiting.status, 200) << "a blocking dependent keeps its owner";
  EXPECT_FALSE(waiting.Str("/metadata/deletionTimestamp").empty());
  ASSERT_EQ(Merge(std::string(kCms) + "/fg-dep",
                  R"({"metadata":{"finalizers":null}})")
                .status,
            200);
  EXPECT_TRUE(Eventually([&] { return gone("fg-dep") && gone("fg"); }));

  // Orphan.
  dependent("or-dep", "or", owner("or"), "");
  ASSERT_EQ(client_->Delete(std::string(kCms) + "/or?propagationPolicy=Orphan")
                .status,
            200);
  EXPECT_TRUE(Eventually([&] { return gone("or"); }));
  TestResponse orphan = client_->Get(std::string(kCms) + "/or-dep");
  EXPECT_EQ(orphan.status, 200);
  EXPECT_EQ(orphan.body.find("ownerReferences"), std::string::npos)
      << orphan.body;
}

TEST_F(LifecycleTest, CrdBecomesServedWithStatus) {
  CreateCrd();
  TestResponse crd = client_->Get(std::string(kCrds) + "/widgets.example.com");
  EXPECT_THAT(
      crd.body,
      HasSubstr(
          R"("finalizers":["customresourcecleanup.apiextensions.k8s.io"])"));
  EXPECT_EQ(crd.Str("/status/acceptedNames/kind"), "Widget");
  EXPECT_EQ(crd.Str("/status/acceptedNames/listKind"), "WidgetList");
  EXPECT_EQ(crd.Str("/status/storedVersions/0"), "v1");
  EXPECT_EQ(crd.Str("/status/conditions/0/type"), "NamesAccepted");
  EXPECT_EQ(crd.Str("/status/conditions/1/type"), "Established");
  EXPECT_EQ(crd.Str("/status/conditions/1/status"), "True");
  TestResponse disco = client_->Get("/apis/example.com/v1");
  EXPECT_THAT(disco.body, HasSubstr(R"("name":"widgets/status")"));
  EXPECT_THAT(client_->Get("/apis").body, HasSubstr(R"("name":"example.com")"));
}

TEST_F(LifecycleTest, CustomResourceValidationListsEveryCause) {
  CreateCrd();
  TestResponse r = client_->Post(
      kWidgets,
      R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":20,"color":"green"}})");
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(r.Str("/reason"), "Invalid");
  EXPECT_EQ(r.Str("/details/kind"), "Widget");
  EXPECT_EQ(r.Str("/details/group"), "example.com");
  EXPECT_THAT(r.Str("/message"),
              StartsWith("Widget.example.com \"w\" is invalid: ["));
  EXPECT_THAT(r.body, HasSubstr(R"("field":"spec.size")"));
  EXPECT_THAT(r.body, HasSubstr(R"("field":"spec.color")"));
  EXPECT_THAT(r.body, HasSubstr("FieldValueNotSupported"));
  TestResponse missing = client_->Post(
      kWidgets,
      R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{}})");
  EXPECT_EQ(missing.Str("/details/causes/0/reason"), "FieldValueRequired");
}

TEST_F(LifecycleTest, CustomResourcePruningKeepsPreservedFields) {
  CreateCrd();
  TestResponse r = client_->Post(
      kWidgets,
      R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":1,"junk":1,"free":{"any":{"thing":1}}},"extra":true})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.body.find("junk"), std::string::npos);
  EXPECT_EQ(r.body.find("extra"), std::string::npos);
  EXPECT_THAT(r.body, HasSubstr(R"("free":{"any":{"thing":1}})"));
  EXPECT_EQ(r.Int("/metadata/generation"), 1);
}

TEST_F(LifecycleTest, FieldValidationOfUnknownCustomResourceFields) {
  CreateCrd();
  const std::string body =
      R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":1,"junk":1}})";
  TestResponse strict =
      client_->Post(std::string(kWidgets) + "?fieldValidation=Strict", body);
  EXPECT_EQ(strict.status, 400);
  EXPECT_EQ(strict.Str("/message"),
            "Widget in version \"v1\" cannot be handled as a Widget: strict "
            "decoding error: unknown field \"spec.junk\"");
  TestResponse warn = client_->Post(kWidgets, body);
  EXPECT_EQ(warn.status, 201);
  EXPECT_EQ(warn.Header("warning"),
            "299 - \"unknown field \\\"spec.junk\\\"\"");
  EXPECT_EQ(warn.body.find("junk"), std::string::npos);
  TestResponse patch =
      client_->Patch(std::string(kWidgets) + "/w?fieldValidation=Strict",
                     R"({"spec":{"other":2}})", "application/merge-patch+json");
  EXPECT_EQ(patch.status, 400);
  TestResponse ignore =
      client_->Patch(std::string(kWidgets) + "/w?fieldValidation=Ignore",
                     R"({"spec":{"other":2}})", "application/merge-patch+json");
  EXPECT_EQ(ignore.status, 200);
  EXPECT_EQ(ignore.Header("warning"), "");
}

TEST_F(LifecycleTest, CustomResourceRulesForPutStatusAndPatchTypes) {
  CreateCrd();
  client_->Post(
      kWidgets,
      R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":1},"status":{"ready":true}})");
  TestResponse got = client_->Get(std::string(kWidgets) + "/w");
  EXPECT_EQ(got.body.find("\"status\""),
            std::string::npos);  // dropped on create
  TestResponse put = client_->Put(
      std::string(kWidgets) + "/w",
      R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":2}})");
  EXPECT_EQ(put.status, 422);
  EXPECT_EQ(put.Str("/message"),
            "Widget.example.com \"w\" is invalid: metadata.resourceVersion: "
            "Invalid value: 0x0: must be specified for an update");
  TestResponse smp =
      client_->Patch(std::string(kWidgets) + "/w", R"({"spec":{"size":3}})",
                     "application/strategic-merge-patch+json");
  EXPECT_EQ(smp.status, 415);
  TestResponse spec =
      Merge(std::string(kWidgets) + "/w", R"({"spec":{"size":3}})");
  EXPECT_EQ(spec.Int("/metadata/generation"), 2);
  TestResponse status = Merge(std::string(kWidgets) + "/w/status",
                              R"({"spec":{"size":9},"status":{"ready":true}})");
  EXPECT_EQ(status.Int("/spec/size"), 3);
  EXPECT_EQ(status.Int("/metadata/generation"), 2);
  EXPECT_THAT(status.body, HasSubstr(R"("status":{"ready":true})"));
}

TEST_F(LifecycleTest, CrdPutWithoutResourceVersionIsInvalid) {
  CreateCrd();
  TestResponse r =
      client_->Put(std::string(kCrds) + "/widgets.example.com", kCrd);
  EXPECT_EQ(r.status, 422);
  EXPECT_THAT(r.Str("/message"), HasSubstr("must be specified for an update"));
}

TEST_F(LifecycleTest, DeletingTheCrdDeletesItsObjectsAndDiscovery) {
  CreateCrd();
  client_->Post(
      kWidgets,
      R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":1}})");
  auto w = client_->Watch(std::string(kWidgets) + "?watch=1");
  ASSERT_TRUE(w->Next().has_value());  // ADDED w
  client_->Delete(std::string(kCrds) + "/widgets.example.com");
  auto deleted = w->Next();
  ASSERT_TRUE(deleted.has_value());
  EXPECT_THAT(*deleted, StartsWith(R"({"type":"DELETED")"));
  EXPECT_EQ(client_->Get(std::string(kCrds) + "/widgets.example.com").status,
            404);
  EXPECT_EQ(client_->Get("/apis/example.com/v1").status, 404);
  EXPECT_EQ(client_->Get(kWidgets).status, 404);
}

TEST_F(LifecycleTest, InvalidCrdIsRejected) {
  TestResponse r = client_->Post(
      kCrds,
      R"({"metadata":{"name":"wrong.example.com"},"spec":{"group":"example.com","scope":"Namespaced","names":{"kind":"Thing","plural":"things"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}})");
  EXPECT_EQ(r.status, 422);
  EXPECT_THAT(r.Str("/message"),
              HasSubstr("must be spec.names.plural+\".\"+spec.group"));
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
