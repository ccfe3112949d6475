// The REST client against the local API server (apiserver/), each test
// over real HTTP and again over HTTPS: every verb and its options,
// conflicts, dry runs, watches, bearer tokens, a token file rotated on
// disk, an exec plugin, metrics, TLS trust, and the server's injected 429s
// and 500s.
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/errors/errors.h"
#include "api/object_builder.h"
#include "api/types/config_map.h"
#include "api/types/lease.h"
#include "api/types/namespace.h"
#include "apiserver/api_server.h"
#include "base/context.h"
#include "base/mutex.h"
#include "base/tls_certs.h"
#include "controllers/nginx/nginx_types.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"
#include "runtime/client/list_pager.h"
#include "runtime/client/rest_client.h"
#include "runtime/client/typed_client.h"
#include "runtime/metrics/rest_client_metrics.h"
#include "test/fakes/fake_clock.h"
#include "test/runtime/client/test_util.h"

namespace kcr::client {
namespace {

// The context of the calls that are not about cancellation.
const Context kBg = Context::Background();

using ::kcr::client::testing::MakeTempDir;
using ::kcr::client::testing::ReadFileOrDie;
using ::kcr::client::testing::TestdataPath;
using ::kcr::client::testing::WriteFile;
using ::testing::HasSubstr;

const api::GroupVersionResource kConfigMaps{"", "v1", "configmaps"};
const api::GroupVersionResource kDeployments{"apps", "v1", "deployments"};
const api::GroupVersionResource kNamespaces{"", "v1", "namespaces"};

api::ObjectPtr Obj(const std::string& json) {
  auto o = api::Object::Parse(json);
  EXPECT_TRUE(o.ok()) << o.status();
  return *o;
}

api::ObjectPtr ConfigMap(const std::string& name,
                         const std::string& labels = "{}") {
  return Obj(R"({"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":")" +
             name + R"(","namespace":"default","labels":)" + labels +
             R"(},"data":{"a":"1"}})");
}

api::ObjectPtr Namespace(const std::string& name) {
  return Obj(R"({"kind":"Namespace","apiVersion":"v1","metadata":{"name":")" +
             name + R"("}})");
}

// Every test runs twice: over plain HTTP, and over HTTPS with a CA made
// for the run (the client trusts only that CA).
class ApiServerClientTest : public ::testing::TestWithParam<bool> {
 protected:
  bool https() const { return GetParam(); }

