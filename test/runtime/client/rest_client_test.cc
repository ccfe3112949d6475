// The REST client over real HTTP and HTTPS against a scripted test server:
// request shapes of every verb, errors, retries, flow control, auth, TLS,
// and watch streams.
#include "runtime/client/rest_client.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/escaping.h"
#include "absl/time/clock.h"
#include "api/errors/errors.h"
#include "base/context.h"
#include "base/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/client/list_pager.h"
#include "test/fakes/fake_clock.h"
#include "test/runtime/client/scripted_server.h"
#include "test/runtime/client/test_util.h"

namespace kcr::client {
namespace {

// The context of the calls that are not about cancellation.
const Context kBg = Context::Background();

using ::kcr::client::testing::MakeTempDir;
using ::kcr::client::testing::ReadFileOrDie;
using ::kcr::client::testing::ResponseWriter;
using ::kcr::client::testing::ScriptedServer;
using ::kcr::client::testing::ScriptedServerOptions;
using ::kcr::client::testing::TestdataPath;
using ::kcr::client::testing::TestRequest;
using ::kcr::client::testing::WriteFile;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const api::GroupVersionResource kConfigMaps{"", "v1", "configmaps"};
const api::GroupVersionResource kDeployments{"apps", "v1", "deployments"};
const api::GroupVersionResource kNamespaces{"", "v1", "namespaces"};

constexpr char kCm[] =
    R"({"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm1","namespace":"default","resourceVersion":"5"},"data":{"a":"1"}})";

std::string StatusBody(int code, const std::string& reason,
                       const std::string& message) {
  return absl::StrCat(
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":")",
      message, R"(","reason":")", reason, R"(","code":)", code, "}");
}

api::ObjectPtr Obj(const std::string& json) {
  return *api::Object::Parse(json);
}

// Records every request and answers from a script.
class Recorder {
 public:
  void Add(const TestRequest& r) {
    MutexLock lock(&mu_);
    requests_.push_back(r);
  }
  std::vector<TestRequest> requests() const {
    MutexLock lock(&mu_);
    return requests_;
  }
  TestRequest last() const {
    MutexLock lock(&mu_);
    return requests_.back();
  }
  size_t count() const {
    MutexLock lock(&mu_);
    return requests_.size();
  }

 private:
  mutable Mutex mu_;
  std::vector<TestRequest> requests_ ABSL_GUARDED_BY(mu_);
};

class RestClientTest : public ::testing::Test {
 protected:
  // Starts a plain-HTTP server with `handler` and a client for it.
  void Serve(std::function<void(const TestRequest&, ResponseWriter&)> handler,
             Config config = {}) {
    auto server = ScriptedServer::Start(
        [this, handler](const TestRequest& r, ResponseWriter& w) {
          recorder_.Add(r);
          handler(r, w);
        });
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    config.host = server_->url();
    MakeClient(config);
  }
  void MakeClient(const Config& config) {
    ClientOptions options;
    options.clock = &clock_;
    if (record_sleeps_) {
      options.sleep = [this](absl::Duration d) {
        MutexLock lock(&sleeps_mu_);
        sleeps_.push_back(d);
      };
    }
    options.metrics = metrics_;
    auto client = NewRestClient(config, options);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }
  std::vector<absl::Duration> sleeps() {
    MutexLock lock(&sleeps_mu_);
    return sleeps_;
  }

  kcr::testing::FakeClock clock_;
  // False: the client really waits, on clock_, for the rate limiter and
  // before retries (and a test moves clock_ or cancels).
  bool record_sleeps_ = true;
  Recorder recorder_;
  MetricsProvider* metrics_ = nullptr;
  Mutex sleeps_mu_;
  std::vector<absl::Duration> sleeps_ ABSL_GUARDED_BY(sleeps_mu_);
  std::unique_ptr<ScriptedServer> server_;
  std::unique_ptr<RestClient> client_;
};

TEST_F(RestClientTest, GetSendsPathAndHeaders) {
  Config config;
  config.bearer_token = "secret";
  Serve([](const TestRequest&, ResponseWriter& w) { w.Respond(200, kCm); },
        config);
  auto obj = client_->Get(kBg, Resource::Namespaced(kConfigMaps, "default"),
                          "cm1", {.resource_version = "0"});
  ASSERT_TRUE(obj.ok()) << obj.status();
  EXPECT_EQ((*obj)->name(), "cm1");
  TestRequest r = recorder_.last();
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.path, "/api/v1/namespaces/default/configmaps/cm1");
  EXPECT_EQ(r.Query("resourceVersion"), "0");
  EXPECT_EQ(r.Header("authorization"), "Bearer secret");
  EXPECT_THAT(r.Header("user-agent"), StartsWith("kcr/"));
  EXPECT_THAT(r.Header("user-agent"), HasSubstr("(linux/"));
  EXPECT_EQ(r.Header("accept"), "application/json");
}

TEST_F(RestClientTest, HostWithPathPrefixOrTrailingSlash) {
  Serve([](const TestRequest&, ResponseWriter& w) { w.Respond(200, kCm); });
  for (const std::string suffix : {"/", "/prefix", "/prefix/"}) {
    Config config;
    config.host = server_->url() + suffix;
    MakeClient(config);
    ASSERT_TRUE(
        client_->Get(kBg, Resource::Namespaced(kConfigMaps, "default"), "cm1")
            .ok());
    const std::string prefix = suffix == "/" ? "" : "/prefix";
    EXPECT_EQ(recorder_.last().path,
              prefix + "/api/v1/namespaces/default/configmaps/cm1")
        << suffix;
  }
}

TEST_F(RestClientTest, ListSendsTheShardSelector) {
  Serve([](const TestRequest&, ResponseWriter& w) {
    w.Respond(
        200,
        R"({"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{"resourceVersion":"7"},"items":[]})");
  });
  ListOptions o;
  o.shard_selector =
      "shardRange(object.metadata.uid, '0x0000000000000000', "
      "'0x8000000000000000')";
  auto list = client_->List(kBg, Resource::Namespaced(kDeployments, "ns"), o);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(recorder_.last().Query("shardSelector"), o.shard_selector);
  // None when unset.
  ASSERT_TRUE(
      client_->List(kBg, Resource::Namespaced(kDeployments, "ns"), {}).ok());
  EXPECT_FALSE(recorder_.last().HasQuery("shardSelector"));
}

TEST_F(RestClientTest, ListSendsOptionsAndFillsItemKinds) {
  Serve([](const TestRequest&, ResponseWriter& w) {
    w.Respond(
        200,
        R"({"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{"resourceVersion":"77","continue":"tok","remainingItemCount":3},
      "items":[{"metadata":{"name":"a","namespace":"ns"}},{"metadata":{"name":"b","namespace":"ns"}}]})");
  });
  ListOptions o;
  o.label_selector = "app in (web,db),tier!=x";
  o.field_selector = "metadata.name=a";
  o.limit = 2;
  o.continue_token = "abc=";
  o.resource_version = "10";
  o.resource_version_match = "NotOlderThan";
  auto list = client_->List(kBg, Resource::Namespaced(kDeployments, "ns"), o);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->resource_version, "77");
  EXPECT_EQ(list->continue_token, "tok");
  EXPECT_EQ(list->remaining_item_count, 3);
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[0]->kind(), "Deployment");
  EXPECT_EQ(list->items[0]->api_version(), "apps/v1");
  TestRequest r = recorder_.last();
  EXPECT_EQ(r.path, "/apis/apps/v1/namespaces/ns/deployments");
  EXPECT_EQ(r.Query("labelSelector"), "app in (web,db),tier!=x");
  EXPECT_EQ(r.Query("fieldSelector"), "metadata.name=a");
  EXPECT_EQ(r.Query("limit"), "2");
  EXPECT_EQ(r.Query("continue"), "abc=");
  EXPECT_EQ(r.Query("resourceVersion"), "10");
  EXPECT_EQ(r.Query("resourceVersionMatch"), "NotOlderThan");
  EXPECT_FALSE(r.HasQuery("watch"));
}

TEST_F(RestClientTest, AllNamespacesAndClusterScoped) {
  Serve([](const TestRequest& r, ResponseWriter& w) {
    if (r.path == "/api/v1/namespaces/kube-system") {
      w.Respond(
          200,
          R"({"kind":"Namespace","apiVersion":"v1","metadata":{"name":"kube-system"}})");
    } else {
      w.Respond(
          200,
          R"({"kind":"ConfigMapList","apiVersion":"v1","metadata":{},"items":[]})");
    }
  });
  ASSERT_TRUE(client_->List(kBg, Resource::Namespaced(kConfigMaps)).ok());
  EXPECT_EQ(recorder_.last().path, "/api/v1/configmaps");
  auto ns =
      client_->Get(kBg, Resource::ClusterScoped(kNamespaces), "kube-system");
  ASSERT_TRUE(ns.ok()) << ns.status();
  EXPECT_EQ((*ns)->name(), "kube-system");
}

