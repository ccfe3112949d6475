// A local API server and a REST client talking to it over HTTP, for the
// controllerutil tests that write.
#ifndef KCR_TEST_RUNTIME_CONTROLLER_CONTROLLERUTIL_APISERVER_FIXTURE_H_
#define KCR_TEST_RUNTIME_CONTROLLER_CONTROLLERUTIL_APISERVER_FIXTURE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/object_builder.h"
#include "base/context.h"
#include "base/mutex.h"
#include "gtest/gtest.h"
#include "runtime/client/rest_client.h"
#include "runtime/controller/controllerutil/retry.h"
#include "test/apiserver/api_server_fixture.h"

namespace kcr::controller::controllerutil::testing {

inline const client::Resource kConfigMaps =
    client::Resource::Namespaced({"", "v1", "configmaps"}, "default");
inline const client::Resource kDeployments =
    client::Resource::Namespaced({"apps", "v1", "deployments"}, "default");

class ApiServerTest : public kcr::testing::ApiServerFixture {
 protected:
  // The tests write Deployment status themselves: no deployment controller
  // writes it in between.
  void SetUp() override {
    apiserver::ApiServerOptions options = NoSimulatedNode();
    options.controllers.deployment_controller = false;
    StartServer(options);
  }

  // Retries wait for nothing, and are counted.
  RetryOptions Retry() {
    RetryOptions options;
    options.sleep = [this](absl::Duration) {
      MutexLock lock(&mu_);
      ++retries_;
    };
    return options;
  }
  int retries() {
    MutexLock lock(&mu_);
    return retries_;
  }

  api::ObjectPtr Create(const client::Resource& resource,
                        const api::ObjectBuilder& b) {
    auto built = b.Build();
    EXPECT_TRUE(built.ok()) << built.status();
    auto created = client_->Create(ctx_, resource, **built);
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? *created : nullptr;
  }
  api::ObjectPtr CreateConfigMap(const std::string& name) {
    api::ObjectBuilder b("v1", "ConfigMap");
    b.SetName(name).SetNamespace("default");
    (void)b.SetString("/data/a", "1");
    return Create(kConfigMaps, b);
  }
  api::ObjectPtr CreateDeployment(const std::string& name) {
    api::ObjectBuilder b = DeploymentBuilder(name);
    return Create(kDeployments, b);
  }
  // A Deployment the API server accepts: a selector that matches the
  // template's labels, a container with an image.
  static api::ObjectBuilder DeploymentBuilder(const std::string& name) {
    api::ObjectBuilder b("apps/v1", "Deployment");
    b.SetName(name).SetNamespace("default");
    (void)b.SetInt("/spec/replicas", 1);
    (void)b.SetJson("/spec/selector", R"({"matchLabels":{"app":"web"}})");
    (void)b.SetJson(
        "/spec/template",
        R"({"metadata":{"labels":{"app":"web"}},"spec":{"containers":)"
        R"([{"name":"web","image":"nginx:1.25"}]}})");
    return b;
  }
  api::ObjectPtr Get(const client::Resource& resource,
                     const std::string& name) {
    auto got = client_->Get(ctx_, resource, name);
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? *got : nullptr;
  }

  const Context ctx_ = Context::Background();
  Mutex mu_;
  int retries_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kcr::controller::controllerutil::testing

#endif  // KCR_TEST_RUNTIME_CONTROLLER_CONTROLLERUTIL_APISERVER_FIXTURE_H_