  // Nothing in the server changes objects by itself: the client's writes
  // (Deployment status among them) are the only ones.
  void StartServer(apiserver::ApiServerOptions options = {}) {
    options.controllers.node_simulator = false;
    options.controllers.deployment_controller = false;
    options.controllers.replicaset_controller = false;
    // The tests count and watch the ConfigMaps they write in default; the
    // namespace's own kube-root-ca.crt would be one more.
    options.controllers.root_ca_cert_publisher = false;
    if (https() && options.tls_cert_file.empty()) {
      const std::string dir = MakeTempDir("tls");
      auto material = GenerateTlsMaterial();
      ASSERT_TRUE(material.ok()) << material.status();
      auto files = WriteTlsFiles(*material, dir);
      ASSERT_TRUE(files.ok()) << files.status();
      options.tls_cert_file = files->server_cert;
      options.tls_key_file = files->server_key;
      options.tls_ca_file = files->ca_cert;
    }
    auto server = apiserver::ApiServer::Start(std::move(options));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    ASSERT_THAT(server_->url(),
                ::testing::StartsWith(https() ? "https://" : "http://"));
  }
  // A client for the server; over HTTPS it trusts the server's CA unless
  // `config` says otherwise.
  // Unless `record_sleeps` is false, the client does not wait before its
  // retries: it records the wait and clears the server's faults.
  std::unique_ptr<RestClient> Client(Config config = {},
                                     ClientOptions options = {},
                                     bool record_sleeps = true) {
    if (config.host.empty()) config.host = server_->url();
    if (https() && config.tls.ca_file.empty() && config.tls.ca_data.empty() &&
        !config.tls.insecure) {
      config.tls.ca_file = server_->options().tls_ca_file;
    }
    if (config.qps == Config().qps) {
      config.qps = 1000;
      config.burst = 1000;
    }
    if (record_sleeps) {
      options.sleep = [this](absl::Duration d) {
        MutexLock lock(&mu_);
        sleeps_.push_back(d);
        // The fault has been seen: let the retry through.
        server_->faults()->set_options({});
      };
    }
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

INSTANTIATE_TEST_SUITE_P(HttpAndHttps, ApiServerClientTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Https" : "Http";
                         });

TEST_P(ApiServerClientTest, EveryVerb) {
  StartServer();
  auto client = Client();
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");

  // Create, Get, dry run.
  auto created = client->Create(kBg, Resource::Namespaced(kConfigMaps),
                                *ConfigMap("a", R"({"app":"web"})"));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_FALSE((*created)->uid().empty());
  EXPECT_FALSE((*created)->resource_version().empty());
  EXPECT_TRUE(
      api::IsAlreadyExists(client->Create(kBg, cms, *ConfigMap("a")).status()));
  ASSERT_TRUE(
      client->Create(kBg, cms, *ConfigMap("dry"), {.dry_run = true}).ok());
  EXPECT_TRUE(api::IsNotFound(client->Get(kBg, cms, "dry").status()));
  ASSERT_TRUE(
      client->Create(kBg, cms, *ConfigMap("b", R"({"app":"db"})")).ok());
  ASSERT_TRUE(
      client->Create(kBg, cms, *ConfigMap("c", R"({"app":"web"})")).ok());
  auto got = client->Get(kBg, cms, "a");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)->uid(), (*created)->uid());

  // List with a selector; a pager over pages of one.
  ListOptions web;
  web.label_selector = "app=web";
  auto list = client->List(kBg, cms, web);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[0]->kind(), "ConfigMap");
  EXPECT_FALSE(list->resource_version.empty());
  ListPager pager(client.get(), 1);
  auto all = pager.List(kBg, cms);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->items.size(), 3u);
  EXPECT_EQ(pager.pages(), 3);

  // Update, and a stale update: Conflict.
  auto builder = (*got)->ToBuilder();
  ASSERT_TRUE(builder.SetString("/data/a", "2").ok());
  auto edited = builder.Build();
  ASSERT_TRUE(edited.ok());
  auto updated = client->Update(kBg, cms, **edited);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_NE((*updated)->resource_version(), (*got)->resource_version());
  auto stale = client->Update(kBg, cms, **edited);
  EXPECT_TRUE(api::IsConflict(stale.status())) << stale.status();

  // Patches of every type.
  auto merged =
      client->Patch(kBg, cms, "a", PatchType::kMerge, R"({"data":{"m":"1"}})");
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_NE((*merged)->Find("/data/m"), nullptr);
  auto json = client->Patch(kBg, cms, "a", PatchType::kJson,
                            R"([{"op":"add","path":"/data/j","value":"1"}])");
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_NE((*json)->Find("/data/j"), nullptr);
  auto strategic = client->Patch(kBg, cms, "a", PatchType::kStrategicMerge,
                                 R"({"data":{"s":"1"}})");
  ASSERT_TRUE(strategic.ok()) << strategic.status();
  auto applied = client->Patch(
      kBg, cms, "applied", PatchType::kApply,
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n"
      "data:\n  k: one\n",
      {.field_manager = "first"});
  ASSERT_TRUE(applied.ok()) << applied.status();
  auto conflict = client->Patch(
      kBg, cms, "applied", PatchType::kApply,
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n"
      "data:\n  k: two\n",
      {.field_manager = "second"});
  EXPECT_TRUE(api::IsConflict(conflict.status())) << conflict.status();
  auto forced = client->Patch(
      kBg, cms, "applied", PatchType::kApply,
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n"
      "data:\n  k: two\n",
      {.field_manager = "second", .force = true});
  ASSERT_TRUE(forced.ok()) << forced.status();

  // Delete with a precondition that does not hold, then for real.
  DeleteOptions wrong_uid;
  wrong_uid.preconditions.uid = "not-the-uid";
  EXPECT_TRUE(api::IsConflict(client->Delete(kBg, cms, "a", wrong_uid)));
  DeleteOptions right;
  right.preconditions.uid = std::string((*created)->uid());
  right.propagation_policy = "Background";
  EXPECT_TRUE(client->Delete(kBg, cms, "a", right).ok());
  EXPECT_TRUE(api::IsNotFound(client->Get(kBg, cms, "a").status()));
  EXPECT_TRUE(api::IsNotFound(client->Delete(kBg, cms, "a")));

  // DeleteCollection by label.
  ListOptions db;
  db.label_selector = "app=db";
  ASSERT_TRUE(client->DeleteCollection(kBg, cms, {}, db).ok());
  EXPECT_TRUE(api::IsNotFound(client->Get(kBg, cms, "b").status()));
  EXPECT_TRUE(client->Get(kBg, cms, "c").ok());
}

TEST_P(ApiServerClientTest, ClusterScopedAndStatus) {
  StartServer();
  auto client = Client();
  const Resource namespaces = Resource::ClusterScoped(kNamespaces);
  ASSERT_TRUE(client->Create(kBg, namespaces, *Namespace("team")).ok());
  auto ns = client->Get(kBg, namespaces, "team");
  ASSERT_TRUE(ns.ok()) << ns.status();
  auto list = client->List(kBg, namespaces);
  ASSERT_TRUE(list.ok());
  EXPECT_GE(list->items.size(), 2u);

  const Resource deployments = Resource::Namespaced(kDeployments, "team");
  auto d = client->Create(kBg, deployments,
                          *Obj(R"({"kind":"Deployment","apiVersion":"apps/v1",
      "metadata":{"name":"web","namespace":"team"},
      "spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},
        "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx:1.7.9"}]}}}})"));
  ASSERT_TRUE(d.ok()) << d.status();
  auto b = (*d)->ToBuilder();
  ASSERT_TRUE(b.SetInt("/status/replicas", 2).ok());
  ASSERT_TRUE(b.SetInt("/spec/replicas", 5).ok());
  auto with_status = b.Build();
  ASSERT_TRUE(with_status.ok());
  auto updated = client->UpdateStatus(kBg, deployments, **with_status);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ((*updated)->Find("/status/replicas")->GetInt(), 2);
  EXPECT_EQ((*updated)->Find("/spec/replicas")->GetInt(), 2);  // status only
}