TEST_F(RestClientTest, PagerFollowsContinueTokens) {
  Serve([](const TestRequest& r, ResponseWriter& w) {
    std::string cont = r.Query("continue");
    int page = cont.empty() ? 0 : std::stoi(cont);
    std::string next = page < 2 ? absl::StrCat(page + 1) : "";
    w.Respond(
        200,
        absl::StrCat(
            R"({"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":")",
            next, R"("},"items":[{"metadata":{"name":"p)", page,
            R"(","namespace":"d"}}]})"));
  });
  ListPager pager(client_.get(), 1);
  auto all = pager.List(kBg, Resource::Namespaced(kConfigMaps, "d"));
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->items.size(), 3u);
  EXPECT_EQ(all->items[2]->name(), "p2");
  EXPECT_EQ(all->resource_version, "9");
  EXPECT_EQ(pager.pages(), 3);
  for (const auto& r : recorder_.requests()) EXPECT_EQ(r.Query("limit"), "1");
}

TEST_F(RestClientTest, PagerFallsBackToFullListWhenTokenExpires) {
  Serve([](const TestRequest& r, ResponseWriter& w) {
    if (r.Query("continue") == "1") {
      w.Respond(410, StatusBody(410, "Expired",
                                "The provided continue parameter is too old"));
    } else if (r.HasQuery("limit")) {
      w.Respond(
          200,
          R"({"kind":"ConfigMapList","apiVersion":"v1","metadata":{"continue":"1"},"items":[{"metadata":{"name":"a"}}]})");
    } else {
      w.Respond(
          200,
          R"({"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"50"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]})");
    }
  });
  ListPager pager(client_.get(), 1);
  auto all = pager.List(kBg, Resource::Namespaced(kConfigMaps, "d"));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->items.size(), 2u);
  EXPECT_EQ(all->resource_version, "50");
}

TEST_F(RestClientTest, WriteVerbs) {
  Serve([](const TestRequest& r, ResponseWriter& w) {
    if (r.method == "DELETE") {
      w.Respond(
          200,
          R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success"})");
    } else {
      w.Respond(r.method == "POST" ? 201 : 200, kCm);
    }
  });
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  api::ObjectPtr cm = Obj(kCm);

  ASSERT_TRUE(client_
                  ->Create(kBg, Resource::Namespaced(kConfigMaps), *cm,
                           {.dry_run = true, .field_manager = "kcr"})
                  .ok());
  TestRequest r = recorder_.last();
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.path, "/api/v1/namespaces/default/configmaps");
  EXPECT_EQ(r.Query("dryRun"), "All");
  EXPECT_EQ(r.Query("fieldManager"), "kcr");
  EXPECT_EQ(r.Header("content-type"), "application/json");
  EXPECT_EQ(*api::Object::Parse(r.body).value()->Find("/data/a"),
            rapidjson::Value("1"));

  ASSERT_TRUE(client_->Update(kBg, cms, *cm).ok());
  r = recorder_.last();
  EXPECT_EQ(r.method, "PUT");
  EXPECT_EQ(r.path, "/api/v1/namespaces/default/configmaps/cm1");
  EXPECT_FALSE(r.HasQuery("dryRun"));

  ASSERT_TRUE(client_->UpdateStatus(kBg, cms, *cm).ok());
  EXPECT_EQ(recorder_.last().path,
            "/api/v1/namespaces/default/configmaps/cm1/status");

  struct PatchCase {
    PatchType type;
    const char* content_type;
  } patches[] = {
      {PatchType::kMerge, "application/merge-patch+json"},
      {PatchType::kJson, "application/json-patch+json"},
      {PatchType::kStrategicMerge, "application/strategic-merge-patch+json"},
  };
  for (const auto& p : patches) {
    ASSERT_TRUE(
        client_->Patch(kBg, cms, "cm1", p.type, R"({"data":{"b":"2"}})").ok());
    r = recorder_.last();
    EXPECT_EQ(r.method, "PATCH");
    EXPECT_EQ(r.Header("content-type"), p.content_type);
    EXPECT_EQ(r.body, R"({"data":{"b":"2"}})");
    EXPECT_FALSE(r.HasQuery("force"));
  }
  ASSERT_TRUE(client_
                  ->Patch(kBg, cms, "cm1", PatchType::kApply,
                          "data:\n  b: '2'\n",
                          {.field_manager = "kcr-ctl", .force = true})
                  .ok());
  r = recorder_.last();
  EXPECT_EQ(r.Header("content-type"), "application/apply-patch+yaml");
  EXPECT_EQ(r.Query("fieldManager"), "kcr-ctl");
  EXPECT_EQ(r.Query("force"), "true");
  ASSERT_TRUE(
      client_->Patch(kBg, cms, "cm1", PatchType::kMerge, "{}", {}, "status")
          .ok());
  EXPECT_EQ(recorder_.last().path,
            "/api/v1/namespaces/default/configmaps/cm1/status");

  DeleteOptions d;
  d.grace_period_seconds = 0;
  d.propagation_policy = "Foreground";
  d.preconditions.uid = "u-1";
  d.preconditions.resource_version = "5";
  d.dry_run = true;
  ASSERT_TRUE(client_->Delete(kBg, cms, "cm1", d).ok());
  r = recorder_.last();
  EXPECT_EQ(r.method, "DELETE");
  EXPECT_EQ(r.path, "/api/v1/namespaces/default/configmaps/cm1");
  rapidjson::Document body;
  body.Parse(r.body.c_str());
  EXPECT_STREQ(body["kind"].GetString(), "DeleteOptions");
  EXPECT_EQ(body["gracePeriodSeconds"].GetInt(), 0);
  EXPECT_STREQ(body["propagationPolicy"].GetString(), "Foreground");
  EXPECT_STREQ(body["preconditions"]["uid"].GetString(), "u-1");
  EXPECT_STREQ(body["preconditions"]["resourceVersion"].GetString(), "5");
  EXPECT_STREQ(body["dryRun"][0].GetString(), "All");

  ListOptions sel;
  sel.label_selector = "app=web";
  ASSERT_TRUE(client_
                  ->DeleteCollection(kBg, cms,
                                     {.propagation_policy = "Background"}, sel)
                  .ok());
  r = recorder_.last();
  EXPECT_EQ(r.method, "DELETE");
  EXPECT_EQ(r.path, "/api/v1/namespaces/default/configmaps");
  EXPECT_EQ(r.Query("labelSelector"), "app=web");
}

