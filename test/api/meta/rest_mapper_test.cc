#include "api/meta/rest_mapper.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

rapidjson::Document Parse(const char* json) {
  rapidjson::Document d;
  d.Parse(json);
  EXPECT_FALSE(d.HasParseError()) << json;
  return d;
}

TEST(RESTMapperTest, DefaultsKnowBuiltinKinds) {
  auto m = RESTMapper::NewDefault();
  struct Case {
    GroupVersionKind gvk;
    std::string resource;
    bool namespaced;
  };
  std::vector<Case> cases = {
      {{"", "v1", "Pod"}, "pods", true},
      {{"", "v1", "ConfigMap"}, "configmaps", true},
      {{"", "v1", "Secret"}, "secrets", true},
      {{"", "v1", "Namespace"}, "namespaces", false},
      {{"", "v1", "Service"}, "services", true},
      {{"", "v1", "ServiceAccount"}, "serviceaccounts", true},
      {{"", "v1", "Event"}, "events", true},
      {{"apps", "v1", "Deployment"}, "deployments", true},
      {{"coordination.k8s.io", "v1", "Lease"}, "leases", true},
      {{"apiextensions.k8s.io", "v1", "CustomResourceDefinition"},
       "customresourcedefinitions",
       false},
  };
  for (const Case& c : cases) {
    auto mapping = m->MappingFor(c.gvk);
    ASSERT_TRUE(mapping.ok()) << c.gvk.ToString();
    EXPECT_EQ(mapping->resource,
              GroupVersionResource(c.gvk.GetGroupVersion(), c.resource));
    EXPECT_EQ(mapping->namespaced(), c.namespaced) << c.resource;
    auto kind = m->KindFor(mapping->resource);
    ASSERT_TRUE(kind.ok());
    EXPECT_EQ(*kind, c.gvk);
  }
  EXPECT_EQ(m->Mappings().size(), cases.size());
}

TEST(RESTMapperTest, SubresourcesAndNames) {
  auto m = RESTMapper::NewDefault();
  auto d = m->MappingFor({"apps", "v1", "Deployment"});
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->HasSubresource("status"));
  EXPECT_TRUE(d->HasSubresource("scale"));
  EXPECT_FALSE(d->HasSubresource("log"));
  EXPECT_EQ(d->singular, "deployment");
  EXPECT_EQ(d->list_kind, "DeploymentList");
  EXPECT_THAT(d->short_names, ElementsAre("deploy"));
  auto p = m->MappingFor({"", "v1", "Pod"});
  EXPECT_TRUE(p->HasSubresource("log"));
  EXPECT_TRUE(p->HasSubresource("status"));
}

TEST(RESTMapperTest, UnknownKindIsNotFound) {
  auto m = RESTMapper::NewDefault();
  auto r = m->ResourceFor({"example.org", "v1", "Nginx"});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(),
            "no matches for kind \"Nginx\" in version \"example.org/v1\"");
  auto k = m->KindFor({"apps", "v1", "foos"});
  EXPECT_EQ(k.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(k.status().message(), "no matches for apps/v1, Resource=foos");
}

constexpr char kLoadTestCRD[] = R"({
  "apiVersion": "apiextensions.k8s.io/v1",
  "kind": "CustomResourceDefinition",
  "metadata": {"name": "loadtests.example.org"},
  "spec": {
    "group": "example.org",
    "names": {"plural": "loadtests", "singular": "loadtest",
              "kind": "LoadTest", "shortNames": ["lt", "ld"],
              "listKind": "LoadTestList"},
    "scope": "Namespaced",
    "versions": [
      {"name": "v1", "served": true, "storage": true,
       "subresources": {"status": {}}},
      {"name": "v1beta1", "served": true, "storage": false},
      {"name": "v0", "served": false, "storage": false}
    ]
  }
})";

TEST(RESTMapperTest, AddFromCRD) {
  auto m = RESTMapper::NewDefault();
  ASSERT_TRUE(m->AddFromCRD(Parse(kLoadTestCRD)).ok());
  auto v1 = m->MappingFor({"example.org", "v1", "LoadTest"});
  ASSERT_TRUE(v1.ok());
  EXPECT_EQ(v1->resource,
            GroupVersionResource("example.org", "v1", "loadtests"));
  EXPECT_EQ(v1->singular, "loadtest");
  EXPECT_THAT(v1->short_names, ElementsAre("lt", "ld"));
  EXPECT_TRUE(v1->namespaced());
  EXPECT_THAT(v1->subresources, ElementsAre("status"));
  auto beta = m->MappingFor({"example.org", "v1beta1", "LoadTest"});
  ASSERT_TRUE(beta.ok());
  EXPECT_TRUE(beta->subresources.empty());
  // Unserved versions are not mapped.
  EXPECT_FALSE(m->MappingFor({"example.org", "v0", "LoadTest"}).ok());
}