TEST_P(ApiServerClientTest, ListOptionsReachTheServer) {
  StartServer();
  auto client = Client();
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  for (const char* name : {"l1", "l2", "l3", "l4", "l5"}) {
    ASSERT_TRUE(client->Create(kBg, cms, *ConfigMap(name)).ok());
  }

  // A field selector.
  ListOptions one;
  one.field_selector = "metadata.name=l3";
  auto selected = client->List(kBg, cms, one);
  ASSERT_TRUE(selected.ok()) << selected.status();
  ASSERT_EQ(selected->items.size(), 1u);
  EXPECT_EQ(selected->items[0]->name(), "l3");
  ListOptions unsupported;
  unsupported.field_selector = "data.a=1";
  EXPECT_TRUE(api::IsBadRequest(client->List(kBg, cms, unsupported).status()));

  // limit and continue by hand: pages of two, one snapshot.
  ListOptions page;
  page.limit = 2;
  auto first = client->List(kBg, cms, page);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->items.size(), 2u);
  ASSERT_FALSE(first->continue_token.empty());
  ASSERT_TRUE(first->remaining_item_count.has_value());
  EXPECT_EQ(*first->remaining_item_count, 3);
  ASSERT_TRUE(
      client->Create(kBg, cms, *ConfigMap("l6")).ok());  // not in the snapshot
  std::vector<std::string> names;
  for (const auto& item : first->items) names.emplace_back(item->name());
  page.continue_token = first->continue_token;
  while (!page.continue_token.empty()) {
    auto next = client->List(kBg, cms, page);
    ASSERT_TRUE(next.ok()) << next.status();
    EXPECT_EQ(next->resource_version, first->resource_version);
    for (const auto& item : next->items) names.emplace_back(item->name());
    page.continue_token = next->continue_token;
  }
  EXPECT_THAT(names, ::testing::ElementsAre("l1", "l2", "l3", "l4", "l5"));

  // resourceVersion with resourceVersionMatch, and an invalid combination.
  ListOptions not_older;
  not_older.resource_version = first->resource_version;
  not_older.resource_version_match = "NotOlderThan";
  auto fresh = client->List(kBg, cms, not_older);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ(fresh->items.size(), 6u);
  ListOptions exact;
  exact.resource_version = first->resource_version;
  exact.resource_version_match = "Exact";
  auto then = client->List(kBg, cms, exact);
  ASSERT_TRUE(then.ok()) << then.status();
  EXPECT_EQ(then->items.size(), 5u);
  EXPECT_EQ(then->resource_version, first->resource_version);
  ListOptions match_alone;
  match_alone.resource_version_match = "Exact";
  EXPECT_TRUE(api::IsInvalid(client->List(kBg, cms, match_alone).status()));

  // Get from the cache ("0") and at the latest version.
  auto cached = client->Get(kBg, cms, "l1", {.resource_version = "0"});
  ASSERT_TRUE(cached.ok()) << cached.status();
  EXPECT_EQ((*cached)->name(), "l1");
}

TEST_P(ApiServerClientTest, DryRunWritesChangeNothing) {
  StartServer();
  auto client = Client();
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  auto created = client->Create(kBg, cms, *ConfigMap("d", R"({"app":"dry"})"));
  ASSERT_TRUE(created.ok()) << created.status();
  const std::string rv((*created)->resource_version());

  auto b = (*created)->ToBuilder();
  ASSERT_TRUE(b.SetString("/data/a", "changed").ok());
  auto edited = b.Build();
  ASSERT_TRUE(edited.ok());
  auto updated = client->Update(kBg, cms, **edited, {.dry_run = true});
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ((*updated)->Find("/data/a")->GetString(), std::string("changed"));
  auto patched = client->Patch(kBg, cms, "d", PatchType::kMerge,
                               R"({"data":{"p":"1"}})", {.dry_run = true});
  ASSERT_TRUE(patched.ok()) << patched.status();
  EXPECT_NE((*patched)->Find("/data/p"), nullptr);
  DeleteOptions dry_delete;
  dry_delete.dry_run = true;
  ASSERT_TRUE(client->Delete(kBg, cms, "d", dry_delete).ok());
  ListOptions selector;
  selector.label_selector = "app=dry";
  ASSERT_TRUE(client->DeleteCollection(kBg, cms, dry_delete, selector).ok());

  auto now = client->Get(kBg, cms, "d");
  ASSERT_TRUE(now.ok()) << now.status();
  EXPECT_EQ((*now)->resource_version(), rv);
  EXPECT_EQ((*now)->Find("/data/a")->GetString(), std::string("1"));
  EXPECT_EQ((*now)->Find("/data/p"), nullptr);
}