TEST_F(RestClientTest, BadArgumentsFailBeforeSending) {
  Serve([](const TestRequest&, ResponseWriter& w) { w.Respond(200, kCm); });
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  EXPECT_EQ(
      client_->Patch(kBg, cms, "cm1", PatchType::kApply, "{}").status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      client_->Patch(kBg, cms, "cm1", PatchType::kMerge, "{}", {.force = true})
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(client_->Get(kBg, cms, "a/b").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      client_->Get(kBg, Resource::Namespaced(kConfigMaps), "x").status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      client_
          ->Create(kBg, Resource::Namespaced(kConfigMaps, "other"), *Obj(kCm))
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(recorder_.count(), 0u);
}

TEST_F(RestClientTest, ServerErrorsKeepReasonAndMessage) {
  Serve([](const TestRequest& r, ResponseWriter& w) {
    if (r.method == "GET") {
      w.Respond(
          404, StatusBody(404, "NotFound", "configmaps \\\"cm1\\\" not found"));
    } else if (r.method == "POST") {
      w.Respond(409, StatusBody(409, "AlreadyExists",
                                "configmaps \\\"cm1\\\" already exists"));
    } else {
      w.Respond(409, StatusBody(409, "Conflict",
                                "Operation cannot be fulfilled on configmaps "
                                "\\\"cm1\\\": the object has been modified"));
    }
  });
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  auto got = client_->Get(kBg, cms, "cm1");
  EXPECT_TRUE(api::IsNotFound(got.status()));
  EXPECT_EQ(got.status().message(), "configmaps \"cm1\" not found");
  EXPECT_TRUE(
      api::IsAlreadyExists(client_->Create(kBg, cms, *Obj(kCm)).status()));
  auto updated = client_->Update(kBg, cms, *Obj(kCm));
  EXPECT_TRUE(api::IsConflict(updated.status()));
  EXPECT_FALSE(api::IsAlreadyExists(updated.status()));
  // 4xx are not retried.
  EXPECT_EQ(recorder_.count(), 3u);
}

TEST_F(RestClientTest, TooManyRequestsHonoursRetryAfter) {
  std::atomic<int> calls{0};
  Serve([&calls](const TestRequest&, ResponseWriter& w) {
    if (calls++ < 2) {
      w.Respond(429, StatusBody(429, "TooManyRequests", "slow down"),
                {{"Retry-After", "7"}});
    } else {
      w.Respond(201, kCm);
    }
  });
  // Even a POST: the server did not act on a 429.
  auto created =
      client_->Create(kBg, Resource::Namespaced(kConfigMaps), *Obj(kCm));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(recorder_.count(), 3u);
  EXPECT_THAT(sleeps(),
              ::testing::ElementsAre(absl::Seconds(7), absl::Seconds(7)));
  // Its connection threads use the locals above: stop it before they go.
  server_.reset();
}

TEST_F(RestClientTest, TooManyRequestsGivesUpAfterTenRetries) {
  Config config;
  config.burst = 100;  // only retry waits, no rate-limit waits
  Serve(
      [](const TestRequest&, ResponseWriter& w) {
        w.Respond(429, StatusBody(429, "TooManyRequests", "slow down"));
      },
      config);
  auto got = client_->Get(kBg, Resource::Namespaced(kConfigMaps, "d"), "x");
  EXPECT_TRUE(api::IsTooManyRequests(got.status()));
  EXPECT_EQ(recorder_.count(), 11u);
  EXPECT_EQ(sleeps().size(), 10u);
  EXPECT_EQ(sleeps()[0], absl::Seconds(1));  // no Retry-After: the default
}

TEST_F(RestClientTest, ServerErrorsRetriedForIdempotentVerbsOnly) {
  std::atomic<int> calls{0};
  Serve([&calls](const TestRequest& r, ResponseWriter& w) {
    if (r.method == "POST" || calls++ < 2) {
      w.Respond(500, StatusBody(500, "InternalError", "injected"));
    } else {
      w.Respond(200, kCm);
    }
  });
  auto got =
      client_->Get(kBg, Resource::Namespaced(kConfigMaps, "default"), "cm1");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(recorder_.count(), 3u);
  EXPECT_THAT(sleeps(), ::testing::ElementsAre(absl::Milliseconds(200),
                                               absl::Milliseconds(400)));
  auto created =
      client_->Create(kBg, Resource::Namespaced(kConfigMaps), *Obj(kCm));
  EXPECT_TRUE(api::IsInternalError(created.status()));
  EXPECT_EQ(recorder_.count(), 4u);
  // Its connection threads use the locals above: stop it before they go.
  server_.reset();
}

TEST_F(RestClientTest, PersistentServerErrorsGiveUp) {
  Serve([](const TestRequest&, ResponseWriter& w) {
    w.Respond(503, "upstream down");
  });
  auto got = client_->Get(kBg, Resource::Namespaced(kConfigMaps, "d"), "x");
  EXPECT_TRUE(api::IsServiceUnavailable(got.status()));
  EXPECT_EQ(recorder_.count(), 5u);  // 1 + max_backoff_retries
}

TEST_F(RestClientTest, TransportErrorIsUnavailableWithCause) {
  Config config;
  {
    auto server =
        ScriptedServer::Start([](const TestRequest&, ResponseWriter&) {});
    config.host = (*server)->url();
  }  // closed: connections are refused
  MakeClient(config);
  auto got = client_->Get(kBg, Resource::Namespaced(kConfigMaps, "d"), "x");
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(got.status().message()), HasSubstr(config.host));
  EXPECT_FALSE(api::GetStatusError(got.status()).has_value());
  EXPECT_EQ(sleeps().size(), 4u);  // retried as a GET
  auto created =
      client_->Create(kBg, Resource::Namespaced(kConfigMaps), *Obj(kCm));
  EXPECT_EQ(created.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(sleeps().size(), 4u);  // a POST is not
}

TEST_F(RestClientTest, ClientSideRateLimit) {
  Config config;
  config.qps = 5;
  config.burst = 2;
  Serve([](const TestRequest&, ResponseWriter& w) { w.Respond(200, kCm); },
        config);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(
        client_->Get(kBg, Resource::Namespaced(kConfigMaps, "default"), "cm1")
            .ok());
  }
  // The fake clock stands still: the 3rd and 4th requests wait 200 ms and
  // 400 ms for their tokens.
  EXPECT_THAT(sleeps(), ::testing::ElementsAre(absl::Milliseconds(200),
                                               absl::Milliseconds(400)));
}

TEST_F(RestClientTest, DefaultRateLimitIsClientGos) {
  Config defaults;
  EXPECT_EQ(defaults.qps, 5);
  EXPECT_EQ(defaults.burst, 10);
  Serve([](const TestRequest&, ResponseWriter& w) { w.Respond(200, kCm); },
        defaults);
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE(
        client_->Get(kBg, Resource::Namespaced(kConfigMaps, "default"), "cm1")
            .ok());
  }
  // A burst of ten, then one every 200 ms (the fake clock stands still).
  EXPECT_THAT(sleeps(), ::testing::ElementsAre(absl::Milliseconds(200),
                                               absl::Milliseconds(400)));
}

