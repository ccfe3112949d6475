// The REST client against the local API server (test/apiserver) over real
// HTTP and HTTPS: every verb, conflicts, dry runs, watches, bearer tokens,
// TLS trust, and the server's injected 429s and 500s.
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/base/mutex.h"
#include "runtime/client/api_errors.h"
#include "runtime/client/list_pager.h"
#include "runtime/client/rest_client.h"
#include "runtime/client/typed_client.h"
#include "test/apiserver/api_server.h"
#include "test/apiserver/tls.h"
#include "test/runtime/client/test_util.h"

namespace kcr::client {
namespace {

using ::kcr::client::testing::MakeTempDir;
using ::kcr::client::testing::TestdataPath;
using ::testing::HasSubstr;

const api::GroupVersionResource kConfigMaps{"", "v1", "configmaps"};
const api::GroupVersionResource kDeployments{"apps", "v1", "deployments"};
const api::GroupVersionResource kNamespaces{"", "v1", "namespaces"};

api::ObjectPtr Obj(const std::string& json) {
  auto o = api::Object::Parse(json);
  EXPECT_TRUE(o.ok()) << o.status();
  return *o;
}

api::ObjectPtr ConfigMap(const std::string& name, const std::string& labels = "{}") {
  return Obj(R"({"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":")" + name +
             R"(","namespace":"default","labels":)" + labels + R"(},"data":{"a":"1"}})");
}

class ApiServerClientTest : public ::testing::Test {
 protected:
  void StartServer(apiserver::ApiServerOptions options = {}) {
    options.controllers.node_simulator = false;
    auto server = apiserver::ApiServer::Start(std::move(options));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }
  std::unique_ptr<RestClient> Client(Config config = {}) {
    if (config.host.empty()) config.host = server_->url();
    config.qps = 1000;
    config.burst = 1000;
    ClientOptions options;
    options.sleep = [this](absl::Duration d) {
      MutexLock lock(&mu_);
      sleeps_.push_back(d);
      // The fault has been seen: let the retry through.
      server_->faults()->set_options({});
    };
    auto client = NewRestClient(config, options);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }
  std::vector<absl::Duration> sleeps() {
    MutexLock lock(&mu_);
    return sleeps_;
  }

  std::unique_ptr<apiserver::ApiServer> server_;
  Mutex mu_;
  std::vector<absl::Duration> sleeps_ ABSL_GUARDED_BY(mu_);
};

TEST_F(ApiServerClientTest, EveryVerb) {
  StartServer();
  auto client = Client();
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");

  // Create, Get, dry run.
  auto created = client->Create(Resource::Namespaced(kConfigMaps), *ConfigMap("a", R"({"app":"web"})"));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_FALSE((*created)->uid().empty());
  EXPECT_FALSE((*created)->resource_version().empty());
  EXPECT_TRUE(client::IsAlreadyExists(client->Create(cms, *ConfigMap("a")).status()));
  ASSERT_TRUE(client->Create(cms, *ConfigMap("dry"), {.dry_run = true}).ok());
  EXPECT_TRUE(client::IsNotFound(client->Get(cms, "dry").status()));
  ASSERT_TRUE(client->Create(cms, *ConfigMap("b", R"({"app":"db"})")).ok());
  ASSERT_TRUE(client->Create(cms, *ConfigMap("c", R"({"app":"web"})")).ok());
  auto got = client->Get(cms, "a");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)->uid(), (*created)->uid());

  // List with a selector; a pager over pages of one.
  ListOptions web;
  web.label_selector = "app=web";
  auto list = client->List(cms, web);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[0]->kind(), "ConfigMap");
  EXPECT_FALSE(list->resource_version.empty());
  ListPager pager(client.get(), 1);
  auto all = pager.List(cms);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->items.size(), 3u);
  EXPECT_EQ(pager.pages(), 3);

  // Update, and a stale update: Conflict.
  auto builder = (*got)->ToBuilder();
  ASSERT_TRUE(builder.SetString("/data/a", "2").ok());
  auto edited = builder.Build();
  ASSERT_TRUE(edited.ok());
  auto updated = client->Update(cms, **edited);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_NE((*updated)->resource_version(), (*got)->resource_version());
  auto stale = client->Update(cms, **edited);
  EXPECT_TRUE(IsConflict(stale.status())) << stale.status();

  // Patches of every type.
  auto merged = client->Patch(cms, "a", PatchType::kMerge, R"({"data":{"m":"1"}})");
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_NE((*merged)->Find("/data/m"), nullptr);
  auto json = client->Patch(cms, "a", PatchType::kJson, R"([{"op":"add","path":"/data/j","value":"1"}])");
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_NE((*json)->Find("/data/j"), nullptr);
  auto strategic = client->Patch(cms, "a", PatchType::kStrategicMerge, R"({"data":{"s":"1"}})");
  ASSERT_TRUE(strategic.ok()) << strategic.status();
  auto applied = client->Patch(cms, "applied", PatchType::kApply,
                               "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n"
                               "data:\n  k: one\n",
                               {.field_manager = "first"});
  ASSERT_TRUE(applied.ok()) << applied.status();
  auto conflict = client->Patch(cms, "applied", PatchType::kApply,
                                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n"
                                "data:\n  k: two\n",
                                {.field_manager = "second"});
  EXPECT_TRUE(IsConflict(conflict.status())) << conflict.status();
  auto forced = client->Patch(cms, "applied", PatchType::kApply,
                              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n"
                              "data:\n  k: two\n",
                              {.field_manager = "second", .force = true});
  ASSERT_TRUE(forced.ok()) << forced.status();

  // Delete with a precondition that does not hold, then for real.
  DeleteOptions wrong_uid;
  wrong_uid.preconditions.uid = "not-the-uid";
  EXPECT_TRUE(IsConflict(client->Delete(cms, "a", wrong_uid)));
  DeleteOptions right;
  right.preconditions.uid = std::string((*created)->uid());
  right.propagation_policy = "Background";
  EXPECT_TRUE(client->Delete(cms, "a", right).ok());
  EXPECT_TRUE(client::IsNotFound(client->Get(cms, "a").status()));
  EXPECT_TRUE(client::IsNotFound(client->Delete(cms, "a")));

  // DeleteCollection by label.
  ListOptions db;
  db.label_selector = "app=db";
  ASSERT_TRUE(client->DeleteCollection(cms, {}, db).ok());
  EXPECT_TRUE(client::IsNotFound(client->Get(cms, "b").status()));
  EXPECT_TRUE(client->Get(cms, "c").ok());
}