TEST_P(ApiServerClientTest, DeleteOptionsReachTheServer) {
  StartServer();
  auto client = Client();
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  auto created = client->Create(kBg, cms, *ConfigMap("x"));
  ASSERT_TRUE(created.ok()) << created.status();
  auto touched =
      client->Patch(kBg, cms, "x", PatchType::kMerge, R"({"data":{"b":"2"}})");
  ASSERT_TRUE(touched.ok()) << touched.status();

  // A resourceVersion precondition that no longer holds: Conflict.
  DeleteOptions stale;
  stale.preconditions.resource_version =
      std::string((*created)->resource_version());
  absl::Status conflict = client->Delete(kBg, cms, "x", stale);
  EXPECT_TRUE(api::IsConflict(conflict)) << conflict;
  EXPECT_THAT(std::string(conflict.message()),
              HasSubstr("Precondition failed"));

  DeleteOptions current;
  current.preconditions.uid = std::string((*touched)->uid());
  current.preconditions.resource_version =
      std::string((*touched)->resource_version());
  current.grace_period_seconds = 0;
  current.propagation_policy = "Background";
  ASSERT_TRUE(client->Delete(kBg, cms, "x", current).ok());
  EXPECT_TRUE(api::IsNotFound(client->Get(kBg, cms, "x").status()));

  // An unknown propagation policy is the server's 422, not a local error.
  ASSERT_TRUE(client->Create(kBg, cms, *ConfigMap("y")).ok());
  DeleteOptions bogus;
  bogus.propagation_policy = "Sometimes";
  absl::Status invalid = client->Delete(kBg, cms, "y", bogus);
  EXPECT_TRUE(api::IsInvalid(invalid) || api::IsBadRequest(invalid)) << invalid;

  // Cluster-scoped: a namespace goes into Terminating.
  const Resource namespaces = Resource::ClusterScoped(kNamespaces);
  ASSERT_TRUE(client->Create(kBg, namespaces, *Namespace("gone")).ok());
  ASSERT_TRUE(client->Delete(kBg, namespaces, "gone").ok());
  auto ns = client->Get(kBg, namespaces, "gone");
  if (ns.ok()) {
    EXPECT_NE((*ns)->Find("/metadata/deletionTimestamp"), nullptr);
  } else {
    EXPECT_TRUE(api::IsNotFound(ns.status())) << ns.status();
  }
}

TEST_P(ApiServerClientTest, Watch) {
  StartServer();
  auto client = Client();
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  auto first = client->Create(kBg, cms, *ConfigMap("w"));
  ASSERT_TRUE(first.ok());
  ListOptions o;
  o.resource_version = std::string((*first)->resource_version());
  auto watch = client->Watch(kBg, cms, o);
  ASSERT_TRUE(watch.ok()) << watch.status();
  ASSERT_TRUE(
      client->Patch(kBg, cms, "w", PatchType::kMerge, R"({"data":{"x":"y"}})")
          .ok());
  ASSERT_TRUE(client->Create(kBg, cms, *ConfigMap("w2")).ok());
  ASSERT_TRUE(client->Delete(kBg, cms, "w").ok());
  std::vector<std::string> got;
  WatchEvent e;
  while (got.size() < 3 && (*watch)->Next(&e)) {
    got.push_back(std::string(EventTypeName(e.type)) + " " +
                  std::string(e.object->name()));
  }
  EXPECT_THAT(got,
              ::testing::ElementsAre("MODIFIED w", "ADDED w2", "DELETED w"));
  (*watch)->Stop();
  EXPECT_FALSE((*watch)->Next(&e));
  EXPECT_EQ((*watch)->status().code(), absl::StatusCode::kCancelled);
}

// Cancellation against the real server. No clock measures "promptly":
// what each call waits for (an hour's delay, an hour's Retry-After, a
// watch that would last half an hour, a token days away) outlasts Bazel's
// timeout, so a call that did not end with its context would fail the
// test however fast or slow the machine is.

TEST_P(ApiServerClientTest, DeadlineEndsARequestTheServerDelays) {
  StartServer();
  auto client = Client();
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  apiserver::FaultOptions faults;
  faults.delay = absl::Hours(1);
  server_->faults()->set_options(faults);
  auto [ctx, cancel] = WithTimeout(kBg, absl::Milliseconds(100));
  const absl::Status got = client->List(ctx, cms).status();
  EXPECT_EQ(got.code(), absl::StatusCode::kDeadlineExceeded) << got;
  EXPECT_THAT(got.message(), HasSubstr("context deadline exceeded"));
  cancel();
  server_->faults()->set_options({});
  EXPECT_TRUE(client->List(kBg, cms).ok());
}

TEST_P(ApiServerClientTest, DeadlineEndsARetryAfterWait) {
  StartServer();
  auto client = Client({}, {}, /*record_sleeps=*/false);
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  apiserver::FaultOptions faults;
  faults.throttle_fraction = 1;
  faults.retry_after_seconds = 3600;
  server_->faults()->set_options(faults);
  auto [ctx, cancel] = WithTimeout(kBg, absl::Milliseconds(300));
  const absl::Status got =
      client->Create(ctx, cms, *ConfigMap("throttled")).status();
  EXPECT_EQ(got.code(), absl::StatusCode::kDeadlineExceeded) << got;
  EXPECT_LE(server_->faults()->throttles_injected(), 1);  // never retried
  cancel();
}

