// A controller built with ControllerBuilder and run by a Manager against
// the local API server over HTTP: it reconciles on create, update and
// delete of its objects and of the objects they own; two controllers on one
// resource share one informer; the Manager stops with a clear error when a
// Runnable fails; the reconcile metrics move.
//
// The sample controller (MirrorReconciler and RunMirrorController) is the
// one docs/writing-a-controller.md walks through; DocsQuoteThisFile checks
// that every C++ block of that page appears here verbatim.
#include <atomic>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "api/errors/errors.h"
#include "api/object_builder.h"
#include "api/types/config_map.h"
#include "api/types/owner_reference.h"
#include "api/types/secret.h"
#include "apiserver/api_server.h"
#include "base/context.h"
#include "base/mutex.h"
#include "base/status_macros.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "runtime/cache/lister.h"
#include "runtime/cache/typed_lister.h"
#include "runtime/client/rest_client.h"
#include "runtime/client/typed_client.h"
#include "runtime/controller/builder.h"
#include "runtime/controller/manager.h"
#include "test/apiserver/api_server_fixture.h"

namespace kcr {
namespace {

// [doc:reconciler]
// Keeps, for every ConfigMap, a Secret "<name>-mirror" that holds the
// ConfigMap's data.value and is owned by the ConfigMap.
class MirrorReconciler final : public controller::Reconciler {
 public:
  static constexpr char kSourceAnnotation[] = "example.kcr.dev/source-value";

  explicit MirrorReconciler(controller::Manager& mgr)
      : client_(mgr.GetClient()),
        configmaps_(mgr.ListerFor<api::ConfigMapView>()),
        secrets_(mgr.ListerFor<api::SecretView>()) {}

  absl::StatusOr<controller::Result> Reconcile(
      const controller::Request& request,
      controller::ReconcileContext& ctx) override {
    // 1. The ConfigMap, from the cache (never from the API server). Gone:
    // the garbage collector deletes what it owned.
    absl::StatusOr<api::ConfigMapView> cm =
        configmaps_.Get(request.namespace_, request.name);
    if (api::IsNotFound(cm.status())) return controller::Result::Done();
    KCR_RETURN_IF_ERROR(cm.status());
    const std::string value(cm->data().Get("value").value_or(""));

    // 2. Its Secret, when the cache has one: ours, and already in step?
    const std::string name = request.name + "-mirror";
    absl::StatusOr<api::SecretView> have =
        secrets_.Get(request.namespace_, name);
    if (!have.ok() && !api::IsNotFound(have.status())) return have.status();
    if (have.ok() && !api::IsControlledBy(have->object(), cm->object())) {
      return absl::FailedPreconditionError(
          absl::StrCat("secret ", name, " exists and is not ours"));
    }
    if (have.ok() && have->object().Annotation(kSourceAnnotation) == value) {
      return controller::Result::Done();
    }

    // 3. Create or update it.
    api::ObjectBuilder want = have.ok() ? have->object().ToBuilder()
                                        : api::ObjectBuilder("v1", "Secret");
    if (!have.ok()) {
      want.SetNamespace(request.namespace_).SetName(name);
      want.AddOwnerReference(api::NewControllerRef(cm->object()).view());
    }
    want.SetAnnotation(kSourceAnnotation, value);
    KCR_RETURN_IF_ERROR(want.SetString("/stringData/value", value));
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr secret, want.Build());
    LOG(INFO) << ctx.log_prefix() << (have.ok() ? " updating" : " creating")
              << " secret=" << name;
    const client::Resource secrets = client::ResourceFor<api::SecretView>();
    absl::Status written =
        have.ok() ? client_->Update(ctx.ctx(), secrets, *secret).status()
                  : client_->Create(ctx.ctx(), secrets, *secret).status();
    // A conflict means the cache was behind: the watch brings the new
    // version and with it another reconcile.
    if (api::IsConflict(written) || api::IsAlreadyExists(written)) {
      return controller::Result::Requeue();
    }
    KCR_RETURN_IF_ERROR(written);
    return controller::Result::Done();
  }