TEST_F(RestClientTest, PerRequestTimeout) {
  Notification release;
  Config config;
  config.timeout = absl::Milliseconds(300);
  Serve(
      [&release](const TestRequest&, ResponseWriter& w) {
        release.WaitForNotificationWithTimeout(absl::Seconds(20));
        w.Respond(200, kCm);
      },
      config);
  auto created =
      client_->Create(kBg, Resource::Namespaced(kConfigMaps), *Obj(kCm));
  release.Notify();
  server_.reset();  // joins the handler before `release` goes away
  EXPECT_EQ(created.status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(RestClientTest, BasicAuthAndImpersonation) {
  Config config;
  config.username = "admin";
  config.password = "pw";
  config.impersonate = "jane";
  config.impersonate_groups = {"devs"};
  Serve([](const TestRequest&, ResponseWriter& w) { w.Respond(200, kCm); },
        config);
  ASSERT_TRUE(
      client_->Get(kBg, Resource::Namespaced(kConfigMaps, "default"), "cm1")
          .ok());
  TestRequest r = recorder_.last();
  EXPECT_EQ(r.Header("authorization"),
            "Basic " + absl::Base64Escape("admin:pw"));
  EXPECT_EQ(r.Header("impersonate-user"), "jane");
  EXPECT_EQ(r.Header("impersonate-group"), "devs");
}

// A server that accepts exactly one token, which the test changes.
class TokenServer {
 public:
  void Accept(const std::string& token) {
    MutexLock lock(&mu_);
    token_ = token;
  }
  void Handle(const TestRequest& r, ResponseWriter& w) {
    std::string want;
    {
      MutexLock lock(&mu_);
      want = "Bearer " + token_;
    }
    if (r.Header("authorization") == want) {
      w.Respond(200, kCm);
    } else {
      w.Respond(401, StatusBody(401, "Unauthorized", "Unauthorized"));
    }
  }

 private:
  Mutex mu_;
  std::string token_ ABSL_GUARDED_BY(mu_);
};

TEST_F(RestClientTest, TokenFileRotation) {
  const std::string token_path = MakeTempDir("sa") + "/token";
  WriteFile(token_path, "one\n");
  TokenServer tokens;
  tokens.Accept("one");
  Config config;
  config.bearer_token_file = token_path;
  Serve([&tokens](const TestRequest& r,
                  ResponseWriter& w) { tokens.Handle(r, w); },
        config);
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  ASSERT_TRUE(client_->Get(kBg, cms, "cm1").ok());
  EXPECT_EQ(recorder_.last().Header("authorization"), "Bearer one");

  // The kubelet rotates the token; both stay valid for a while. Within the
  // minute the old one is still sent; after it, the new one.
  WriteFile(token_path, "two\n");
  clock_.Advance(absl::Seconds(30));
  ASSERT_TRUE(client_->Get(kBg, cms, "cm1").ok());
  EXPECT_EQ(recorder_.last().Header("authorization"), "Bearer one");
  clock_.Advance(absl::Seconds(31));
  tokens.Accept("two");
  ASSERT_TRUE(client_->Get(kBg, cms, "cm1").ok());
  EXPECT_EQ(recorder_.last().Header("authorization"), "Bearer two");

  // The server stops accepting "two" at once: the 401 forces a re-read and
  // the request is sent again with the new token.
  WriteFile(token_path, "three\n");
  tokens.Accept("three");
  size_t before = recorder_.count();
  ASSERT_TRUE(client_->Get(kBg, cms, "cm1").ok());
  auto requests = recorder_.requests();
  ASSERT_EQ(requests.size(), before + 2);
  EXPECT_EQ(requests[before].Header("authorization"), "Bearer two");
  EXPECT_EQ(requests[before + 1].Header("authorization"), "Bearer three");

  // A 401 with no newer token is returned as is.
  tokens.Accept("four");
  auto got = client_->Get(kBg, cms, "cm1");
  EXPECT_TRUE(api::IsUnauthorized(got.status()));
}

TEST_F(RestClientTest, ExecPluginReRunOn401) {
  const std::string state = MakeTempDir("exec");
  TokenServer tokens;
  tokens.Accept("exec-token-1");
  Config config;
  config.exec = ExecConfig{};
  config.exec->api_version = "client.authentication.k8s.io/v1";
  config.exec->command = TestdataPath("exec_plugin.sh");
  config.exec->args = {state, "ok"};
  Serve([&tokens](const TestRequest& r,
                  ResponseWriter& w) { tokens.Handle(r, w); },
        config);
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  ASSERT_TRUE(client_->Get(kBg, cms, "cm1").ok());
  ASSERT_TRUE(client_->Get(kBg, cms, "cm1").ok());
  EXPECT_EQ(ReadFileOrDie(state + "/count"), "1\n");
  tokens.Accept("exec-token-2");
  ASSERT_TRUE(client_->Get(kBg, cms, "cm1").ok());
  EXPECT_EQ(ReadFileOrDie(state + "/count"), "2\n");
  EXPECT_EQ(recorder_.last().Header("authorization"), "Bearer exec-token-2");
}

TEST_F(RestClientTest, MetricsCountEveryAttempt) {
  struct Recorded : MetricsProvider {
    struct Result : RequestResultMetric {
      explicit Result(Recorded* p) : p(p) {}
      void Increment(std::string_view code, std::string_view method,
                     std::string_view host) override {
        MutexLock lock(&p->mu);
        p->results.push_back(std::string(code) + " " + std::string(method) +
                             " " + std::string(host));
      }
      Recorded* p;
    };
    struct Latency : RequestLatencyMetric {
      explicit Latency(Recorded* p) : p(p) {}
      void Observe(std::string_view verb, std::string_view host,
                   absl::Duration) override {
        MutexLock lock(&p->mu);
        p->latencies.push_back(std::string(verb) + " " + std::string(host));
      }
      Recorded* p;
    };
    std::unique_ptr<RequestResultMetric> NewRequestResultMetric() override {
      return std::make_unique<Result>(this);
    }
    std::unique_ptr<RequestLatencyMetric> NewRequestLatencyMetric() override {
      return std::make_unique<Latency>(this);
    }
    Mutex mu;
    std::vector<std::string> results;
    std::vector<std::string> latencies;
  } provider;
  metrics_ = &provider;
  std::atomic<int> calls{0};
  Serve([&calls](const TestRequest&, ResponseWriter& w) {
    if (calls++ == 0) {
      w.Respond(500, "boom");
    } else {
      w.Respond(200, kCm);
    }
  });
  ASSERT_TRUE(
      client_->Get(kBg, Resource::Namespaced(kConfigMaps, "default"), "cm1")
          .ok());
  const std::string host = absl::StrCat("127.0.0.1:", server_->port());
  MutexLock lock(&provider.mu);
  EXPECT_THAT(provider.results,
              ::testing::ElementsAre("500 GET " + host, "200 GET " + host));
  EXPECT_THAT(provider.latencies,
              ::testing::ElementsAre("GET " + host, "GET " + host));
  // Its connection threads use the locals above: stop it before they go.
  server_.reset();
}

// --- ListEach: a list body decoded as it streams in ---

constexpr char kListHead[] =
    R"({"kind":"ConfigMapList","apiVersion":"v1",)"
    R"("metadata":{"resourceVersion":"9"},"items":[)"
    R"({"metadata":{"name":"a","namespace":"default"}},)"
    R"({"metadata":{"name":"b","namespace":"default"}},)";
constexpr char kListTail[] =
    R"({"metadata":{"name":"c","namespace":"default"}}]})";

TEST_F(RestClientTest, ListEachHandsItemsOverAsTheyArrive) {
  Notification got_two;
  Notification server_done;
  bool waited = false;
  Serve([&](const TestRequest&, ResponseWriter& w) {
    w.StartChunks(200);
    w.WriteChunk(kListHead);
    // The rest only once the client has the first two items: a client that
    // waited for the whole body would never see them.
    waited = got_two.WaitForNotificationWithTimeout(absl::Seconds(30));
    w.WriteChunk(kListTail);
    w.EndChunks();
    server_done.Notify();
  });
  std::vector<std::string> names;
  auto meta =
      client_->ListEach(kBg, Resource::Namespaced(kConfigMaps, "default"), {},
                        [&](api::ObjectPtr item) {
                          EXPECT_EQ(item->kind(), "ConfigMap");
                          names.push_back(std::string(item->name()));
                          if (names.size() == 2) got_two.Notify();
                          return absl::OkStatus();
                        });
  ASSERT_TRUE(meta.ok()) << meta.status();
  server_done.WaitForNotification();
  EXPECT_TRUE(waited);
  EXPECT_THAT(names, ::testing::ElementsAre("a", "b", "c"));
  EXPECT_EQ(meta->resource_version, "9");
  EXPECT_EQ(meta->kind, "ConfigMapList");
  // Its connection threads use the locals above: stop it before they go.
  server_.reset();
}

TEST_F(RestClientTest, ListEachCutConnectionIsDataLoss) {
  Serve([](const TestRequest&, ResponseWriter& w) {
    w.StartChunks(200);
    w.WriteChunk(absl::StrCat(kListHead, R"({"metadata":{"na)"));
    // Returns without the last chunk: the connection closes mid-item.
  });
  std::vector<std::string> names;
  auto meta =
      client_->ListEach(kBg, Resource::Namespaced(kConfigMaps, "default"), {},
                        [&](api::ObjectPtr item) {
                          names.push_back(std::string(item->name()));
                          return absl::OkStatus();
                        });
  ASSERT_FALSE(meta.ok());
  EXPECT_EQ(meta.status().code(), absl::StatusCode::kDataLoss) << meta.status();
  EXPECT_THAT(std::string(meta.status().message()),
              HasSubstr("list response ended early"));
  EXPECT_THAT(names, ::testing::ElementsAre("a", "b"));
  // List says the same, with no items.
  auto list = client_->List(kBg, Resource::Namespaced(kConfigMaps, "default"));
  EXPECT_EQ(list.status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(RestClientTest, ListEachCancelledMidList) {
  Notification release;
  Serve([&release](const TestRequest&, ResponseWriter& w) {
    w.StartChunks(200);
    w.WriteChunk(kListHead);
    release.WaitForNotificationWithTimeout(absl::Seconds(30));
  });
  auto [ctx, cancel] = WithCancel(kBg);
  int items = 0;
  auto meta =
      client_->ListEach(ctx, Resource::Namespaced(kConfigMaps, "default"), {},
                        [&, cancel = cancel](api::ObjectPtr) {
                          if (++items == 2) cancel();
                          return absl::OkStatus();
                        });
  // Returns while the server still holds the body open.
  const bool server_released = release.HasBeenNotified();
  release.Notify();
  EXPECT_FALSE(server_released);
  ASSERT_FALSE(meta.ok());
  EXPECT_EQ(meta.status().code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(std::string(meta.status().message()),
              HasSubstr("GET /api/v1/namespaces/default/configmaps: context "
                        "canceled"));
  EXPECT_EQ(items, 2);
  server_.reset();  // before `release` goes
}

TEST_F(RestClientTest, ListEachSlowsTheServerToTheCallersPace) {
  // 40 MB of items; the caller holds the first item until the server has
  // sent 24 MB or two seconds pass. With flow control the server stalls
  // long before: the client reads no more than ~1 MiB ahead of its decoder
  // (plus 16 decoded batches and the sockets' buffers).
  constexpr int kItems = 4000;
  constexpr int64_t kStalled = 24 << 20;
  std::atomic<int64_t> sent{0};
  Notification server_sent_a_lot;
  Serve([&](const TestRequest&, ResponseWriter& w) {
    w.StartChunks(200);
    std::string chunk = R"({"kind":"ConfigMapList","apiVersion":"v1",)"
                        R"("metadata":{"resourceVersion":"9"},"items":[)";
    const std::string value(10 << 10, 'x');
    for (int i = 0; i < kItems; ++i) {
      absl::StrAppend(&chunk, i > 0 ? "," : "", R"({"metadata":{"name":"cm-)",
                      i, R"(","namespace":"default"},"data":{"k":")", value,
                      R"("}})");
      if (chunk.size() >= (64 << 10) || i == kItems - 1) {
        if (i == kItems - 1) chunk += "]}";
        if (!w.WriteChunk(chunk)) return;
        if (sent.fetch_add(static_cast<int64_t>(chunk.size())) +
                    static_cast<int64_t>(chunk.size()) >=
                kStalled &&
            !server_sent_a_lot.HasBeenNotified()) {
          server_sent_a_lot.Notify();
        }
        chunk.clear();
      }
    }
    w.EndChunks();
  });
  int items = 0;
  int64_t sent_while_held = 0;
  auto meta = client_->ListEach(
      kBg, Resource::Namespaced(kConfigMaps, "default"), {},
      [&](api::ObjectPtr) {
        if (items++ == 0) {
          server_sent_a_lot.WaitForNotificationWithTimeout(absl::Seconds(2));
          sent_while_held = sent.load();
        }
        return absl::OkStatus();
      });
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(items, kItems);
  EXPECT_LT(sent_while_held, kStalled);
  server_.reset();  // before the locals go
}

TEST_F(RestClientTest, ListEachStopsAtTheCallersError) {
  Serve([](const TestRequest&, ResponseWriter& w) {
    w.Respond(200, absl::StrCat(kListHead, kListTail));
  });
  int items = 0;
  auto meta =
      client_->ListEach(kBg, Resource::Namespaced(kConfigMaps, "default"), {},
                        [&](api::ObjectPtr) {
                          ++items;
                          return absl::AbortedError("stop here");
                        });
  EXPECT_EQ(meta.status(), absl::AbortedError("stop here"));
  EXPECT_EQ(items, 1);
}

TEST_F(RestClientTest, ListEachErrorAnswerIsTheServersStatus) {
  Serve([](const TestRequest&, ResponseWriter& w) {
    w.Respond(410, StatusBody(410, "Expired", "too old resource version"));
  });
  auto meta =
      client_->ListEach(kBg, Resource::Namespaced(kConfigMaps, "default"), {},
                        [](api::ObjectPtr) { return absl::OkStatus(); });
  ASSERT_FALSE(meta.ok());
  EXPECT_TRUE(api::IsResourceExpired(meta.status())) << meta.status();
  EXPECT_THAT(std::string(meta.status().message()),
              HasSubstr("too old resource version"));
}

TEST_F(RestClientTest, MetadataOnlyAsksForPartialObjectMetadata) {
  Serve([](const TestRequest& r, ResponseWriter& w) {
    if (r.HasQuery("watch")) {
      w.StartChunks(200);
      w.EndChunks();
    } else if (absl::EndsWith(r.path, "/cm1")) {
      w.Respond(200, kCm);
    } else {
      w.Respond(200, absl::StrCat(kListHead, kListTail));
    }
  });
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  ASSERT_TRUE(client_->List(kBg, cms, {.metadata_only = true}).ok());
  EXPECT_EQ(recorder_.last().Header("accept"),
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
            "application/json");
  ASSERT_TRUE(client_->Get(kBg, cms, "cm1", {.metadata_only = true}).ok());
  EXPECT_EQ(recorder_.last().Header("accept"),
            "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,"
            "application/json");
  auto watch = client_->Watch(kBg, cms, {.metadata_only = true});
  ASSERT_TRUE(watch.ok()) << watch.status();
  WatchEvent e;
  EXPECT_FALSE((*watch)->Next(&e));
  EXPECT_EQ(recorder_.last().Header("accept"),
            "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,"
            "application/json");
  ASSERT_TRUE(client_->List(kBg, cms).ok());
  EXPECT_EQ(recorder_.last().Header("accept"), "application/json");
}

// --- Watch ---

constexpr char kEvents[] =
    "{\"type\":\"ADDED\",\"object\":{\"kind\":\"ConfigMap\",\"apiVersion\":"
    "\"v1\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}}\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"ConfigMap\",\"apiVersion\":"
    "\"v1\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"2\"}}}\n"
    "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ConfigMap\",\"apiVersion\":"
    "\"v1\",\"metadata\":{\"resourceVersion\":\"3\"}}}\n"
    "{\"type\":\"DELETED\",\"object\":{\"kind\":\"ConfigMap\",\"apiVersion\":"
    "\"v1\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"4\"}}}\n";

TEST_F(RestClientTest, WatchStreamsEventsSplitAcrossChunks) {
  Serve([](const TestRequest&, ResponseWriter& w) {
    w.StartChunks(200);
    std::string_view all(kEvents);
    // Chunks of 7 bytes: events split everywhere, several per chunk never.
    for (size_t i = 0; i < all.size(); i += 7) w.WriteChunk(all.substr(i, 7));
    w.EndChunks();
  });
  ListOptions o;
  o.resource_version = "0";
  o.allow_watch_bookmarks = true;
  o.timeout_seconds = 30;
  o.label_selector = "app=web";
  auto watch =
      client_->Watch(kBg, Resource::Namespaced(kConfigMaps, "default"), o);
  ASSERT_TRUE(watch.ok()) << watch.status();
  std::vector<std::string> got;
  WatchEvent e;
  while ((*watch)->Next(&e)) {
    got.push_back(std::string(EventTypeName(e.type)) + " " +
                  std::string(e.object->resource_version()));
  }
  EXPECT_TRUE((*watch)->status().ok()) << (*watch)->status();
  EXPECT_THAT(got, ::testing::ElementsAre("ADDED 1", "MODIFIED 2", "BOOKMARK 3",
                                          "DELETED 4"));
  TestRequest r = recorder_.last();
  EXPECT_EQ(r.path, "/api/v1/namespaces/default/configmaps");
  EXPECT_EQ(r.Query("watch"), "true");
  EXPECT_EQ(r.Query("allowWatchBookmarks"), "true");
  EXPECT_EQ(r.Query("resourceVersion"), "0");
  EXPECT_EQ(r.Query("timeoutSeconds"), "30");
  EXPECT_EQ(r.Query("labelSelector"), "app=web");
}

TEST_F(RestClientTest, WatchCarriesVeryLargeObjects) {
  const std::string big(8 << 20, 'x');
  Serve([&big](const TestRequest&, ResponseWriter& w) {
    const std::string event =
        R"({"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"big","managedFields":[{"manager":"m"}]},"data":{"k":")" +
        big + "\"}}}\n";
    w.StartChunks(200);
    for (size_t i = 0; i < event.size(); i += 100000)
      w.WriteChunk(std::string_view(event).substr(i, 100000));
    w.EndChunks();
  });
  ClientOptions options;
  options.parse_options.strip_managed_fields = true;
  auto client = NewRestClient(Config{.host = server_->url()}, options);
  ASSERT_TRUE(client.ok());
  auto watch =
      (*client)->Watch(kBg, Resource::Namespaced(kConfigMaps, "default"), {});
  ASSERT_TRUE(watch.ok()) << watch.status();
  WatchEvent e;
  ASSERT_TRUE((*watch)->Next(&e));
  EXPECT_EQ(e.object->Find("/data/k")->GetStringLength(), big.size());
  EXPECT_EQ(e.object->Find("/metadata/managedFields"), nullptr);
  EXPECT_FALSE((*watch)->Next(&e));
  EXPECT_TRUE((*watch)->status().ok()) << (*watch)->status();
}

TEST_F(RestClientTest, WatchErrorEventCarriesStatus) {
  Serve([](const TestRequest&, ResponseWriter& w) {
    w.StartChunks(200);
    w.WriteChunk(
        R"json({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}})json"
        "\n");
    w.EndChunks();
  });
  auto watch =
      client_->Watch(kBg, Resource::Namespaced(kConfigMaps, "default"), {});
  ASSERT_TRUE(watch.ok());
  WatchEvent e;
  ASSERT_TRUE((*watch)->Next(&e));
  EXPECT_EQ(e.type, EventType::kError);
  EXPECT_TRUE(api::IsResourceExpired(e.error));
  EXPECT_FALSE((*watch)->Next(&e));
}

TEST_F(RestClientTest, WatchRejectedIsAnError) {
  Serve([](const TestRequest&, ResponseWriter& w) {
    w.Respond(403, StatusBody(403, "Forbidden", "configmaps is forbidden"));
  });
  auto watch =
      client_->Watch(kBg, Resource::Namespaced(kConfigMaps, "default"), {});
  EXPECT_TRUE(api::IsForbidden(watch.status()));
}

TEST_F(RestClientTest, WatchCutMidEventIsAnError) {
  Serve([](const TestRequest&, ResponseWriter& w) {
    w.StartChunks(200);
    std::string_view all(kEvents);
    w.WriteChunk(all.substr(0, all.find('\n') + 1));
    // Half of the next event, inside a chunk that never ends.
    w.WriteRaw("100\r\n{\"type\":\"MODIFIED\",\"object\":{\"kind\"");
  });
  auto watch =
      client_->Watch(kBg, Resource::Namespaced(kConfigMaps, "default"), {});
  ASSERT_TRUE(watch.ok()) << watch.status();
  WatchEvent e;
  ASSERT_TRUE((*watch)->Next(&e));
  EXPECT_EQ(e.object->name(), "a");
  EXPECT_FALSE((*watch)->Next(&e));
  absl::Status s = (*watch)->status();
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.code() == absl::StatusCode::kDataLoss ||
              s.code() == absl::StatusCode::kUnavailable)
      << s;
}

TEST_F(RestClientTest, WatchSlowsTheServerToTheConsumersPace) {
  // 40 MB of events; the consumer holds the first event until the server
  // has sent 24 MB or two seconds pass. With flow control the server stalls
  // long before: the client reads no more than ~1 MiB of body ahead of its
  // decoder, and decodes a bounded number of events ahead of Next().
  constexpr int kEventsSent = 4000;
  constexpr int64_t kStalled = 24 << 20;
  std::atomic<int64_t> sent{0};
  Notification server_sent_a_lot;
  Serve([&](const TestRequest&, ResponseWriter& w) {
    w.StartChunks(200);
    const std::string value(10 << 10, 'x');
    std::string chunk;
    for (int i = 0; i < kEventsSent; ++i) {
      absl::StrAppend(&chunk,
                      R"({"type":"MODIFIED","object":{"kind":"ConfigMap",)",
                      R"("apiVersion":"v1","metadata":{"name":"cm-)", i,
                      R"(","namespace":"default","resourceVersion":")", i + 1,
                      R"("},"data":{"k":")", value, "\"}}}\n");
      if (chunk.size() >= (64 << 10) || i == kEventsSent - 1) {
        if (!w.WriteChunk(chunk)) return;
        if (sent.fetch_add(static_cast<int64_t>(chunk.size())) +
                    static_cast<int64_t>(chunk.size()) >=
                kStalled &&
            !server_sent_a_lot.HasBeenNotified()) {
          server_sent_a_lot.Notify();
        }
        chunk.clear();
      }
    }
    w.EndChunks();
  });
  auto watch =
      client_->Watch(kBg, Resource::Namespaced(kConfigMaps, "default"), {});
  ASSERT_TRUE(watch.ok()) << watch.status();
  WatchEvent e;
  ASSERT_TRUE((*watch)->Next(&e));
  server_sent_a_lot.WaitForNotificationWithTimeout(absl::Seconds(2));
  const int64_t sent_while_held = sent.load();
  int events = 1;
  while ((*watch)->Next(&e)) {
    ASSERT_EQ(e.object->name(), absl::StrCat("cm-", events));
    ++events;
  }
  EXPECT_TRUE((*watch)->status().ok()) << (*watch)->status();
  EXPECT_EQ(events, kEventsSent);
  EXPECT_LT(sent_while_held, kStalled);
  server_.reset();  // before the locals go
}

TEST_F(RestClientTest, WatchStopInterruptsABlockedRead) {
  Notification server_done;
  Notification release;
  // However the test ends, the handler is let go and joined before the
  // notifications it uses go away.
  absl::Cleanup join_server = [&] {
    if (!release.HasBeenNotified()) release.Notify();
    server_.reset();
  };
  Serve([&](const TestRequest&, ResponseWriter& w) {
    w.StartChunks(200);
    w.WriteChunk(std::string_view(kEvents).substr(
        0, std::string_view(kEvents).find('\n') + 1));
    // Hold the stream open, silent, as an idle watch is, until the test
    // lets go.
    release.WaitForNotification();
    server_done.Notify();
  });
  auto watch =
      client_->Watch(kBg, Resource::Namespaced(kConfigMaps, "default"), {});
  ASSERT_TRUE(watch.ok()) << watch.status();
  WatchEvent e;
  ASSERT_TRUE((*watch)->Next(&e));
  Notification returned;
  std::thread reader([&] {
    WatchEvent e2;
    EXPECT_FALSE((*watch)->Next(&e2));
    returned.Notify();
  });
  (*watch)->Stop();
  reader.join();  // a Stop that did not interrupt the read would hang here
  EXPECT_TRUE(returned.HasBeenNotified());
  EXPECT_EQ((*watch)->status().code(), absl::StatusCode::kCancelled);
  // Destroying the stream joins its reader thread, which was blocked in a
  // read of the silent connection: Stop closed it, so the read ended
  // while the server still held the stream open.
  watch->reset();
  EXPECT_FALSE(server_done.HasBeenNotified());
  release.Notify();
  server_done.WaitForNotification();
}

// --- Cancellation ---
//
// Each test cancels a call where it blocks and checks the status code. No
// clock measures "promptly": what the call waited for would have ended it
// differently (a server that answers 200 or ends the stream once the test
// lets go) or never (a Retry-After or backoff on a fake clock that does not
// move, which Bazel's timeout fails), so a slow machine changes nothing.

// Runs `call` on a thread; Wait() returns its status once it is back.
class Call {
 public:
  explicit Call(std::function<absl::Status()> call)
      : thread_([this, call = std::move(call)] {
          absl::Status s = call();
          MutexLock lock(&mu_);
          status_ = std::move(s);
          done_ = true;
        }) {}
  ~Call() { thread_.join(); }

  // The status, once the call is back.
  absl::Status Wait() {
    MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&done_));
    return status_;
  }

 private:
  Mutex mu_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