TEST_P(ApiServerClientTest, CancelEndsAWatchWithoutEvents) {
  StartServer();
  auto client = Client();
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  auto [ctx, cancel] = WithCancel(kBg);
  auto watch = client->Watch(ctx, cms);
  ASSERT_TRUE(watch.ok()) << watch.status();
  Notification returned;
  std::thread reader([&] {
    WatchEvent e;
    EXPECT_FALSE((*watch)->Next(&e));
    returned.Notify();
  });
  cancel();
  reader.join();
  EXPECT_TRUE(returned.HasBeenNotified());
  EXPECT_EQ((*watch)->status().code(), absl::StatusCode::kCancelled);

  // A deadline on one Next ends the stream too.
  auto quiet = client->Watch(kBg, cms);
  ASSERT_TRUE(quiet.ok()) << quiet.status();
  auto [next_ctx, cancel_next] = WithTimeout(kBg, absl::Milliseconds(100));
  WatchEvent e;
  EXPECT_FALSE((*quiet)->Next(next_ctx, &e));
  EXPECT_EQ((*quiet)->status().code(), absl::StatusCode::kDeadlineExceeded);
  cancel_next();
}

TEST_P(ApiServerClientTest, RateLimiterWaitEndsWithTheContext) {
  StartServer();
  Config config;
  config.qps = 1e-6;  // a token every 11.6 days
  config.burst = 1;
  auto client = Client(config, {}, /*record_sleeps=*/false);
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  ASSERT_TRUE(client->List(kBg, cms).ok());
  // Longer than the deadline: refused at once, nothing sent.
  auto [ctx, cancel] = WithTimeout(kBg, absl::Hours(1));
  EXPECT_EQ(client->List(ctx, cms).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_FALSE(ctx.done());
  cancel();
  // No deadline: waits until cancelled.
  auto [waiting, cancel_waiting] = WithCancel(kBg);
  absl::Status got;
  std::thread caller(
      [&, waiting = waiting] { got = client->List(waiting, cms).status(); });
  cancel_waiting();
  caller.join();
  EXPECT_EQ(got.code(), absl::StatusCode::kCancelled);
}

TEST_P(ApiServerClientTest, ManyIdleWatchesLeaveRequestsFlowing) {
  // Each watch waits for its body on a thread of its own, never on one of
  // cpprestsdk's pool threads (40 of them): with more idle watches than
  // that, requests and the watches' own events still get through.
  StartServer();
  auto client = Client();
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  constexpr int kWatches = 64;
  std::vector<std::unique_ptr<WatchStream>> watches;
  for (int i = 0; i < kWatches; ++i) {
    auto watch = client->Watch(kBg, cms);
    ASSERT_TRUE(watch.ok()) << i << ": " << watch.status();
    watches.push_back(*std::move(watch));
  }
  ASSERT_TRUE(client->Create(kBg, cms, *ConfigMap("seen-by-all")).ok());
  ASSERT_TRUE(client->Get(kBg, cms, "seen-by-all").ok());
  for (auto& watch : watches) {
    WatchEvent e;
    ASSERT_TRUE(watch->Next(&e)) << watch->status();
    EXPECT_EQ(e.type, EventType::kAdded);
    EXPECT_EQ(e.object->name(), "seen-by-all");
  }
  for (auto& watch : watches) watch->Stop();
}

TEST_P(ApiServerClientTest, WatchFromTooOldVersionIsExpired) {
  apiserver::ApiServerOptions options;
  options.history_size = 2;
  StartServer(options);
  auto client = Client();
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  auto first = client->Create(kBg, cms, *ConfigMap("v0"));
  ASSERT_TRUE(first.ok());
  for (int i = 1; i < 6; ++i)
    ASSERT_TRUE(
        client->Create(kBg, cms, *ConfigMap("v" + std::to_string(i))).ok());
  ListOptions o;
  o.resource_version = std::string((*first)->resource_version());
  auto watch = client->Watch(kBg, cms, o);
  absl::Status status;
  if (!watch.ok()) {
    status = watch.status();
  } else {
    WatchEvent e;
    ASSERT_TRUE((*watch)->Next(&e));
    ASSERT_EQ(e.type, EventType::kError);
    status = e.error;
  }
  EXPECT_TRUE(api::IsResourceExpired(status)) << status;
}

TEST_P(ApiServerClientTest, BearerToken) {
  apiserver::ApiServerOptions options;
  options.token = "s3cret";
  StartServer(options);
  Config good;
  good.bearer_token = "s3cret";
  EXPECT_TRUE(Client(good)
                  ->List(kBg, Resource::Namespaced(kConfigMaps, "default"))
                  .ok());
  Config bad;
  bad.bearer_token = "nope";
  auto list =
      Client(bad)->List(kBg, Resource::Namespaced(kConfigMaps, "default"));
  EXPECT_TRUE(api::IsUnauthorized(list.status())) << list.status();
}

// Records the code of every attempt, as rest_client_requests_total sees it.
class AttemptRecorder final : public MetricsProvider {
 public:
  std::vector<std::string> codes() {
    MutexLock lock(&mu_);
    return codes_;
  }
  std::unique_ptr<RequestResultMetric> NewRequestResultMetric() override {
    return std::make_unique<Result>(this);
  }
  std::unique_ptr<RequestLatencyMetric> NewRequestLatencyMetric() override {
    return nullptr;
  }

 private:
  struct Result final : RequestResultMetric {
    explicit Result(AttemptRecorder* r) : recorder(r) {}
    void Increment(std::string_view code, std::string_view,
                   std::string_view) override {
      MutexLock lock(&recorder->mu_);
      recorder->codes_.emplace_back(code);
    }
    AttemptRecorder* recorder;
  };
  Mutex mu_;
  std::vector<std::string> codes_ ABSL_GUARDED_BY(mu_);
};

TEST_P(ApiServerClientTest, TokenFileRotatedOnDisk) {
  apiserver::ApiServerOptions options;
  options.token = "current";
  StartServer(options);
  const std::string token_file = MakeTempDir("sa") + "/token";
  WriteFile(token_file, "current\n");
  kcr::testing::FakeClock clock;
  AttemptRecorder attempts;
  Config config;
  config.bearer_token_file = token_file;
  auto client = Client(config, {.clock = &clock, .metrics = &attempts});
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  ASSERT_TRUE(client->List(kBg, cms).ok());

  // The file changes; within the minute the cached token is still sent.
  WriteFile(token_file, "revoked\n");
  clock.Advance(absl::Seconds(30));
  EXPECT_TRUE(client->List(kBg, cms).ok());

  // After the minute the next request re-reads the file and sends what it
  // holds, which this server refuses; the 401's re-read finds the same
  // token, so the 401 is the answer.
  clock.Advance(absl::Seconds(31));
  EXPECT_TRUE(api::IsUnauthorized(client->List(kBg, cms).status()));
  EXPECT_THAT(attempts.codes(), ::testing::ElementsAre("200", "200", "401"));

  // The file is fixed; the clock stands still, yet the 401 to the cached
  // token forces a re-read at once and the request goes again.
  WriteFile(token_file, "current\n");
  EXPECT_TRUE(client->List(kBg, cms).ok());
  EXPECT_THAT(attempts.codes(),
              ::testing::ElementsAre("200", "200", "401", "401", "200"));
}

TEST_P(ApiServerClientTest, ExecPluginFromAKubeconfigReRunAfter401) {
  // The plugin answers exec-token-<run>: the server takes only the second.
  apiserver::ApiServerOptions options;
  options.token = "exec-token-2";
  StartServer(options);
  const std::string dir = MakeTempDir("kube");
  const std::string state = MakeTempDir("exec");
  std::string cluster = absl::StrCat("    server: ", server_->url(), "\n");
  if (https()) {
    absl::StrAppend(&cluster, "    certificate-authority: ",
                    server_->options().tls_ca_file, "\n");
  }
  WriteFile(dir + "/config", absl::StrCat(R"(apiVersion: v1
kind: Config
current-context: local
clusters:
- name: local
  cluster:
)",
                                          cluster, R"(users:
- name: plugin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: )",
                                          TestdataPath("exec_plugin.sh"), R"(
      args: [")",
                                          state, R"(", ok]
      env:
      - {name: EXTRA_VAR, value: from-kubeconfig}
      interactiveMode: Never
contexts:
- name: local
  context: {cluster: local, user: plugin}
)"));
  LoadingRules rules;
  rules.explicit_path = dir + "/config";
  auto config = LoadFromKubeconfig(rules);
  ASSERT_TRUE(config.ok()) << config.status();
  auto client = Client(*config);
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  ASSERT_TRUE(client->List(kBg, cms).ok());
  EXPECT_EQ(ReadFileOrDie(state + "/count"), "2\n");
  EXPECT_EQ(ReadFileOrDie(state + "/extra"), "from-kubeconfig");
  ASSERT_TRUE(client->List(kBg, cms).ok());  // cached: no expiry
  EXPECT_EQ(ReadFileOrDie(state + "/count"), "2\n");
}