 private:
  client::RestClient* const client_;
  const cache::ConfigMapLister configmaps_;
  const cache::SecretLister secrets_;
};
// [doc:end]

// [doc:builder]
absl::Status AddMirrorController(controller::Manager& mgr,
                                 std::shared_ptr<controller::Reconciler> r) {
  return controller::ControllerBuilder(mgr)
      .For<api::ConfigMapView>()
      .Owns<api::SecretView>()
      .Named("mirror")
      .Complete(std::move(r));
}
// [doc:end]

// [doc:main]
absl::Status RunMirrorController(const client::Config& config,
                                 const Context& ctx) {
  KCR_ASSIGN_OR_RETURN(std::unique_ptr<controller::Manager> mgr,
                       controller::Manager::New(config));
  KCR_RETURN_IF_ERROR(
      AddMirrorController(*mgr, std::make_shared<MirrorReconciler>(*mgr)));
  return mgr->Start(ctx);  // until ctx ends, or something fails
}
// [doc:end]

// Records every Request a wrapped reconciler sees.
class Recording final : public controller::Reconciler {
 public:
  explicit Recording(std::shared_ptr<controller::Reconciler> inner)
      : inner_(std::move(inner)) {}
  absl::StatusOr<controller::Result> Reconcile(
      const controller::Request& request,
      controller::ReconcileContext& ctx) override {
    {
      MutexLock lock(&mu_);
      ++counts_[request.ToString()];
    }
    return inner_ == nullptr ? controller::Result::Done()
                             : inner_->Reconcile(request, ctx);
  }
  int count(const std::string& key) {
    MutexLock lock(&mu_);
    return counts_[key];
  }