TEST(RESTMapperTest, AddFromCRDDefaultsSingularAndListKind) {
  auto m = RESTMapper::NewDefault();
  ASSERT_TRUE(m->AddFromCRD(Parse(R"({"spec": {"group": "flant.com",
      "names": {"plural": "copyrators", "kind": "CopyratorRule"},
      "scope": "Cluster", "versions": [{"name": "v1", "served": true,
      "subresources": {"status": {}, "scale": {}}}]}})"))
                  .ok());
  auto r = m->MappingFor({"flant.com", "v1", "CopyratorRule"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->singular, "copyratorrule");
  EXPECT_EQ(r->list_kind, "CopyratorRuleList");
  EXPECT_FALSE(r->namespaced());
  EXPECT_THAT(r->subresources, ElementsAre("scale", "status"));
}

TEST(RESTMapperTest, AddFromCRDRejectsMalformedInput) {
  auto m = RESTMapper::NewDefault();
  struct Case {
    const char* json;
    const char* message;
  };
  std::vector<Case> cases = {
      {"[]", "must be a JSON object"},
      {R"({"kind": "Pod", "spec": {}})", "kind: expected"},
      {R"({})", "spec: Required value"},
      {R"({"spec": 3})", "spec: must be an object"},
      {R"({"spec": {"names": {"plural": "a", "kind": "A"}, "scope":
          "Namespaced", "versions": [{"name": "v1"}]}})",
       "spec.group: Required value"},
      {R"({"spec": {"group": "g", "names": {"kind": "A"}, "scope":
          "Namespaced", "versions": [{"name": "v1"}]}})",
       "spec.names.plural: Required value"},
      {R"({"spec": {"group": "g", "names": {"plural": "a", "kind": 7},
          "scope": "Namespaced", "versions": [{"name": "v1"}]}})",
       "spec.names.kind: must be a string"},
      {R"({"spec": {"group": "g", "names": {"plural": "a", "kind": "A",
          "shortNames": [1]}, "scope": "Namespaced",
          "versions": [{"name": "v1"}]}})",
       "spec.names.shortNames: must be a list of strings"},
      {R"({"spec": {"group": "g", "names": {"plural": "a", "kind": "A"},
          "scope": "Global", "versions": [{"name": "v1"}]}})",
       "spec.scope: Unsupported value: \"Global\""},
      {R"({"spec": {"group": "g", "names": {"plural": "a", "kind": "A"},
          "scope": "Namespaced", "versions": []}})",
       "spec.versions: must be a non-empty list"},
      {R"({"spec": {"group": "g", "names": {"plural": "a", "kind": "A"},
          "scope": "Namespaced", "versions": [{"name": "v1"}, {}]}})",
       "spec.versions[1].name: Required value"},
      {R"({"spec": {"group": "g", "names": {"plural": "a", "kind": "A"},
          "scope": "Namespaced", "versions": [{"name": "v1",
          "served": "yes"}]}})",
       "spec.versions[0].served: must be a boolean"},
  };
  size_t before = m->Mappings().size();
  for (const Case& c : cases) {
    absl::Status s = m->AddFromCRD(Parse(c.json));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.json;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message)) << c.json;
  }
  EXPECT_EQ(m->Mappings().size(), before);
}

TEST(RESTMapperTest, UpdatedCRDReplacesMapping) {
  auto m = RESTMapper::NewDefault();
  ASSERT_TRUE(m->AddFromCRD(Parse(kLoadTestCRD)).ok());
  ASSERT_TRUE(m->AddFromCRD(Parse(R"({"spec": {"group": "example.org",
      "names": {"plural": "loadtests", "kind": "LoadTest"},
      "scope": "Cluster", "versions": [{"name": "v1", "served": true}]}})"))
                  .ok());
  auto r = m->MappingFor({"example.org", "v1", "LoadTest"});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->namespaced());
  EXPECT_TRUE(r->short_names.empty());
}