TEST_P(ApiServerClientTest, PrometheusMetrics) {
  StartServer();
  prometheus::Registry registry;
  metrics::PrometheusRestClientMetrics provider(registry);
  auto client = Client({}, {.metrics = &provider});
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  ASSERT_TRUE(client->Create(kBg, cms, *ConfigMap("m")).ok());
  ASSERT_TRUE(client->Get(kBg, cms, "m").ok());
  EXPECT_TRUE(api::IsNotFound(client->Get(kBg, cms, "absent").status()));
  const std::string host = absl::StrCat("127.0.0.1:", server_->port());
  const std::string text =
      prometheus::TextSerializer().Serialize(registry.Collect());
  EXPECT_THAT(text, HasSubstr(absl::StrCat(
                        "rest_client_requests_total{code=\"201\",host=\"", host,
                        "\",method=\"POST\"} 1")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat(
                        "rest_client_requests_total{code=\"200\",host=\"", host,
                        "\",method=\"GET\"} 1")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat(
                        "rest_client_requests_total{code=\"404\",host=\"", host,
                        "\",method=\"GET\"} 1")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat(
                        "rest_client_request_duration_seconds_count{host=\"",
                        host, "\",verb=\"GET\"} 2")));
}

TEST_P(ApiServerClientTest, InjectedThrottleAndErrorsAreRetried) {
  StartServer();
  auto client = Client();
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  apiserver::FaultOptions faults;
  faults.throttle_fraction = 1;
  faults.retry_after_seconds = 3;
  server_->faults()->set_options(faults);
  // A create is retried after a 429: the server did not act on it.
  ASSERT_TRUE(client->Create(kBg, cms, *ConfigMap("t")).ok());
  EXPECT_THAT(sleeps(), ::testing::ElementsAre(absl::Seconds(3)));
  EXPECT_EQ(server_->faults()->throttles_injected(), 1);

  faults = {};
  faults.error_fraction = 1;
  server_->faults()->set_options(faults);
  ASSERT_TRUE(client->Get(kBg, cms, "t").ok());
  EXPECT_EQ(server_->faults()->errors_injected(), 1);
  EXPECT_EQ(sleeps().size(), 2u);

  server_->faults()->set_options(faults);
  auto created = client->Create(kBg, cms, *ConfigMap("u"));
  EXPECT_TRUE(api::IsInternalError(created.status())) << created.status();
}

