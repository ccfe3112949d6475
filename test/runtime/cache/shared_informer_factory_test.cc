#include "runtime/cache/shared_informer_factory.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "api/object_builder.h"
#include "apiserver/api_server.h"
#include "gtest/gtest.h"
#include "runtime/client/rest_client.h"

namespace kcr::cache {
namespace {

// The factory against the local API server over HTTP.
class SharedInformerFactoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = apiserver::ApiServer::Start({});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    client::Config config;
    config.host = server_->url();
    config.qps = -1;
    auto client = client::NewRestClient(config);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = std::move(*client);
  }

  void CreateConfigMap(const std::string& ns, const std::string& name,
                       const std::string& app) {
    auto cm = api::ObjectBuilder::FromJson(absl::StrCat(
        R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")", name,
        R"(","namespace":")", ns, R"(","labels":{"app":")", app, R"("}}})"));
    ASSERT_TRUE(cm.ok());
    auto built = cm->Build();
    ASSERT_TRUE(built.ok());
    ASSERT_TRUE(
        client_->Create(Context::Background(), kConfigMaps, **built).ok());
  }

  absl::Status Sync(SharedInformerFactory& factory) {
    auto [ctx, cancel] = WithTimeout(Context::Background(), absl::Seconds(10));
    absl::Status s = factory.WaitForCacheSync(ctx);
    cancel();
    return s;
  }

  const client::Resource kConfigMaps =
      client::Resource::Namespaced({"", "v1", "configmaps"});
  std::unique_ptr<apiserver::ApiServer> server_;
  std::unique_ptr<client::RestClient> client_;
};

TEST_F(SharedInformerFactoryTest, OneInformerPerCollection) {
  SharedInformerFactory factory(client_.get());
  SharedIndexInformer* all = factory.InformerFor(kConfigMaps);
  EXPECT_EQ(factory.InformerFor(kConfigMaps), all);
  EXPECT_NE(factory.InformerFor(kConfigMaps.InNamespace("default")), all);
  EXPECT_NE(factory.InformerFor(kConfigMaps, {.label_selector = "app=web"}),
            all);
  EXPECT_NE(
      factory.InformerFor(client::Resource::Namespaced({"", "v1", "secrets"})),
      all);
}

TEST_F(SharedInformerFactoryTest, FactoryNamespaceAppliesToNamespacedOnly) {
  SharedInformerFactory factory(client_.get(), {.namespace_ = "default"});
  EXPECT_EQ(factory.InformerFor(kConfigMaps),
            factory.InformerFor(kConfigMaps.InNamespace("default")));
  SharedIndexInformer* namespaces = factory.InformerFor(
      client::Resource::ClusterScoped({"", "v1", "namespaces"}));
  factory.Start(Context::Background());
  ASSERT_TRUE(Sync(factory).ok());
  EXPECT_NE(namespaces->GetStore()->GetByKey("kube-system"), nullptr);
  factory.Shutdown();
}

TEST_F(SharedInformerFactoryTest, StartsLaterInformersAndSyncsThem) {
  CreateConfigMap("default", "web-1", "web");
  CreateConfigMap("kube-system", "db-1", "db");
  SharedInformerFactory factory(client_.get());
  SharedIndexInformer* all = factory.InformerFor(kConfigMaps);
  auto [ctx, cancel] = WithCancel(Context::Background());
  factory.Start(ctx);
  factory.Start(ctx);  // idempotent
  ASSERT_TRUE(Sync(factory).ok());
  EXPECT_NE(all->GetStore()->GetByKey("default/web-1"), nullptr);
  EXPECT_NE(all->GetStore()->GetByKey("kube-system/db-1"), nullptr);

  SharedIndexInformer* web =
      factory.InformerFor(kConfigMaps, {.label_selector = "app=web"});
  EXPECT_FALSE(web->HasSynced());
  factory.Start(ctx);
  ASSERT_TRUE(Sync(factory).ok());
  EXPECT_EQ(web->GetStore()->ListKeys(),
            (std::vector<std::string>{"default/web-1"}));

  // A write reaches the caches; read-your-own-writes.
  auto cm = api::ObjectBuilder::FromJson(
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web-2",)"
      R"("namespace":"default","labels":{"app":"web"}}})");
  auto created = client_->Create(ctx, kConfigMaps, **cm->Build());
  ASSERT_TRUE(created.ok()) << created.status();
  auto [wait_ctx, wait_cancel] = WithTimeout(ctx, absl::Seconds(10));
  EXPECT_TRUE(web->WaitForResourceVersion(wait_ctx, "default/web-2",
                                          (*created)->resource_version())
                  .ok());
  wait_cancel();
  EXPECT_NE(web->GetStore()->GetByKey("default/web-2"), nullptr);

  // Shutdown stops the informers without waiting for their watches to end
  // (the server ends them after 5 to 10 minutes): a generous bound that
  // still tells the two apart.
  const absl::Time before = absl::Now();
  factory.Shutdown();
  EXPECT_LT(absl::Now() - before, absl::Seconds(60));
  EXPECT_TRUE(all->IsStopped());
  EXPECT_TRUE(web->IsStopped());
  factory.Shutdown();  // idempotent
  cancel();
}

TEST_F(SharedInformerFactoryTest, MetadataOnlyInformerCachesMetadata) {
  CreateConfigMap("default", "web-1", "web");
  SharedInformerFactory factory(client_.get());
  SharedIndexInformer* full = factory.InformerFor(kConfigMaps);
  SharedIndexInformer* meta =
      factory.InformerFor(kConfigMaps, {.metadata_only = true});
  EXPECT_NE(meta, full);
  auto [ctx, cancel] = WithCancel(Context::Background());
  factory.Start(ctx);
  ASSERT_TRUE(Sync(factory).ok());
  api::ObjectPtr cached = meta->GetStore()->GetByKey("default/web-1");
  ASSERT_NE(cached, nullptr);
  EXPECT_EQ(cached->kind(), "PartialObjectMetadata");
  EXPECT_EQ(cached->api_version(), "meta.k8s.io/v1");
  EXPECT_EQ(cached->Label("app"), "web");
  // Changes arrive by watch as metadata too.
  CreateConfigMap("default", "web-2", "web");
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (meta->GetStore()->GetByKey("default/web-2") == nullptr &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  api::ObjectPtr watched = meta->GetStore()->GetByKey("default/web-2");
  ASSERT_NE(watched, nullptr);
  EXPECT_EQ(watched->kind(), "PartialObjectMetadata");
  EXPECT_EQ(full->GetStore()->GetByKey("default/web-1")->kind(), "ConfigMap");
  factory.Shutdown();
  cancel();
}

TEST_F(SharedInformerFactoryTest, WaitForCacheSyncEndsWithItsContext) {
  // Nothing answers on this port: the informer never syncs.
  client::Config config;
  config.host = "http://127.0.0.1:1";
  config.qps = -1;
  auto client = client::NewRestClient(config);
  ASSERT_TRUE(client.ok());
  SharedInformerFactory factory(client->get());
  factory.InformerFor(kConfigMaps);
  factory.Start(Context::Background());
  auto [ctx, cancel] =
      WithTimeout(Context::Background(), absl::Milliseconds(300));
  absl::Status s = factory.WaitForCacheSync(ctx);
  cancel();
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  EXPECT_NE(s.message().find("configmaps"), absl::string_view::npos) << s;
  factory.Shutdown();
}

}  // namespace
}  // namespace kcr::cache