TEST_F(ApiServerClientTest, ClusterScopedAndStatus) {
  StartServer();
  auto client = Client();
  const Resource namespaces = Resource::ClusterScoped(kNamespaces);
  ASSERT_TRUE(client->Create(namespaces, *Obj(R"({"kind":"Namespace","apiVersion":"v1","metadata":{"name":"team"}})")).ok());
  auto ns = client->Get(namespaces, "team");
  ASSERT_TRUE(ns.ok()) << ns.status();
  auto list = client->List(namespaces);
  ASSERT_TRUE(list.ok());
  EXPECT_GE(list->items.size(), 2u);

  const Resource deployments = Resource::Namespaced(kDeployments, "team");
  auto d = client->Create(deployments, *Obj(R"({"kind":"Deployment","apiVersion":"apps/v1",
      "metadata":{"name":"web","namespace":"team"},
      "spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},
        "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx:1.7.9"}]}}}})"));
  ASSERT_TRUE(d.ok()) << d.status();
  auto b = (*d)->ToBuilder();
  ASSERT_TRUE(b.SetInt("/status/replicas", 2).ok());
  ASSERT_TRUE(b.SetInt("/spec/replicas", 5).ok());
  auto with_status = b.Build();
  ASSERT_TRUE(with_status.ok());
  auto updated = client->UpdateStatus(deployments, **with_status);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ((*updated)->Find("/status/replicas")->GetInt(), 2);
  EXPECT_EQ((*updated)->Find("/spec/replicas")->GetInt(), 2);  // status only
}

TEST_F(ApiServerClientTest, Watch) {
  StartServer();
  auto client = Client();
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  auto first = client->Create(cms, *ConfigMap("w"));
  ASSERT_TRUE(first.ok());
  ListOptions o;
  o.resource_version = std::string((*first)->resource_version());
  auto watch = client->Watch(cms, o);
  ASSERT_TRUE(watch.ok()) << watch.status();
  ASSERT_TRUE(client->Patch(cms, "w", PatchType::kMerge, R"({"data":{"x":"y"}})").ok());
  ASSERT_TRUE(client->Create(cms, *ConfigMap("w2")).ok());
  ASSERT_TRUE(client->Delete(cms, "w").ok());
  std::vector<std::string> got;
  WatchEvent e;
  while (got.size() < 3 && (*watch)->Next(&e)) {
    got.push_back(std::string(EventTypeName(e.type)) + " " + std::string(e.object->name()));
  }
  EXPECT_THAT(got, ::testing::ElementsAre("MODIFIED w", "ADDED w2", "DELETED w"));
  (*watch)->Stop();
  EXPECT_FALSE((*watch)->Next(&e));
  EXPECT_EQ((*watch)->status().code(), absl::StatusCode::kCancelled);
}

TEST_F(ApiServerClientTest, WatchFromTooOldVersionIsExpired) {
  apiserver::ApiServerOptions options;
  options.history_size = 2;
  StartServer(options);
  auto client = Client();
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  auto first = client->Create(cms, *ConfigMap("v0"));
  ASSERT_TRUE(first.ok());
  for (int i = 1; i < 6; ++i) ASSERT_TRUE(client->Create(cms, *ConfigMap("v" + std::to_string(i))).ok());
  ListOptions o;
  o.resource_version = std::string((*first)->resource_version());
  auto watch = client->Watch(cms, o);
  absl::Status status;
  if (!watch.ok()) {
    status = watch.status();
  } else {
    WatchEvent e;
    ASSERT_TRUE((*watch)->Next(&e));
    ASSERT_EQ(e.type, EventType::kError);
    status = e.error;
  }
  EXPECT_TRUE(IsResourceExpired(status)) << status;
}