TEST_P(ApiServerClientTest, TypedClients) {
  StartServer();
  auto client = Client();
  TypedClient<api::ConfigMapView> cms(client.get(), "default");
  EXPECT_EQ(cms.resource().gvr.resource, "configmaps");
  auto created = cms.Create(kBg, *ConfigMap("typed"));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->object().name(), "typed");
  auto got = cms.Get(kBg, "typed");
  ASSERT_TRUE(got.ok()) << got.status();
  std::string rv;
  auto list = cms.List(kBg, {}, &rv);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->size(), 1u);
  EXPECT_FALSE(rv.empty());
  auto patched =
      cms.Patch(kBg, "typed", PatchType::kMerge, R"({"data":{"b":"2"}})");
  ASSERT_TRUE(patched.ok()) << patched.status();
  EXPECT_TRUE(cms.Delete(kBg, "typed").ok());

  TypedClient<api::NamespaceView> namespaces(client.get(), "ignored");
  EXPECT_FALSE(namespaces.resource().namespaced);
  auto all = namespaces.List(kBg);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_GE(all->size(), 1u);
  EXPECT_EQ(ResourceFor<nginx::Nginx>("x").gvr.group, "example.org");
  EXPECT_EQ(ResourceFor<api::LeaseView>("x").gvr.group, "coordination.k8s.io");
}

// TLS trust against the HTTPS server: its CA, another CA, no verification,
// and the kubeconfig the server writes.
using ApiServerTlsTest = ApiServerClientTest;
INSTANTIATE_TEST_SUITE_P(Https, ApiServerTlsTest, ::testing::Values(true));

TEST_P(ApiServerTlsTest, TrustMatrix) {
  StartServer();
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");

  Config right;
  right.tls.ca_file = server_->options().tls_ca_file;
  EXPECT_TRUE(Client(right)->List(kBg, cms).ok());
  Config right_data;
  right_data.tls.ca_data = ReadFileOrDie(server_->options().tls_ca_file);
  EXPECT_TRUE(Client(right_data)->List(kBg, cms).ok());

  Config wrong;
  wrong.tls.ca_file = TestdataPath("other-ca.pem");
  auto list = Client(wrong)->List(kBg, cms);
  EXPECT_EQ(list.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(list.status().message()), HasSubstr("TLS handshake"));
  EXPECT_THAT(std::string(list.status().message()),
              HasSubstr("certificate verify failed"));
  EXPECT_TRUE(sleeps().empty());  // not retried

  Config insecure;
  insecure.tls.insecure = true;
  EXPECT_TRUE(Client(insecure)->List(kBg, cms).ok());

  // The server's own kubeconfig works as written.
  const std::string kubeconfig = MakeTempDir("kubeconfig") + "/kubeconfig";
  ASSERT_TRUE(server_->WriteKubeconfig(kubeconfig).ok());
  LoadingRules rules;
  rules.explicit_path = kubeconfig;
  auto config = LoadFromKubeconfig(rules);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(Client(*config)->List(kBg, cms).ok());
  EXPECT_TRUE(Client(*config)->GetRaw(kBg, "/version").ok());
}