TEST_F(RestClientTest, CancelEndsARequestInFlight) {
  Notification received;
  Notification release;
  Serve([&](const TestRequest& r, ResponseWriter& w) {
    if (r.Query("resourceVersion") != "slow") {
      w.Respond(200, kCm);
      return;
    }
    if (!received.HasBeenNotified()) received.Notify();
    release.WaitForNotificationWithTimeout(absl::Seconds(20));
    w.Respond(200, kCm);
  });
  auto [ctx, cancel] = WithCancel(kBg);
  Call call([&, ctx = ctx] {
    return client_
        ->Get(ctx, Resource::Namespaced(kConfigMaps, "default"), "cm1",
              {.resource_version = "slow"})
        .status();
  });
  received.WaitForNotification();  // the request is on the server
  cancel();
  const absl::Status got = call.Wait();
  EXPECT_EQ(got.code(), absl::StatusCode::kCancelled) << got;
  EXPECT_THAT(got.message(), HasSubstr("context canceled"));
  EXPECT_FALSE(api::GetStatusError(got).has_value());
  release.Notify();
  // The client goes on working.
  EXPECT_TRUE(
      client_->Get(kBg, Resource::Namespaced(kConfigMaps, "default"), "cm1")
          .ok());
  server_.reset();  // joins the handler before the notifications go away
}