constexpr char kAppsDiscovery[] = R"({
  "kind": "APIResourceList",
  "apiVersion": "v1",
  "groupVersion": "apps/v1",
  "resources": [
    {"name": "statefulsets/status", "singularName": "", "namespaced": true,
     "kind": "StatefulSet", "verbs": ["get", "patch", "update"]},
    {"name": "statefulsets", "singularName": "statefulset", "namespaced": true,
     "kind": "StatefulSet", "verbs": ["get", "list"], "shortNames": ["sts"]},
    {"name": "statefulsets/scale", "singularName": "", "namespaced": true,
     "group": "autoscaling", "version": "v1", "kind": "Scale"},
    {"name": "daemonsets", "singularName": "daemonset", "namespaced": true,
     "kind": "DaemonSet", "shortNames": ["ds"]}
  ]
})";

TEST(RESTMapperTest, AddFromDiscovery) {
  auto m = RESTMapper::NewDefault();
  ASSERT_TRUE(m->AddFromDiscovery(Parse(kAppsDiscovery)).ok());
  auto sts = m->MappingForResource({"apps", "v1", "statefulsets"});
  ASSERT_TRUE(sts.ok());
  EXPECT_EQ(sts->kind, GroupVersionKind("apps", "v1", "StatefulSet"));
  EXPECT_THAT(sts->subresources, ElementsAre("scale", "status"));
  EXPECT_THAT(sts->short_names, ElementsAre("sts"));
  EXPECT_TRUE(sts->namespaced());
  auto ds = m->Resolve("ds");
  ASSERT_TRUE(ds.ok());
  EXPECT_EQ(ds->kind.kind, "DaemonSet");
  EXPECT_TRUE(ds->subresources.empty());
}

TEST(RESTMapperTest, AddFromCoreDiscovery) {
  RESTMapper m;
  ASSERT_TRUE(m.AddFromDiscovery(Parse(R"({"groupVersion": "v1",
      "resources": [{"name": "nodes", "singularName": "node",
      "namespaced": false, "kind": "Node", "shortNames": ["no"]}]})"))
                  .ok());
  auto n = m.Resolve("no");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->resource, GroupVersionResource("", "v1", "nodes"));
  EXPECT_FALSE(n->namespaced());
}

TEST(RESTMapperTest, AddFromDiscoveryRejectsMalformedInput) {
  RESTMapper m;
  EXPECT_THAT(std::string(m.AddFromDiscovery(Parse("{}")).message()),
              HasSubstr("groupVersion: Required value"));
  EXPECT_THAT(
      std::string(
          m.AddFromDiscovery(Parse(R"({"groupVersion": "a/b/c"})")).message()),
      HasSubstr("groupVersion: unexpected"));
  EXPECT_THAT(
      std::string(m.AddFromDiscovery(
                       Parse(R"({"groupVersion": "v1", "resources": {}})"))
                      .message()),
      HasSubstr("resources: must be a list"));
  EXPECT_THAT(std::string(m.AddFromDiscovery(Parse(R"({"groupVersion": "v1",
          "resources": [{"name": "pods", "kind": "Pod"}, {"kind": "X"}]})"))
                              .message()),
              HasSubstr("resources[1].name: Required value"));
  EXPECT_THAT(std::string(m.AddFromDiscovery(Parse(R"({"groupVersion": "v1",
          "resources": [{"name": "pods", "kind": "Pod", "namespaced": 1}]})"))
                              .message()),
              HasSubstr("resources[0].namespaced: must be a boolean"));
  EXPECT_TRUE(m.Mappings().empty());
}