 private:
  const std::shared_ptr<controller::Reconciler> inner_;
  Mutex mu_;
  std::map<std::string, int> counts_ ABSL_GUARDED_BY(mu_);
};

bool Eventually(const std::function<bool()>& cond) {
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (!cond()) {
    if (absl::Now() > give_up) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return true;
}

const Context kBg = Context::Background();

api::ObjectPtr ConfigMap(const std::string& name, const std::string& value) {
  api::ObjectBuilder b("v1", "ConfigMap");
  b.SetNamespace("default").SetName(name);
  EXPECT_TRUE(b.SetString("/data/value", value).ok());
  return *b.Build();
}

// The value of counter `family`{labels} in `registry`, or -1.
double CounterValue(prometheus::Registry& registry, const std::string& family,
                    const std::map<std::string, std::string>& labels) {
  for (const auto& f : registry.Collect()) {
    if (f.name != family) continue;
    for (const auto& m : f.metric) {
      std::map<std::string, std::string> have;
      for (const auto& l : m.label) have[l.name] = l.value;
      if (have == labels) return m.counter.value;
    }
  }
  return -1;
}

class ControllerIntegrationTest : public kcr::testing::ApiServerFixture {
 protected:
  // The simulated node on, as in a cluster.
  void SetUp() override { StartServer(apiserver::ApiServerOptions()); }

  // The Secret's annotation, "" when absent, nullopt when the Secret is.
  std::optional<std::string> MirrorValue(const std::string& cm) {
    auto s = client_->Get(
        kBg, client::ResourceFor<api::SecretView>().InNamespace("default"),
        cm + "-mirror");
    if (!s.ok()) return std::nullopt;
    return std::string(
        (*s)->Annotation(MirrorReconciler::kSourceAnnotation).value_or(""));
  }
};

TEST_F(ControllerIntegrationTest, ReconcilesOwnerAndOwnedObjects) {
  auto mgr = controller::Manager::New(config_);
  ASSERT_TRUE(mgr.ok()) << mgr.status();
  cache::SharedIndexInformer* cm_informer =
      (*mgr)->GetInformerFactory()->InformerFor(
          client::ResourceFor<api::ConfigMapView>());
  auto mirror =
      std::make_shared<Recording>(std::make_shared<MirrorReconciler>(**mgr));
  ASSERT_TRUE(AddMirrorController(**mgr, mirror).ok());
  // A second controller on ConfigMaps shares the informer.
  auto audit = std::make_shared<Recording>(nullptr);
  ASSERT_TRUE(controller::ControllerBuilder(**mgr)
                  .For(client::ResourceFor<api::ConfigMapView>())
                  .Named("audit")
                  .Complete(audit)
                  .ok());
  EXPECT_EQ((*mgr)->GetInformerFactory()->InformerFor(
                client::ResourceFor<api::ConfigMapView>()),
            cm_informer);
  // Names are unique.
  EXPECT_EQ(AddMirrorController(**mgr, mirror).code(),
            absl::StatusCode::kAlreadyExists);

  auto [ctx, cancel] = WithCancel(kBg);
  absl::Status run_status;
  std::thread run([&, ctx = ctx] { run_status = (*mgr)->Start(ctx); });

  const client::Resource cms =
      client::ResourceFor<api::ConfigMapView>().InNamespace("default");
  // Create.
  ASSERT_TRUE(client_->Create(kBg, cms, *ConfigMap("a", "one")).ok());
  ASSERT_TRUE(Eventually([&] { return MirrorValue("a") == "one"; }));
  EXPECT_GE(mirror->count("default/a"), 1);
  ASSERT_TRUE(Eventually([&] { return audit->count("default/a") >= 1; }));
  auto secret = client_->Get(
      kBg, client::ResourceFor<api::SecretView>().InNamespace("default"),
      "a-mirror");
  ASSERT_TRUE(secret.ok());
  auto owner = (*secret)->controller_reference();
  ASSERT_TRUE(owner.has_value());
  EXPECT_EQ(owner->kind, "ConfigMap");
  EXPECT_EQ(owner->name, "a");

  // Update of the owner.
  auto cm = client_->Get(kBg, cms, "a");
  ASSERT_TRUE(cm.ok());
  api::ObjectBuilder edit = (*cm)->ToBuilder();
  ASSERT_TRUE(edit.SetString("/data/value", "two").ok());
  ASSERT_TRUE(client_->Update(kBg, cms, **edit.Build()).ok());
  ASSERT_TRUE(Eventually([&] { return MirrorValue("a") == "two"; }));

  // Update of the owned Secret by someone else: the owner is reconciled and
  // puts it back.
  int before = mirror->count("default/a");
  auto s = client_->Get(
      kBg, client::ResourceFor<api::SecretView>().InNamespace("default"),
      "a-mirror");
  ASSERT_TRUE(s.ok());
  api::ObjectBuilder tamper = (*s)->ToBuilder();
  tamper.SetAnnotation(MirrorReconciler::kSourceAnnotation, "tampered");
  ASSERT_TRUE(client_
                  ->Update(kBg, client::ResourceFor<api::SecretView>(),
                           **tamper.Build())
                  .ok());
  ASSERT_TRUE(Eventually([&] {
    return mirror->count("default/a") > before && MirrorValue("a") == "two";
  }));

  // Delete of the owned Secret: the owner is reconciled and recreates it.
  before = mirror->count("default/a");
  ASSERT_TRUE(client_
                  ->Delete(kBg,
                           client::ResourceFor<api::SecretView>().InNamespace(
                               "default"),
                           "a-mirror")
                  .ok());
  ASSERT_TRUE(Eventually([&] {
    return mirror->count("default/a") > before && MirrorValue("a") == "two";
  }));

  // Delete of the owner: reconciled once more, and finds it gone.
  before = mirror->count("default/a");
  const int audit_before = audit->count("default/a");
  ASSERT_TRUE(client_->Delete(kBg, cms, "a").ok());
  ASSERT_TRUE(Eventually([&] {
    return mirror->count("default/a") > before &&
           audit->count("default/a") > audit_before;
  }));

  // The reconcile metrics moved, under controller-runtime's names.
  prometheus::Registry& registry = (*mgr)->GetMetricsRegistry();
  EXPECT_GE(CounterValue(registry, "controller_runtime_reconcile_total",
                         {{"controller", "mirror"}, {"result", "success"}}),
            4);
  EXPECT_GE(CounterValue(registry, "controller_runtime_reconcile_total",
                         {{"controller", "audit"}, {"result", "success"}}),
            2);
  EXPECT_EQ(CounterValue(registry, "controller_runtime_reconcile_errors_total",
                         {{"controller", "mirror"}}),
            0);
  // The controller's queue and the REST client record there too.
  EXPECT_GE(
      CounterValue(registry, "workqueue_adds_total", {{"name", "mirror"}}), 4);
  bool rest_metrics = false;
  for (const auto& f : registry.Collect()) {
    rest_metrics |= f.name == "rest_client_requests_total" && !f.metric.empty();
  }
  EXPECT_TRUE(rest_metrics);
  // Ready: the caches synced.
  EXPECT_EQ((*mgr)->readyz_checks().Answer({"/readyz", "", false}, "").status,
            200);

  cancel();
  run.join();
  EXPECT_TRUE(run_status.ok()) << run_status;
}

TEST_F(ControllerIntegrationTest, StartReturnsTheErrorOfAFailedRunnable) {
  auto mgr = controller::Manager::New(config_);
  ASSERT_TRUE(mgr.ok()) << mgr.status();
  auto mirror =
      std::make_shared<Recording>(std::make_shared<MirrorReconciler>(**mgr));
  ASSERT_TRUE(AddMirrorController(**mgr, mirror).ok());
  ASSERT_TRUE(client_
                  ->Create(kBg, client::ResourceFor<api::ConfigMapView>(),
                           *ConfigMap("b", "x"))
                  .ok());
  std::atomic<bool> fail{false};
  ASSERT_TRUE((*mgr)
                  ->Add(std::make_unique<controller::RunnableFunc>(
                      "webhook-server",
                      [&](const Context& ctx) -> absl::Status {
                        while (!fail.load() && !ctx.done()) {
                          absl::SleepFor(absl::Milliseconds(5));
                        }
                        if (ctx.done()) return absl::OkStatus();
                        return absl::UnavailableError("port 9443 in use");
                      }))
                  .ok());
  absl::Status run_status;
  std::thread run([&] { run_status = (*mgr)->Start(kBg); });
  ASSERT_TRUE(Eventually([&] { return MirrorValue("b") == "x"; }));
  fail.store(true);
  run.join();
  EXPECT_EQ(run_status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(run_status.message(),
            "manager: webhook-server failed: port 9443 in use");
}

TEST_F(ControllerIntegrationTest, RunMirrorControllerRunsUntilCancelled) {
  auto [ctx, cancel] = WithCancel(kBg);
  absl::Status run_status;
  std::thread run(
      [&, ctx = ctx] { run_status = RunMirrorController(config_, ctx); });
  ASSERT_TRUE(client_
                  ->Create(kBg, client::ResourceFor<api::ConfigMapView>(),
                           *ConfigMap("c", "docs"))
                  .ok());
  ASSERT_TRUE(Eventually([&] { return MirrorValue("c") == "docs"; }));
  cancel();
  run.join();
  EXPECT_TRUE(run_status.ok()) << run_status;
}

// Every ```cpp block of docs/writing-a-controller.md is in this file.
TEST(WritingAControllerDocTest, DocsQuoteThisFile) {
  auto read = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  const std::string doc = read("docs/writing-a-controller.md");
  const std::string self = read("test/integration/controller_test.cc");
  ASSERT_FALSE(doc.empty());
  ASSERT_FALSE(self.empty());
  int blocks = 0;
  size_t pos = 0;
  while ((pos = doc.find("```cpp\n", pos)) != std::string::npos) {
    pos += 7;
    const size_t end = doc.find("```", pos);
    ASSERT_NE(end, std::string::npos);
    const std::string block = doc.substr(pos, end - pos);
    EXPECT_NE(self.find(block), std::string::npos)
        << "a block of docs/writing-a-controller.md is not in "
           "test/integration/controller_test.cc:\n"
        << block;
    ++blocks;
    pos = end + 3;
  }
  EXPECT_GE(blocks, 3);
}

}  // namespace
}  // namespace kcr