TEST_F(RestClientTest, DeadlineEndsARequestInFlight) {
  Notification release;
  Serve([&](const TestRequest&, ResponseWriter& w) {
    release.WaitForNotificationWithTimeout(absl::Seconds(20));
    w.Respond(200, kCm);
  });
  // The deadline is on the real clock; the client's own clock is fake.
  auto [ctx, cancel] = WithTimeout(kBg, absl::Milliseconds(100), Clock::Real());
  const absl::Status got =
      client_->Create(ctx, Resource::Namespaced(kConfigMaps), *Obj(kCm))
          .status();
  EXPECT_EQ(got.code(), absl::StatusCode::kDeadlineExceeded) << got;
  EXPECT_THAT(got.message(), HasSubstr("context deadline exceeded"));
  cancel();
  release.Notify();
  server_.reset();
}

TEST_F(RestClientTest, DoneContextSendsNothing) {
  Serve([](const TestRequest&, ResponseWriter& w) { w.Respond(200, kCm); });
  auto [ctx, cancel] = WithCancel(kBg);
  cancel();
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  EXPECT_EQ(client_->Get(ctx, cms, "cm1").status().code(),
            absl::StatusCode::kCancelled);
  EXPECT_EQ(client_->List(ctx, cms).status().code(),
            absl::StatusCode::kCancelled);
  EXPECT_EQ(client_->Watch(ctx, cms).status().code(),
            absl::StatusCode::kCancelled);
  EXPECT_EQ(client_->Create(ctx, cms, *Obj(kCm)).status().code(),
            absl::StatusCode::kCancelled);
  EXPECT_EQ(client_->Update(ctx, cms, *Obj(kCm)).status().code(),
            absl::StatusCode::kCancelled);
  EXPECT_EQ(client_->UpdateStatus(ctx, cms, *Obj(kCm)).status().code(),
            absl::StatusCode::kCancelled);
  EXPECT_EQ(
      client_->Patch(ctx, cms, "cm1", PatchType::kMerge, "{}").status().code(),
      absl::StatusCode::kCancelled);
  EXPECT_EQ(client_->Delete(ctx, cms, "cm1").code(),
            absl::StatusCode::kCancelled);
  EXPECT_EQ(client_->DeleteCollection(ctx, cms, {}, {}).code(),
            absl::StatusCode::kCancelled);
  EXPECT_EQ(client_->GetRaw(ctx, "/version").status().code(),
            absl::StatusCode::kCancelled);
  ListPager pager(client_.get(), 1);
  EXPECT_EQ(pager.List(ctx, cms).status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(recorder_.count(), 0u);
}

TEST_F(RestClientTest, CancelEndsTheRetryAfterSleep) {
  record_sleeps_ = false;
  Serve([](const TestRequest&, ResponseWriter& w) {
    w.Respond(429, StatusBody(429, "TooManyRequests", "slow down"),
              {{"Retry-After", "30"}});
  });
  auto [ctx, cancel] = WithCancel(kBg);
  Call call([&, ctx = ctx] {
    return client_->Create(ctx, Resource::Namespaced(kConfigMaps), *Obj(kCm))
        .status();
  });
  clock_.BlockUntilTimers(
      1);  // asleep for the Retry-After (fake time stands still)
  cancel();
  const absl::Status got = call.Wait();
  EXPECT_EQ(got.code(), absl::StatusCode::kCancelled) << got;
  EXPECT_EQ(recorder_.count(), 1u);  // not retried
  EXPECT_EQ(clock_.ArmedTimers(), 0);
}

TEST_F(RestClientTest, RetryAfterSleepsOnTheClientsClock) {
  record_sleeps_ = false;
  std::atomic<int> calls{0};
  Serve([&](const TestRequest&, ResponseWriter& w) {
    if (calls++ == 0) {
      w.Respond(429, StatusBody(429, "TooManyRequests", "slow down"),
                {{"Retry-After", "30"}});
    } else {
      w.Respond(200, kCm);
    }
  });
  Call call([&] {
    return client_
        ->Get(kBg, Resource::Namespaced(kConfigMaps, "default"), "cm1")
        .status();
  });
  clock_.BlockUntilTimers(1);
  clock_.Advance(absl::Seconds(29));
  EXPECT_EQ(recorder_.count(), 1u);
  clock_.Advance(absl::Seconds(1));
  EXPECT_TRUE(call.Wait().ok());
  EXPECT_EQ(recorder_.count(), 2u);
  // Its connection threads use the locals above: stop it before they go.
  server_.reset();
}

TEST_F(RestClientTest, DeadlineEndsTheBackoffSleep) {
  record_sleeps_ = false;
  Serve([](const TestRequest&, ResponseWriter& w) {
    w.Respond(500, StatusBody(500, "InternalError", "boom"));
  });
  auto [ctx, cancel] = WithTimeout(kBg, absl::Milliseconds(500), &clock_);
  Call call([&, ctx = ctx] {
    return client_
        ->Get(ctx, Resource::Namespaced(kConfigMaps, "default"), "cm1")
        .status();
  });
  clock_.BlockUntilTimers(2);  // the deadline, and the 200 ms backoff
  clock_.Advance(absl::Milliseconds(200));
  clock_.BlockUntilTimers(2);  // the deadline, and the 400 ms backoff
  EXPECT_EQ(recorder_.count(), 2u);
  clock_.Advance(absl::Milliseconds(300));  // the deadline, mid-backoff
  const absl::Status got = call.Wait();
  EXPECT_EQ(got.code(), absl::StatusCode::kDeadlineExceeded) << got;
  EXPECT_EQ(recorder_.count(), 2u);
  cancel();
}

TEST_F(RestClientTest, CancelEndsTheRateLimiterWait) {
  record_sleeps_ = false;
  Config config;
  config.qps = 1;
  config.burst = 1;
  Serve([](const TestRequest&, ResponseWriter& w) { w.Respond(200, kCm); },
        config);
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  ASSERT_TRUE(client_->Get(kBg, cms, "cm1").ok());  // the burst
  auto [ctx, cancel] = WithCancel(kBg);
  Call call([&, ctx = ctx] { return client_->Get(ctx, cms, "cm1").status(); });
  clock_.BlockUntilTimers(1);  // waiting 1 s for a token
  cancel();
  EXPECT_EQ(call.Wait().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(recorder_.count(), 1u);

  // A wait that would outlast the deadline ends at once.
  auto [short_ctx, cancel_short] =
      WithTimeout(kBg, absl::Milliseconds(500), &clock_);
  const absl::Status got = client_->Get(short_ctx, cms, "cm1").status();
  EXPECT_EQ(got.code(), absl::StatusCode::kDeadlineExceeded) << got;
  EXPECT_FALSE(short_ctx.done());
  EXPECT_EQ(recorder_.count(), 1u);
  cancel_short();
}

TEST_F(RestClientTest, NegativeQpsTurnsThrottlingOff) {
  record_sleeps_ = false;
  Config config;
  config.qps = -1;
  config.burst = 0;
  // NewRestClient (in Serve) accepts it: ValidateConfig does.
  Serve([](const TestRequest&, ResponseWriter& w) { w.Respond(200, kCm); },
        config);
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(
        client_->Get(kBg, Resource::Namespaced(kConfigMaps, "default"), "cm1")
            .ok());
  }
  // The fake clock never moved and nothing waited on it.
  EXPECT_EQ(clock_.ArmedTimers(), 0);
  EXPECT_EQ(recorder_.count(), 50u);
}

TEST_F(RestClientTest, WatchWithoutEventsEndsWithItsContext) {
  Notification release;
  Serve([&](const TestRequest&, ResponseWriter& w) {
    w.StartChunks(200);
    // An idle watch: headers, then silence.
    release.WaitForNotificationWithTimeout(absl::Seconds(20));
  });
  const Resource cms = Resource::Namespaced(kConfigMaps, "default");
  auto [watch_ctx, cancel_watch] = WithCancel(kBg);
  auto watch = client_->Watch(watch_ctx, cms);
  ASSERT_TRUE(watch.ok()) << watch.status();
  Call call([&] {
    WatchEvent e;
    EXPECT_FALSE((*watch)->Next(&e));
    return (*watch)->status();
  });
  cancel_watch();
  EXPECT_EQ(call.Wait().code(), absl::StatusCode::kCancelled);
  WatchEvent e;
  EXPECT_FALSE((*watch)->Next(&e));

  // Next's own context: here a deadline, which ends the stream.
  auto second = client_->Watch(kBg, cms);
  ASSERT_TRUE(second.ok()) << second.status();
  auto [next_ctx, cancel_next] =
      WithTimeout(kBg, absl::Milliseconds(50), Clock::Real());
  EXPECT_FALSE((*second)->Next(next_ctx, &e));
  EXPECT_EQ((*second)->status().code(), absl::StatusCode::kDeadlineExceeded);
  cancel_next();
  watch->reset();
  second->reset();
  release.Notify();
  server_.reset();
}

// --- TLS ---

class TlsTest : public RestClientTest {
 protected:
  void ServeTls(Config config, bool want_client_cert = false) {
    ScriptedServerOptions options;
    options.tls = true;
    options.cert_file = TestdataPath("server.pem");
    options.key_file = TestdataPath("server-key.pem");
    if (want_client_cert) options.client_ca_file = TestdataPath("ca.pem");
    auto server = ScriptedServer::Start(
        [this](const TestRequest& r, ResponseWriter& w) {
          recorder_.Add(r);
          w.Respond(200, kCm);
        },
        options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    config.host = server_->url();
    MakeClient(config);
  }
  absl::Status Get() {
    return client_
        ->Get(kBg, Resource::Namespaced(kConfigMaps, "default"), "cm1")
        .status();
  }
};

TEST_F(TlsTest, RightCaFromFileOrData) {
  Config config;
  config.tls.ca_file = TestdataPath("ca.pem");
  ServeTls(config);
  EXPECT_TRUE(Get().ok()) << Get();
  config.tls.ca_file.clear();
  config.tls.ca_data = ReadFileOrDie(TestdataPath("ca.pem"));
  config.host = server_->url();
  MakeClient(config);
  EXPECT_TRUE(Get().ok());
}

TEST_F(TlsTest, DataWinsOverFile) {
  Config config;
  config.tls.ca_file = TestdataPath("other-ca.pem");
  config.tls.ca_data = ReadFileOrDie(TestdataPath("ca.pem"));
  config.tls.cert_file = "/nonexistent/cert.pem";
  config.tls.cert_data = ReadFileOrDie(TestdataPath("client.pem"));
  config.tls.key_file = "/nonexistent/key.pem";
  config.tls.key_data = ReadFileOrDie(TestdataPath("client-key.pem"));
  ServeTls(config, /*want_client_cert=*/true);
  ASSERT_TRUE(Get().ok()) << Get();
  EXPECT_EQ(recorder_.last().client_cert_cn, "kcr-test-user");
}

TEST_F(TlsTest, WrongCaFailsWithAClearError) {
  Config config;
  config.tls.ca_file = TestdataPath("other-ca.pem");
  ServeTls(config);
  absl::Status s = Get();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(s.message()), HasSubstr("TLS handshake")) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("certificate verify failed"))
      << s;
  EXPECT_EQ(recorder_.count(), 0u);
  EXPECT_TRUE(sleeps().empty());  // a verification failure is not retried
}