TEST(RESTMapperTest, ResolveLikeKubectl) {
  auto m = RESTMapper::NewDefault();
  ASSERT_TRUE(m->AddFromCRD(Parse(kLoadTestCRD)).ok());
  struct Case {
    const char* input;
    GroupVersionResource want;
  };
  std::vector<Case> cases = {
      {"pods", {"", "v1", "pods"}},
      {"pod", {"", "v1", "pods"}},
      {"po", {"", "v1", "pods"}},
      {"Pod", {"", "v1", "pods"}},
      {"PODS", {"", "v1", "pods"}},
      {"deploy", {"apps", "v1", "deployments"}},
      {"Deployment", {"apps", "v1", "deployments"}},
      {"deployments.apps", {"apps", "v1", "deployments"}},
      {"deployments.v1.apps", {"apps", "v1", "deployments"}},
      {"crd", {"apiextensions.k8s.io", "v1", "customresourcedefinitions"}},
      {"crds", {"apiextensions.k8s.io", "v1", "customresourcedefinitions"}},
      {"leases.coordination.k8s.io", {"coordination.k8s.io", "v1", "leases"}},
      // Preferred version of a CRD served at v1 and v1beta1.
      {"lt", {"example.org", "v1", "loadtests"}},
      {"ld", {"example.org", "v1", "loadtests"}},
      {"loadtest", {"example.org", "v1", "loadtests"}},
      {"LoadTest", {"example.org", "v1", "loadtests"}},
      {"loadtests.example.org", {"example.org", "v1", "loadtests"}},
      {"loadtests.v1beta1.example.org",
       {"example.org", "v1beta1", "loadtests"}},
      {"lt.example.org", {"example.org", "v1", "loadtests"}},
  };
  for (const Case& c : cases) {
    auto r = m->Resolve(c.input);
    ASSERT_TRUE(r.ok()) << c.input << ": " << r.status();
    EXPECT_EQ(r->resource, c.want) << c.input;
  }
}

TEST(RESTMapperTest, ResolveErrors) {
  auto m = RESTMapper::NewDefault();
  auto r = m->Resolve("deploys");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(),
            "the server doesn't have a resource type \"deploys\"");
  EXPECT_EQ(m->Resolve("").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(m->Resolve("pods.apps").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(m->Resolve("...").status().code(), absl::StatusCode::kNotFound);
}

TEST(RESTMapperTest, ResolvePrefersCoreThenReportsAmbiguity) {
  auto m = RESTMapper::NewDefault();
  RESTMapping ev;
  ev.resource = {"events.k8s.io", "v1", "events"};
  ev.kind = {"events.k8s.io", "v1", "Event"};
  ASSERT_TRUE(m->Add(ev).ok());
  auto r = m->Resolve("events");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->resource.group, "");
  EXPECT_EQ(m->Resolve("events.events.k8s.io")->resource.group,
            "events.k8s.io");

  RESTMapping a, b;
  a.resource = {"a.io", "v1", "widgets"};
  a.kind = {"a.io", "v1", "Widget"};
  b.resource = {"b.io", "v1", "widgets"};
  b.kind = {"b.io", "v1", "Widget"};
  ASSERT_TRUE(m->Add(a).ok());
  ASSERT_TRUE(m->Add(b).ok());
  auto amb = m->Resolve("widget");
  EXPECT_EQ(amb.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(amb.status().message()), HasSubstr("ambiguous"));
  EXPECT_EQ(m->Resolve("widgets.b.io")->resource.group, "b.io");
}

TEST(RESTMapperTest, PluralBeatsShortNameOfAnotherResource) {
  RESTMapper m;
  RESTMapping x, y;
  x.resource = {"x.io", "v1", "ab"};
  x.kind = {"x.io", "v1", "Ab"};
  y.resource = {"y.io", "v1", "things"};
  y.kind = {"y.io", "v1", "Thing"};
  y.short_names = {"ab"};
  ASSERT_TRUE(m.Add(x).ok());
  ASSERT_TRUE(m.Add(y).ok());
  EXPECT_EQ(m.Resolve("ab")->resource.group, "x.io");
}

TEST(RESTMapperTest, AddRejectsEmptyNames) {
  RESTMapper m;
  RESTMapping bad;
  EXPECT_EQ(m.Add(bad).code(), absl::StatusCode::kInvalidArgument);
}

TEST(RESTMapperTest, ConcurrentReadersAndWriters) {
  auto m = RESTMapper::NewDefault();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&m, t] {
      for (int i = 0; i < 200; ++i) {
        if (t % 2 == 0) {
          RESTMapping r;
          r.resource = {"g.io", "v1", absl::StrCat("r", t, "x", i)};
          r.kind = {"g.io", "v1", absl::StrCat("K", t, "x", i)};
          EXPECT_TRUE(m->Add(r).ok());
        } else {
          EXPECT_TRUE(m->Resolve("pods").ok());
          EXPECT_TRUE(m->ResourceFor({"apps", "v1", "Deployment"}).ok());
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(m->Mappings().size(), 10u + 400u);
}

}  // namespace
}  // namespace api
}  // namespace kcr
