// ManagerTestFixture: the in-process local API server of ApiServerFixture
// plus a controller::Manager running on its own thread, for the
// controllers' tests.
//
//   class MyTest : public kcr::testing::ManagerTestFixture {
//     void SetUp() override {
//       StartServer();
//       ASSERT_NO_FATAL_FAILURE(InstallCrd(api::crd::kMyCrdYaml));
//       ASSERT_NO_FATAL_FAILURE(StartManager(
//           [](controller::Manager& m) { return AddMyController(m, {}); }));
//     }
//   };
//
// TearDown stops the manager and expects Start to have returned OK.
#ifndef KCR_TEST_CONTROLLERS_MANAGER_TEST_FIXTURE_H_
#define KCR_TEST_CONTROLLERS_MANAGER_TEST_FIXTURE_H_

#include <functional>
#include <memory>
#include <string_view>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "api/json/yaml_to_json.h"
#include "api/object.h"
#include "base/context.h"
#include "gtest/gtest.h"
#include "runtime/client/options.h"
#include "runtime/controller/manager.h"
#include "test/apiserver/api_server_fixture.h"

namespace kcr::testing {

class ManagerTestFixture : public ApiServerFixture {
 protected:
  void TearDown() override { StopManager(); }

  // Creates the CustomResourceDefinition in `yaml` through client_.
  void InstallCrd(std::string_view yaml) {
    auto doc = json::YamlToJson(yaml);
    ASSERT_TRUE(doc.ok()) << doc.status();
    auto crd = api::Object::FromValue(**doc);
    ASSERT_TRUE(crd.ok()) << crd.status();
    auto created = client_->Create(
        Context::Background(),
        client::Resource::ClusterScoped(
            {"apiextensions.k8s.io", "v1", "customresourcedefinitions"}),
        **crd);
    ASSERT_TRUE(created.ok()) << created.status();
  }

  // Makes a Manager on config_, lets `add` register the controllers
  // (ASSERTs it returns OK) and starts the manager on run_.
  void StartManager(
      const std::function<absl::Status(controller::Manager&)>& add) {
    auto mgr = controller::Manager::New(config_);
    ASSERT_TRUE(mgr.ok()) << mgr.status();
    mgr_ = *std::move(mgr);
    absl::Status added = add(*mgr_);
    ASSERT_TRUE(added.ok()) << added;
    auto [ctx, cancel] = WithCancel(Context::Background());
    cancel_ = cancel;
    run_ = std::thread([this, ctx = ctx] { run_status_ = mgr_->Start(ctx); });
  }

  // Cancels the manager's context, joins run_ and expects OK from Start;
  // a no-op when the manager is not running.
  void StopManager() {
    if (!run_.joinable()) return;
    cancel_();
    run_.join();
    EXPECT_TRUE(run_status_.ok()) << run_status_;
    mgr_.reset();
  }

  std::unique_ptr<controller::Manager> mgr_;
  std::function<void()> cancel_;
  std::thread run_;
  absl::Status run_status_;
};

}  // namespace kcr::testing

#endif  // KCR_TEST_CONTROLLERS_MANAGER_TEST_FIXTURE_H_