TEST_F(TlsTest, SystemStoreDoesNotTrustTheTestCa) {
  ServeTls(Config{});
  EXPECT_EQ(Get().code(), absl::StatusCode::kUnavailable);
}

TEST_F(TlsTest, InsecureSkipsVerification) {
  Config config;
  config.tls.insecure = true;
  ServeTls(config);
  EXPECT_TRUE(Get().ok()) << Get();
}

TEST_F(TlsTest, InsecureWithCaIsRejected) {
  Config config;
  config.host = "https://127.0.0.1:1";
  config.tls.insecure = true;
  config.tls.ca_file = TestdataPath("ca.pem");
  auto client = NewRestClient(config);
  EXPECT_THAT(
      std::string(client.status().message()),
      HasSubstr(
          "root certificates file with the insecure flag is not allowed"));
}

TEST_F(TlsTest, TlsServerName) {
  Config config;
  config.tls.ca_file = TestdataPath("ca.pem");
  config.tls.server_name = "kcr-test.example";
  ServeTls(config);
  EXPECT_TRUE(Get().ok()) << Get();
  config.tls.server_name = "wrong.example";
  config.host = server_->url();
  MakeClient(config);
  EXPECT_EQ(Get().code(), absl::StatusCode::kUnavailable);
}

TEST_F(TlsTest, ClientCertificate) {
  Config config;
  config.tls.ca_file = TestdataPath("ca.pem");
  config.tls.cert_file = TestdataPath("client.pem");
  config.tls.key_data = ReadFileOrDie(TestdataPath("client-key.pem"));
  ServeTls(config, /*want_client_cert=*/true);
  ASSERT_TRUE(Get().ok()) << Get();
  EXPECT_EQ(recorder_.last().client_cert_cn, "kcr-test-user");
}