TEST_F(ApiServerClientTest, BearerToken) {
  apiserver::ApiServerOptions options;
  options.token = "s3cret";
  StartServer(options);
  Config good;
  good.bearer_token = "s3cret";
  EXPECT_TRUE(Client(good)->List(Resource::Namespaced(kConfigMaps, "default")).ok());
  Config bad;
  bad.bearer_token = "nope";
  auto list = Client(bad)->List(Resource::Namespaced(kConfigMaps, "default"));
  EXPECT_TRUE(IsUnauthorized(list.status())) << list.status();
}

TEST_F(ApiServerClientTest, InjectedThrottleAndErrorsAreRetried) {
  StartServer();
  auto client = Client();
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  apiserver::FaultOptions faults;
  faults.throttle_fraction = 1;
  faults.retry_after_seconds = 3;
  server_->faults()->set_options(faults);
  // A create is retried after a 429: the server did not act on it.
  ASSERT_TRUE(client->Create(cms, *ConfigMap("t")).ok());
  EXPECT_THAT(sleeps(), ::testing::ElementsAre(absl::Seconds(3)));
  EXPECT_EQ(server_->faults()->throttles_injected(), 1);

  faults = {};
  faults.error_fraction = 1;
  server_->faults()->set_options(faults);
  ASSERT_TRUE(client->Get(cms, "t").ok());
  EXPECT_EQ(server_->faults()->errors_injected(), 1);
  EXPECT_EQ(sleeps().size(), 2u);

  server_->faults()->set_options(faults);
  auto created = client->Create(cms, *ConfigMap("u"));
  EXPECT_TRUE(IsInternalError(created.status())) << created.status();
}

TEST_F(ApiServerClientTest, TypedClients) {
  StartServer();
  auto client = Client();
  TypedClient<api::ConfigMapView> cms(client.get(), "default");
  EXPECT_EQ(cms.resource().gvr.resource, "configmaps");
  auto created = cms.Create(*ConfigMap("typed"));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->object().name(), "typed");
  auto got = cms.Get("typed");
  ASSERT_TRUE(got.ok()) << got.status();
  std::string rv;
  auto list = cms.List({}, &rv);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->size(), 1u);
  EXPECT_FALSE(rv.empty());
  auto patched = cms.Patch("typed", PatchType::kMerge, R"({"data":{"b":"2"}})");
  ASSERT_TRUE(patched.ok()) << patched.status();
  EXPECT_TRUE(cms.Delete("typed").ok());

  TypedClient<api::NamespaceView> namespaces(client.get(), "ignored");
  EXPECT_FALSE(namespaces.resource().namespaced);
  auto all = namespaces.List();
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_GE(all->size(), 1u);
  EXPECT_EQ(ResourceFor<api::crd::Nginx>("x").gvr.group, "example.org");
  EXPECT_EQ(ResourceFor<api::LeaseView>("x").gvr.group, "coordination.k8s.io");
}

TEST_F(ApiServerClientTest, Https) {
  const std::string dir = MakeTempDir("tls");
  auto material = apiserver::GenerateTlsMaterial();
  ASSERT_TRUE(material.ok()) << material.status();
  auto files = apiserver::WriteTlsFiles(*material, dir);
  ASSERT_TRUE(files.ok()) << files.status();
  apiserver::ApiServerOptions options;
  options.tls_cert_file = files->server_cert;
  options.tls_key_file = files->server_key;
  options.tls_ca_file = files->ca_cert;
  StartServer(options);
  ASSERT_THAT(server_->url(), ::testing::StartsWith("https://"));
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");

  Config right;
  right.tls.ca_file = files->ca_cert;
  EXPECT_TRUE(Client(right)->List(cms).ok());

  Config wrong;
  wrong.tls.ca_file = TestdataPath("other-ca.pem");
  auto list = Client(wrong)->List(cms);
  EXPECT_EQ(list.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(list.status().message()), HasSubstr("TLS handshake"));

  Config insecure;
  insecure.tls.insecure = true;
  EXPECT_TRUE(Client(insecure)->List(cms).ok());

  // The server's own kubeconfig works as written.
  const std::string kubeconfig = dir + "/kubeconfig";
  ASSERT_TRUE(server_->WriteKubeconfig(kubeconfig).ok());
  LoadingRules rules;
  rules.explicit_path = kubeconfig;
  auto config = LoadFromKubeconfig(rules);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(Client(*config)->List(cms).ok());
  EXPECT_TRUE(Client(*config)->GetRaw("/version").ok());
}

}  // namespace
}  // namespace kcr::client
