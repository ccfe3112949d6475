#include "runtime/controller/manager.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <thread>

#include "absl/time/clock.h"
#include "api/errors/errors.h"
#include "base/mutex.h"
#include "base/tls_certs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/controller/builder.h"
#include "test/fakes/fake_clock.h"
#include "test/runtime/metrics/raw_http.h"

namespace kcr::controller {
namespace {

// A Manager whose client points at nothing: these tests start no informer.
std::unique_ptr<Manager> NewManager() {
  client::Config config;
  config.host = "http://127.0.0.1:1";
  auto mgr = Manager::New(config);
  EXPECT_TRUE(mgr.ok()) << mgr.status();
  return *std::move(mgr);
}

std::shared_ptr<Reconciler> Noop() {
  return std::make_shared<ReconcilerFunc>(
      [](const Request&, ReconcileContext&) { return Result::Done(); });
}

const client::Resource kConfigMaps =
    client::Resource::Namespaced({"", "v1", "configmaps"});
const client::Resource kSecrets =
    client::Resource::Namespaced({"", "v1", "secrets"});

TEST(ControllerBuilderTest, ValidationErrorsAreClear) {
  auto mgr = NewManager();
  absl::Status no_for = ControllerBuilder(*mgr).Owns(kSecrets).Complete(Noop());
  EXPECT_EQ(no_for.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(no_for.message().find("For()"), absl::string_view::npos) << no_for;

  absl::Status twice =
      ControllerBuilder(*mgr).For(kConfigMaps).For(kSecrets).Complete(Noop());
  EXPECT_EQ(twice.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(twice.message().find("For() can only be called once"),
            absl::string_view::npos)
      << twice;

  absl::Status bad_name = ControllerBuilder(*mgr)
                              .For(kConfigMaps)
                              .Named("Bad Name")
                              .Complete(Noop());
  EXPECT_EQ(bad_name.code(), absl::StatusCode::kInvalidArgument) << bad_name;

  absl::Status no_reconciler =
      ControllerBuilder(*mgr).For(kConfigMaps).Complete(nullptr);
  EXPECT_EQ(no_reconciler.code(), absl::StatusCode::kInvalidArgument);

  // The default name is the For kind in lower case; a second is a
  // duplicate.
  auto built = ControllerBuilder(*mgr).For(kConfigMaps).Build(Noop());
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ((*built)->name(), "configmap");
  EXPECT_TRUE((*built)->NeedLeaderElection());
  EXPECT_TRUE(mgr->HasController("configmap"));
  absl::Status duplicate =
      ControllerBuilder(*mgr).For(kSecrets).Named("configmap").Complete(Noop());
  EXPECT_EQ(duplicate.code(), absl::StatusCode::kAlreadyExists) << duplicate;

  // Owns needs the For resource's kind.
  const client::Resource widgets =
      client::Resource::Namespaced({"example.org", "v1", "widgets"});
  absl::Status unknown_kind =
      ControllerBuilder(*mgr).For(widgets).Owns(kSecrets).Complete(Noop());
  EXPECT_EQ(unknown_kind.code(), absl::StatusCode::kNotFound) << unknown_kind;
  // Without Owns, an unknown kind is fine; the name is the plural.
  auto w = ControllerBuilder(*mgr).For(widgets).Build(Noop());
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ((*w)->name(), "widgets");

  ControllerBuilder once(*mgr);
  once.For(kSecrets);
  EXPECT_TRUE(once.Complete(Noop()).ok());
  EXPECT_EQ(once.Complete(Noop()).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(ControllerBuilderTest, ControllersOnOneResourceShareOneInformer) {
  auto mgr = NewManager();
  cache::SharedIndexInformer* informer =
      mgr->GetInformerFactory()->InformerFor(kConfigMaps);
  ASSERT_TRUE(ControllerBuilder(*mgr)
                  .For(kConfigMaps)
                  .Named("one")
                  .Complete(Noop())
                  .ok());
  ASSERT_TRUE(ControllerBuilder(*mgr)
                  .For(kConfigMaps)
                  .Named("two")
                  .Complete(Noop())
                  .ok());
  EXPECT_EQ(mgr->GetInformerFactory()->InformerFor(kConfigMaps), informer);
  // Different selectors, a different informer.
  ASSERT_TRUE(ControllerBuilder(*mgr)
                  .For(kConfigMaps)
                  .WithListWatchOptions({"app=web", "", false})
                  .Named("three")
                  .Complete(Noop())
                  .ok());
  EXPECT_NE(mgr->GetInformerFactory()->InformerFor(kConfigMaps,
                                                   {"app=web", "", false}),
            informer);
}

// A type that says where it lives but is no view (as the custom
// resources' types are).
struct Widget {
  static constexpr char kGroup[] = "example.org";
  static constexpr char kVersion[] = "v1";
  static constexpr char kPlural[] = "widgets";
  static constexpr bool kNamespaced = true;
};

TEST(ManagerTest, ListerForReadsTheBuildersSharedInformer) {
  auto mgr = NewManager();
  ASSERT_TRUE(ControllerBuilder(*mgr)
                  .For<api::ConfigMapView>()
                  .Owns<api::SecretView>()
                  .Complete(Noop())
                  .ok());
  cache::SharedIndexInformer* informer =
      mgr->GetInformerFactory()->InformerFor(kConfigMaps);
  cache::ConfigMapLister configmaps = mgr->ListerFor<api::ConfigMapView>();
  EXPECT_EQ(mgr->GetInformerFactory()->InformerFor(kConfigMaps), informer);
  absl::StatusOr<api::ConfigMapView> missing =
      configmaps.Get("default", "absent");
  EXPECT_TRUE(api::IsNotFound(missing.status())) << missing.status();

  cache::Lister widgets = mgr->ListerFor<Widget>();
  EXPECT_EQ(widgets.resource().group, "example.org");
  EXPECT_EQ(widgets.resource().resource, "widgets");
  EXPECT_TRUE(widgets.List(api::LabelSelector::Everything()).empty());
}

TEST(ManagerTest, StartReturnsTheFailingRunnablesError) {
  auto mgr = NewManager();
  std::atomic<bool> other_stopped{false};
  ASSERT_TRUE(mgr->Add(std::make_unique<RunnableFunc>(
                           "long-runner",
                           [&](const Context& ctx) {
                             while (!ctx.done()) {
                               absl::SleepFor(absl::Milliseconds(2));
                             }
                             other_stopped = true;
                             return absl::OkStatus();
                           }))
                  .ok());
  ASSERT_TRUE(mgr->Add(std::make_unique<RunnableFunc>(
                           "broken",
                           [](const Context&) {
                             return absl::InternalError("cannot bind");
                           },
                           /*need_leader_election=*/true))
                  .ok());
  absl::Status s = mgr->Start(Context::Background());
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(s.message(), "manager: broken failed: cannot bind");
  EXPECT_TRUE(other_stopped.load());
  // Stopped for good.
  EXPECT_EQ(mgr->Start(Context::Background()).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      mgr->Add(std::make_unique<RunnableFunc>(
                   "late", [](const Context&) { return absl::OkStatus(); }))
          .code(),
      absl::StatusCode::kFailedPrecondition);
}

TEST(ManagerTest, ReadyAfterCachesSyncAndRunnablesAddedLaterStart) {
  auto mgr = NewManager();
  const metrics::HttpGet get{"/readyz", "", false};
  EXPECT_EQ(mgr->readyz_checks().Answer(get, "").status, 500);
  ASSERT_TRUE(
      mgr->AddHealthzCheck("ping", [] { return absl::OkStatus(); }).ok());
  EXPECT_EQ(mgr->healthz_checks().Answer({"/healthz", "", false}, "").status,
            200);
  auto [ctx, cancel] = WithCancel(Context::Background());
  absl::Status status;
  std::thread run([&, ctx = ctx] { status = mgr->Start(ctx); });
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (mgr->readyz_checks().Answer(get, "").status != 200 &&
         absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(2));
  }
  EXPECT_EQ(mgr->readyz_checks().Answer(get, "").status, 200);
  std::atomic<bool> ran{false};
  ASSERT_TRUE(mgr->Add(std::make_unique<RunnableFunc>(
                           "late",
                           [&](const Context& ctx) {
                             ran = true;
                             while (!ctx.done()) {
                               absl::SleepFor(absl::Milliseconds(2));
                             }
                             return absl::OkStatus();
                           }))
                  .ok());
  while (!ran.load() && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(2));
  }
  EXPECT_TRUE(ran.load());
  cancel();
  run.join();
  EXPECT_TRUE(status.ok()) << status;
}

// A controller whose reconcile outlives the graceful shutdown timeout: its
// context is cancelled and Start reports the overrun.
TEST(ManagerTest, ReportsReconcilesThatOutliveTheShutdownTimeout) {
  kcr::testing::FakeClock clock;
  client::Config config;
  config.host = "http://127.0.0.1:1";
  ManagerOptions options;
  options.clock = &clock;
  options.graceful_shutdown_timeout = absl::Seconds(30);
  auto mgr = Manager::New(config, std::move(options));
  ASSERT_TRUE(mgr.ok()) << mgr.status();

  std::atomic<bool> entered{false};
  std::atomic<bool> saw_cancel{false};
  auto stubborn = std::make_shared<ReconcilerFunc>(
      [&](const Request&, ReconcileContext& rctx) -> absl::StatusOr<Result> {
        entered = true;
        // Ignores the stop; returns only once its own context ends.
        while (!rctx.ctx().done()) absl::SleepFor(absl::Milliseconds(1));
        saw_cancel = true;
        return Result::Done();
      });
  ControllerOptions copts;
  copts.name = "stubborn";
  copts.clock = &clock;
  copts.shutdown_timeout = absl::Seconds(30);
  auto c = Controller::New(std::move(copts), stubborn);
  ASSERT_TRUE(c.ok());
  (*c)->queue().Add(Request{"ns", "x"});
  ASSERT_TRUE((*mgr)->AddController(*std::move(c)).ok());

  auto [ctx, cancel] = WithCancel(Context::Background());
  Mutex mu;
  bool returned = false;
  absl::Status status;
  std::thread run([&, ctx = ctx] {
    absl::Status s = (*mgr)->Start(ctx);
    MutexLock lock(&mu);
    status = s;
    returned = true;
  });
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (!entered.load() && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  ASSERT_TRUE(entered.load());
  cancel();
  // Time moves until every deadline has passed, however late each began.
  for (;;) {
    {
      MutexLock lock(&mu);
      if (returned || absl::Now() > give_up) break;
    }
    clock.Advance(absl::Seconds(1));
    absl::SleepFor(absl::Milliseconds(1));
  }
  run.join();
  EXPECT_TRUE(saw_cancel.load());
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_NE(status.message().find("stubborn"), absl::string_view::npos)
      << status;
}

// Lets only the token "reader" read /metrics.
class ReaderOnly : public metrics::AccessReviewer {
 public:
  absl::StatusOr<std::optional<metrics::UserInfo>> ReviewToken(
      const std::string& token) override {
    if (token != "reader" && token != "other") {
      return std::optional<metrics::UserInfo>();
    }
    metrics::UserInfo u;
    u.username = token;
    return std::optional<metrics::UserInfo>(u);
  }
  absl::StatusOr<bool> ReviewAccess(const metrics::UserInfo& user,
                                    const std::string& verb,
                                    const std::string& path) override {
    return user.username == "reader" && verb == "get" && path == "/metrics";
  }
};

std::string Scrape(int port, const std::string& ca, const std::string& token) {
  std::string request = "GET /metrics HTTP/1.1\r\nHost: localhost\r\n";
  if (!token.empty()) request += "Authorization: Bearer " + token + "\r\n";
  return metrics::testing::TlsHttp(port, ca, request + "\r\n");
}

// Scrape, retried for up to 30 s until the endpoint answers 200 (it starts
// with the Manager); the last answer.
std::string ScrapeOnceServing(int port, const std::string& ca,
                              const std::string& token) {
  std::string answer;
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (absl::Now() < give_up) {
    answer = Scrape(port, ca, token);
    if (answer.find("200 OK") != std::string::npos) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return answer;
}

int PortOf(const std::string& address) {
  return std::atoi(address.substr(address.rfind(':') + 1).c_str());
}

TEST(ManagerTest, SecureMetricsServeOnlyAuthorisedScrapersOverHttps) {
  absl::StatusOr<TlsMaterial> tls = GenerateTlsMaterial();
  ASSERT_TRUE(tls.ok()) << tls.status();
  const std::string dir = ::testing::TempDir() + "/metrics-certs";
  ASSERT_EQ(system(("mkdir -p " + dir).c_str()), 0);
  std::ofstream(dir + "/tls.crt") << tls->server_cert_pem;
  std::ofstream(dir + "/tls.key") << tls->server_key_pem;

  client::Config config;
  config.host = "http://127.0.0.1:1";
  ManagerOptions options;
  options.metrics_bind_address = "127.0.0.1:0";
  options.health_probe_bind_address = "127.0.0.1:0";
  options.metrics_secure = true;
  options.metrics_cert_dir = dir;
  options.metrics_reviewer = std::make_shared<ReaderOnly>();
  auto mgr = Manager::New(config, std::move(options));
  ASSERT_TRUE(mgr.ok()) << mgr.status();
  auto [ctx, cancel] = WithCancel(Context::Background());
  std::thread run([&, ctx = ctx] { (void)(*mgr)->Start(ctx); });
  const int port = PortOf((*mgr)->metrics_address());
  const std::string answer =
      ScrapeOnceServing(port, tls->ca_cert_pem, "reader");
  EXPECT_THAT(answer, ::testing::StartsWith("HTTP/1.1 200 OK"));
  EXPECT_THAT(answer, ::testing::HasSubstr("# TYPE"));
  EXPECT_THAT(Scrape(port, tls->ca_cert_pem, ""),
              ::testing::StartsWith("HTTP/1.1 401 Unauthorized"));
  EXPECT_THAT(Scrape(port, tls->ca_cert_pem, "forged"),
              ::testing::StartsWith("HTTP/1.1 401 Unauthorized"));
  const std::string other = Scrape(port, tls->ca_cert_pem, "other");
  EXPECT_THAT(other, ::testing::StartsWith("HTTP/1.1 403 Forbidden"));
  EXPECT_THAT(other,
              ::testing::HasSubstr("Authorization denied for user other"));
  // Plain HTTP gets nothing from the secure port; the probes stay plain.
  EXPECT_THAT(metrics::testing::Get(port, "/metrics"),
              ::testing::Not(::testing::HasSubstr("200 OK")));
  EXPECT_THAT(
      metrics::testing::Get(PortOf((*mgr)->health_probe_address()), "/healthz"),
      ::testing::StartsWith("HTTP/1.1 200 OK"));
  cancel();
  run.join();
}

TEST(ManagerTest, SecureMetricsMakeASelfSignedCertificate) {
  client::Config config;
  config.host = "http://127.0.0.1:1";
  ManagerOptions options;
  options.metrics_bind_address = "127.0.0.1:0";
  options.metrics_secure = true;
  options.metrics_reviewer = std::make_shared<ReaderOnly>();
  auto mgr = Manager::New(config, std::move(options));
  ASSERT_TRUE(mgr.ok()) << mgr.status();
  auto [ctx, cancel] = WithCancel(Context::Background());
  std::thread run([&, ctx = ctx] { (void)(*mgr)->Start(ctx); });
  const int port = PortOf((*mgr)->metrics_address());
  const std::string answer = ScrapeOnceServing(port, /*ca=*/"", "reader");
  EXPECT_THAT(answer, ::testing::StartsWith("HTTP/1.1 200 OK"));
  cancel();
  run.join();
}

TEST(ManagerTest, SecureMetricsConfigurationErrorsAreClear) {
  client::Config config;
  config.host = "http://127.0.0.1:1";
  ManagerOptions options;
  options.metrics_bind_address = "127.0.0.1:18443";
  options.health_probe_bind_address = "127.0.0.1:18443";
  options.metrics_secure = true;
  auto mgr = Manager::New(config, options);
  ASSERT_FALSE(mgr.ok());
  EXPECT_THAT(std::string(mgr.status().message()),
              ::testing::HasSubstr("cannot share 127.0.0.1:18443"));

  options.health_probe_bind_address = "0";
  options.metrics_bind_address = "127.0.0.1:0";
  options.metrics_cert_dir = ::testing::TempDir() + "/no-such-dir";
  mgr = Manager::New(config, options);
  ASSERT_FALSE(mgr.ok());
  EXPECT_THAT(std::string(mgr.status().message()),
              ::testing::HasSubstr("cannot read the metrics certificate file " +
                                   options.metrics_cert_dir + "/tls.crt"));
}

}  // namespace
}  // namespace kcr::controller