TEST_P(ApiServerTlsTest, InClusterConfig) {
  // What a pod sees: the service variables and a service-account directory.
  apiserver::ApiServerOptions options;
  options.token = "sa-token";
  StartServer(options);
  const std::string sa = MakeTempDir("serviceaccount");
  WriteFile(sa + "/ca.crt", ReadFileOrDie(server_->options().tls_ca_file));
  WriteFile(sa + "/token", "sa-token\n");
  WriteFile(sa + "/namespace", "kube-system\n");
  setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", std::to_string(server_->port()).c_str(), 1);
  auto config = InClusterConfig({.service_account_dir = sa});
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->host, absl::StrCat("https://127.0.0.1:", server_->port()));
  EXPECT_EQ(config->namespace_, "kube-system");
  auto client = Client(*config);
  EXPECT_TRUE(
      client->List(kBg, Resource::Namespaced(kConfigMaps, config->namespace_))
          .ok());
}

// --- ListEach and metadata-only requests ---

// `n` ConfigMaps in "default", straight into the server's registry.
void CreateConfigMaps(apiserver::ApiServer* server, int n) {
  apiserver::ResourceInfoPtr cms =
      server->resources()->Lookup("", "v1", "configmaps");
  for (int i = 0; i < n; ++i) {
    auto b = api::ObjectBuilder::FromJson(absl::StrCat(
        R"({"metadata":{"name":"cm-)", 10000 + i, R"("},"data":{"k":"v"}})"));
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_TRUE(
        server->registry()->Create(*cms, "default", std::move(*b)).ok());
  }
}

TEST_P(ApiServerClientTest, ListEachStreamsALargeList) {
  StartServer();
  CreateConfigMaps(server_.get(), 1500);
  auto client = Client();
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  int i = 0;
  auto meta = client->ListEach(kBg, cms, {}, [&i](api::ObjectPtr item) {
    EXPECT_EQ(item->kind(), "ConfigMap");
    EXPECT_EQ(item->api_version(), "v1");
    EXPECT_EQ(item->name(), absl::StrCat("cm-", 10000 + i));
    ++i;
    return absl::OkStatus();
  });
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(i, 1500);
  EXPECT_EQ(meta->kind, "ConfigMapList");
  EXPECT_FALSE(meta->resource_version.empty());
  auto list = client->List(kBg, cms);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->items.size(), 1500u);
  EXPECT_EQ(list->resource_version, meta->resource_version);
}

TEST_P(ApiServerClientTest, ListEachCancelledMidList) {
  StartServer();
  CreateConfigMaps(server_.get(), 1500);
  auto client = Client();
  auto [ctx, cancel] = WithCancel(kBg);
  int items = 0;
  auto meta =
      client->ListEach(ctx, Resource::Namespaced(kConfigMaps, "default"), {},
                       [&, cancel = cancel](api::ObjectPtr) {
                         if (++items == 10) cancel();
                         return absl::OkStatus();
                       });
  EXPECT_EQ(meta.status().code(), absl::StatusCode::kCancelled)
      << meta.status();
  EXPECT_EQ(items, 10);
  // The client still works.
  EXPECT_TRUE(
      client->Get(kBg, Resource::Namespaced(kConfigMaps, "default"), "cm-10000")
          .ok());
}

TEST_P(ApiServerClientTest, MetadataOnlyListGetAndWatch) {
  StartServer();
  auto client = Client();
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  ASSERT_TRUE(
      client->Create(kBg, cms, *ConfigMap("a", R"({"app":"web"})")).ok());
  ListOptions metadata_only;
  metadata_only.metadata_only = true;
  auto list = client->List(kBg, cms, metadata_only);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->kind, "PartialObjectMetadataList");
  EXPECT_EQ(list->api_version, "meta.k8s.io/v1");
  ASSERT_EQ(list->items.size(), 1u);
  const api::Object& item = *list->items[0];
  EXPECT_EQ(item.kind(), "PartialObjectMetadata");
  EXPECT_EQ(item.api_version(), "meta.k8s.io/v1");
  EXPECT_EQ(item.name(), "a");
  EXPECT_EQ(item.Label("app"), "web");
  EXPECT_EQ(item.Find("/data"), nullptr);

  auto got = client->Get(kBg, cms, "a", {.metadata_only = true});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)->kind(), "PartialObjectMetadata");
  EXPECT_EQ((*got)->Find("/data"), nullptr);
  EXPECT_FALSE((*got)->uid().empty());

  metadata_only.resource_version = list->resource_version;
  metadata_only.timeout_seconds = 30;
  auto watch = client->Watch(kBg, cms, metadata_only);
  ASSERT_TRUE(watch.ok()) << watch.status();
  ASSERT_TRUE(client->Create(kBg, cms, *ConfigMap("b")).ok());
  WatchEvent e;
  ASSERT_TRUE((*watch)->Next(&e)) << (*watch)->status();
  EXPECT_EQ(e.type, EventType::kAdded);
  EXPECT_EQ(e.object->kind(), "PartialObjectMetadata");
  EXPECT_EQ(e.object->api_version(), "meta.k8s.io/v1");
  EXPECT_EQ(e.object->name(), "b");
  EXPECT_EQ(e.object->Find("/data"), nullptr);
}

}  // namespace
}  // namespace kcr::client