TEST_F(TlsTest, ExecPluginClientCertificateRotates) {
  // The plugin answers with whatever certificate and key are in its state
  // directory; the server takes certificates whose common name it accepts.
  const std::string state = MakeTempDir("exec");
  auto install = [&state](const std::string& cert, const std::string& key) {
    WriteFile(state + "/cert.pem", ReadFileOrDie(TestdataPath(cert)));
    WriteFile(state + "/key.pem", ReadFileOrDie(TestdataPath(key)));
  };
  install("client.pem", "client-key.pem");
  Mutex mu;
  std::vector<std::string> accepted = {"kcr-test-user"};
  ScriptedServerOptions options;
  options.tls = true;
  options.cert_file = TestdataPath("server.pem");
  options.key_file = TestdataPath("server-key.pem");
  options.client_ca_file = TestdataPath("ca.pem");
  auto server = ScriptedServer::Start(
      [&](const TestRequest& r, ResponseWriter& w) {
        recorder_.Add(r);
        MutexLock lock(&mu);
        if (std::find(accepted.begin(), accepted.end(), r.client_cert_cn) !=
            accepted.end()) {
          w.Respond(200, kCm);
        } else {
          w.Respond(401, StatusBody(401, "Unauthorized", "Unauthorized"));
        }
      },
      options);
  ASSERT_TRUE(server.ok()) << server.status();
  server_ = *std::move(server);
  Config config;
  config.host = server_->url();
  config.tls.ca_file = TestdataPath("ca.pem");
  config.exec = ExecConfig{};
  config.exec->api_version = "client.authentication.k8s.io/v1";
  config.exec->command = TestdataPath("exec_plugin.sh");
  config.exec->args = {state, "pem"};
  MakeClient(config);

  // The first certificate expires ten minutes after the fake clock's start.
  setenv("EXEC_EXPIRY", "2023-11-14T22:23:20Z", 1);
  ASSERT_TRUE(Get().ok()) << Get();
  unsetenv("EXEC_EXPIRY");
  EXPECT_EQ(recorder_.last().client_cert_cn, "kcr-test-user");
  EXPECT_EQ(ReadFileOrDie(state + "/count"), "1\n");

  // Past the expiry the plugin runs again and the next request presents
  // its new certificate, without a 401 first.
  install("client2.pem", "client2-key.pem");
  {
    MutexLock lock(&mu);
    accepted.push_back("kcr-test-user-2");
  }
  clock_.Advance(absl::Minutes(11));
  size_t before = recorder_.count();
  ASSERT_TRUE(Get().ok()) << Get();
  EXPECT_EQ(recorder_.count(), before + 1);
  EXPECT_EQ(recorder_.last().client_cert_cn, "kcr-test-user-2");
  EXPECT_EQ(ReadFileOrDie(state + "/count"), "2\n");

  // The server stops taking that certificate (no expiry this time): the
  // 401 runs the plugin again and the request goes again with the new one.
  install("client.pem", "client-key.pem");
  {
    MutexLock lock(&mu);
    accepted = {"kcr-test-user"};
  }
  before = recorder_.count();
  ASSERT_TRUE(Get().ok()) << Get();
  auto requests = recorder_.requests();
  ASSERT_EQ(requests.size(), before + 2);
  EXPECT_EQ(requests[before].client_cert_cn, "kcr-test-user-2");
  EXPECT_EQ(requests[before + 1].client_cert_cn, "kcr-test-user");
  EXPECT_EQ(ReadFileOrDie(state + "/count"), "3\n");

  // Later requests keep it, and the plugin is not run again.
  ASSERT_TRUE(Get().ok()) << Get();
  EXPECT_EQ(recorder_.last().client_cert_cn, "kcr-test-user");
  EXPECT_EQ(ReadFileOrDie(state + "/count"), "3\n");
  // Its connection threads use the locals above: stop it before they go.
  server_.reset();
}

TEST_F(TlsTest, ExecPluginCertificateThatIsNotPemIsAnError) {
  const std::string state = MakeTempDir("exec");
  Config config;
  config.tls.ca_file = TestdataPath("ca.pem");
  config.exec = ExecConfig{};
  config.exec->api_version = "client.authentication.k8s.io/v1";
  config.exec->command = TestdataPath("exec_plugin.sh");
  config.exec->args = {state, "cert"};  // "CERT" and "KEY"
  ServeTls(config, /*want_client_cert=*/true);
  absl::Status s = Get();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("exec_plugin.sh"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("PEM"));
  EXPECT_EQ(recorder_.count(), 0u);
}

TEST_F(TlsTest, BadPemIsAnErrorNamingTheFile) {
  Config config;
  config.host = "https://127.0.0.1:1";
  config.tls.ca_file = TestdataPath("watch_stream.json");
  auto client = NewRestClient(config);
  EXPECT_THAT(std::string(client.status().message()),
              HasSubstr("watch_stream.json"));
  config.tls.ca_file = "/nonexistent/ca.pem";
  client = NewRestClient(config);
  EXPECT_THAT(std::string(client.status().message()),
              HasSubstr("/nonexistent/ca.pem"));
  config.tls.ca_file.clear();
  config.tls.cert_file = TestdataPath("client.pem");
  config.tls.key_file = TestdataPath("client.pem");  // not a key
  client = NewRestClient(config);
  EXPECT_THAT(std::string(client.status().message()), HasSubstr("client key"));
}

TEST_F(TlsTest, WatchOverTls) {
  ScriptedServerOptions options;
  options.tls = true;
  options.cert_file = TestdataPath("server.pem");
  options.key_file = TestdataPath("server-key.pem");
  auto server = ScriptedServer::Start(
      [](const TestRequest&, ResponseWriter& w) {
        w.StartChunks(200);
        w.WriteChunk(kEvents);
        w.EndChunks();
      },
      options);
  ASSERT_TRUE(server.ok());
  server_ = *std::move(server);
  Config config;
  config.host = server_->url();
  config.tls.ca_file = TestdataPath("ca.pem");
  MakeClient(config);
  auto watch =
      client_->Watch(kBg, Resource::Namespaced(kConfigMaps, "default"), {});
  ASSERT_TRUE(watch.ok()) << watch.status();
  int n = 0;
  WatchEvent e;
  while ((*watch)->Next(&e)) ++n;
  EXPECT_EQ(n, 4);
  EXPECT_TRUE((*watch)->status().ok()) << (*watch)->status();
}

}  // namespace
}  // namespace kcr::client
