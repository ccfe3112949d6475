// A sharded controller (ControllerBuilder::Sharded) run by a Manager
// against the local API server, with shards handed over by a fake
// ShardOwnership: it reconciles the objects of the shards held and no
// other; its informer lists only those (the server's shardSelector) and
// relists as shards come and go; it is ready once the ownership settled
// and that list is in; it runs without the Manager's leader election.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "api/object_builder.h"
#include "api/types/config_map.h"
#include "api/types/namespace.h"
#include "api/types/secret.h"
#include "base/context.h"
#include "base/mutex.h"
#include "gtest/gtest.h"
#include "runtime/client/typed_client.h"
#include "runtime/controller/builder.h"
#include "runtime/controller/manager.h"
#include "runtime/metrics/http_endpoint.h"
#include "runtime/sharding/shard_ownership.h"
#include "test/apiserver/api_server_fixture.h"
#include "test/runtime/controller/fake_shard_ownership.h"

namespace kcr {
namespace {

constexpr int kShards = 8;
constexpr int kObjects = 80;
const Context kBg = Context::Background();

bool Eventually(const std::function<bool()>& cond) {
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (!cond()) {
    if (absl::Now() > give_up) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return true;
}

// Records the keys it reconciles.
class Recording final : public controller::Reconciler {
 public:
  absl::StatusOr<controller::Result> Reconcile(
      const controller::Request& request,
      controller::ReconcileContext&) override {
    MutexLock lock(&mu_);
    seen_.insert(request.ToString());
    ++count_[request.ToString()];
    return controller::Result::Done();
  }
  std::set<std::string> seen() {
    MutexLock lock(&mu_);
    return seen_;
  }
  // How many times each of `keys` was reconciled, most first.
  int MostReconciles(const std::set<std::string>& keys) {
    MutexLock lock(&mu_);
    int most = 0;
    for (const std::string& k : keys) most = std::max(most, count_[k]);
    return most;
  }

 private:
  Mutex mu_;
  std::set<std::string> seen_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> count_ ABSL_GUARDED_BY(mu_);
};

class ShardedControllerTest : public kcr::testing::ApiServerFixture {
 protected:
  void SetUp() override {
    StartServer();
    ASSERT_FALSE(HasFatalFailure());
    const client::Resource cms =
        client::ResourceFor<api::ConfigMapView>().InNamespace("default");
    for (int i = 0; i < kObjects; ++i) {
      api::ObjectBuilder b("v1", "ConfigMap");
      b.SetNamespace("default").SetName(absl::StrCat("cm-", i));
      auto created = client_->Create(kBg, cms, **b.Build());
      ASSERT_TRUE(created.ok()) << created.status();
    }
    // With those the server keeps of its own (kube-root-ca.crt).
    auto all =
        client_->List(kBg, client::ResourceFor<api::ConfigMapView>(), {});
    ASSERT_TRUE(all.ok()) << all.status();
    for (const api::ObjectPtr& o : all->items) {
      shard_of_[std::string(o->namespace_()) + "/" + std::string(o->name())] =
          sharding::ShardOf(sharding::ShardBy::kUid, o->uid(), "", kShards);
    }
  }

  // The names of the objects in `shards`.
  std::set<std::string> In(const std::set<int>& shards) const {
    std::set<std::string> names;
    for (const auto& [name, shard] : shard_of_) {
      if (shards.count(shard) > 0) names.insert(name);
    }
    return names;
  }

  std::map<std::string, int> shard_of_;
};

std::string ReadyzBody(controller::Manager& mgr) {
  metrics::HttpGet get;
  get.path = "/readyz";
  get.query = "verbose";
  return mgr.readyz_checks().Answer(get, "").body;
}

TEST_F(ShardedControllerTest, ReconcilesAndListsOnlyTheShardsHeld) {
  testing::FakeShardOwnership ownership(kShards, sharding::ShardBy::kUid);
  ownership.Hold({0, 1, 2});
  auto mgr = controller::Manager::New(config_);
  ASSERT_TRUE(mgr.ok()) << mgr.status();
  auto recording = std::make_shared<Recording>();
  auto built = controller::ControllerBuilder(**mgr)
                   .For<api::ConfigMapView>()
                   .Sharded(&ownership)
                   .Build(recording);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_FALSE((*built)->NeedLeaderElection());
  cache::SharedIndexInformer* informer =
      (*mgr)->GetInformerFactory()->InformerFor(
          client::ResourceFor<api::ConfigMapView>());

  auto [ctx, cancel] = WithCancel(kBg);
  absl::Status run_status;
  std::thread run([&, ctx = ctx] { run_status = (*mgr)->Start(ctx); });

  std::set<std::string> ours = In({0, 1, 2});
  ASSERT_TRUE(Eventually([&] { return recording->seen() == ours; }))
      << recording->seen().size() << " of " << ours.size();
  // The server sent only those.
  EXPECT_EQ(informer->GetIndexer()->List().size(), ours.size());
  // The informer is the Manager's shared one, on purpose (docs/sharding.md):
  // every lister of the kind in this process sees the held shards only.
  EXPECT_EQ((*mgr)
                ->ListerFor<api::ConfigMapView>()
                .List(api::LabelSelector::Everything())
                .size(),
            ours.size());
  // Not ready until the ownership settled.
  EXPECT_NE(ReadyzBody(**mgr).find("[-]shards-configmap"), std::string::npos)
      << ReadyzBody(**mgr);
  ownership.SetSettled(true);
  EXPECT_NE(ReadyzBody(**mgr).find("[+]shards-configmap"), std::string::npos)
      << ReadyzBody(**mgr);

  // A shard acquired: the informer relists with it, its objects are
  // reconciled.
  ownership.Acquire(5);
  ours = In({0, 1, 2, 5});
  ASSERT_TRUE(Eventually([&] { return recording->seen() == ours; }))
      << recording->seen().size() << " of " << ours.size();
  ASSERT_TRUE(Eventually(
      [&] { return informer->GetIndexer()->List().size() == ours.size(); }));

  // A shard released: the cache drops its objects.
  ownership.Release(0, absl::Now() + absl::Seconds(10));
  const std::set<std::string> left = In({1, 2, 5});
  ASSERT_TRUE(Eventually(
      [&] { return informer->GetIndexer()->List().size() == left.size(); }));
  // Neither relist handed the objects it kept to the handlers again: each
  // object was reconciled once.
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_EQ(recording->MostReconciles(In({0, 1, 2, 5})), 1);

  // A new object in a shard not held is never reconciled; one in a held
  // shard is.
  const client::Resource cms =
      client::ResourceFor<api::ConfigMapView>().InNamespace("default");
  std::string mine, theirs;
  for (int i = 0; mine.empty() || theirs.empty(); ++i) {
    api::ObjectBuilder b("v1", "ConfigMap");
    b.SetNamespace("default").SetName(absl::StrCat("new-", i));
    auto created = client_->Create(kBg, cms, **b.Build());
    ASSERT_TRUE(created.ok()) << created.status();
    const int shard = sharding::ShardOf(sharding::ShardBy::kUid,
                                        (*created)->uid(), "", kShards);
    const std::string key = "default/" + std::string((*created)->name());
    if (shard == 5 && mine.empty()) mine = key;
    if (shard == 0 && theirs.empty()) theirs = key;
  }
  ASSERT_TRUE(Eventually([&] { return recording->seen().count(mine) > 0; }));
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_EQ(recording->seen().count(theirs), 0u);

  cancel();
  run.join();
  EXPECT_TRUE(run_status.ok()) << run_status;
}

// With namespace sharding an owned object is in its owner's namespace, so
// in its owner's shard: the owned kind's informer lists only the held
// shards too, and follows the held set as the For informer does.
TEST_F(ShardedControllerTest, NamespaceShardingListsOwnedKindsByShard) {
  const client::Resource secrets = client::ResourceFor<api::SecretView>();
  std::map<std::string, int> shard_of_ns;
  for (int i = 0; i < 16; ++i) {
    const std::string ns = absl::StrCat("ns-", i);
    api::ObjectBuilder n("v1", "Namespace");
    n.SetName(ns);
    auto created = client_->Create(
        kBg, client::ResourceFor<api::NamespaceView>(), **n.Build());
    ASSERT_TRUE(created.ok()) << created.status();
    api::ObjectBuilder cm("v1", "ConfigMap");
    cm.SetNamespace(ns).SetName("owner");
    auto owner = client_->Create(
        kBg, client::ResourceFor<api::ConfigMapView>().InNamespace(ns),
        **cm.Build());
    ASSERT_TRUE(owner.ok()) << owner.status();
    auto secret = api::Object::Parse(absl::StrCat(
        R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"owned",)",
        R"("namespace":")", ns, R"(","ownerReferences":[{"apiVersion":"v1",)",
        R"("kind":"ConfigMap","name":"owner","uid":")",
        std::string((*owner)->uid()), R"(","controller":true}]}})"));
    ASSERT_TRUE(secret.ok()) << secret.status();
    auto owned = client_->Create(kBg, secrets.InNamespace(ns), **secret);
    ASSERT_TRUE(owned.ok()) << owned.status();
    shard_of_ns[ns] =
        sharding::ShardOf(sharding::ShardBy::kNamespace, "", ns, kShards);
  }
  // The owned Secrets of the namespaces in `held`.
  auto owned_in = [&](const std::set<int>& held) {
    std::set<std::string> keys;
    for (const auto& [ns, shard] : shard_of_ns) {
      if (held.count(shard) > 0) keys.insert(ns + "/owned");
    }
    return keys;
  };

  testing::FakeShardOwnership ownership(kShards, sharding::ShardBy::kNamespace);
  ownership.Hold({0, 1, 2});
  ownership.SetSettled(true);
  auto mgr = controller::Manager::New(config_);
  ASSERT_TRUE(mgr.ok()) << mgr.status();
  auto built = controller::ControllerBuilder(**mgr)
                   .For<api::ConfigMapView>()
                   .Owns<api::SecretView>()
                   .Sharded(&ownership)
                   .Build(std::make_shared<Recording>());
  ASSERT_TRUE(built.ok()) << built.status();
  cache::SharedIndexInformer* informer =
      (*mgr)->GetInformerFactory()->InformerFor(secrets);
  // The Secrets cached: every one in a held shard's namespace, and those
  // owned by the test's ConfigMaps in such a namespace all there.
  auto cached_fits = [&](const std::set<int>& held) {
    std::set<std::string> owned;
    for (const api::ObjectPtr& o : informer->GetIndexer()->List()) {
      const int shard = sharding::ShardOf(sharding::ShardBy::kNamespace, "",
                                          o->namespace_(), kShards);
      if (held.count(shard) == 0) return false;
      if (o->name() == "owned") owned.insert(o->Key());
    }
    return owned == owned_in(held);
  };

  auto [ctx, cancel] = WithCancel(kBg);
  absl::Status run_status;
  std::thread run([&, ctx = ctx] { run_status = (*mgr)->Start(ctx); });
  ASSERT_FALSE(owned_in({0, 1, 2}).empty());
  ASSERT_TRUE(Eventually([&] {
    return cached_fits({0, 1, 2});
  })) << informer->GetIndexer()->List().size()
      << " Secrets cached";
  ASSERT_TRUE(Eventually([&] {
    return ReadyzBody(**mgr).find("[+]shards-configmap") != std::string::npos;
  })) << ReadyzBody(**mgr);
  ownership.Acquire(6);
  ASSERT_TRUE(Eventually([&] {
    return cached_fits({0, 1, 2, 6});
  })) << informer->GetIndexer()->List().size()
      << " Secrets cached";
  ownership.Release(1, absl::Now() + absl::Seconds(10));
  ASSERT_TRUE(Eventually([&] {
    return cached_fits({0, 2, 6});
  })) << informer->GetIndexer()->List().size()
      << " Secrets cached";

  cancel();
  run.join();
  EXPECT_TRUE(run_status.ok()) << run_status;
}

}  // namespace
}  // namespace kcr
