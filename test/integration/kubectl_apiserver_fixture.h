// KubectlApiServerFixture: an in-process local API server
// (apiserver/api_server.h) and the real kubectl pointed at it, for tests
// of what kubectl users see. SetUp starts the server with the default
// options (the built-in controllers and the simulated node run); a test
// that needs others overrides SetUp and calls StartServer itself.
//
//   class KubectlFooTest : public KubectlApiServerFixture {
//    protected:
//     void SetUp() override {
//       apiserver::ApiServerOptions options;
//       options.controllers.node_simulator = false;
//       ASSERT_NO_FATAL_FAILURE(StartServer(std::move(options)));
//     }
//   };
#ifndef KCR_TEST_INTEGRATION_KUBECTL_APISERVER_FIXTURE_H_
#define KCR_TEST_INTEGRATION_KUBECTL_APISERVER_FIXTURE_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "apiserver/api_server.h"
#include "gtest/gtest.h"
#include "test/integration/kubectl_harness.h"

namespace kcr {
namespace integration {

class KubectlApiServerFixture : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(apiserver::ApiServerOptions()); }

  // Starts the server with `options` and a kubectl for it. ASSERTs inside.
  void StartServer(apiserver::ApiServerOptions options) {
    auto server = apiserver::ApiServer::Start(std::move(options));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    kubectl_ = std::make_unique<KubectlHarness>(server_.get());
  }

  // Runs kubectl `args` every 100 ms until `done` holds for what it
  // answered or `timeout` passes; the last answer.
  KubectlResult RunUntil(const std::vector<std::string>& args,
                         const std::function<bool(const KubectlResult&)>& done,
                         absl::Duration timeout = absl::Seconds(30)) {
    const absl::Time deadline = absl::Now() + timeout;
    KubectlResult r = kubectl_->Run(args);
    while (!done(r) && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(100));
      r = kubectl_->Run(args);
    }
    return r;
  }

  // The rows of a kubectl table (KubectlHarness::Columns) without the
  // cell at `column`: the AGE-like ones, which depend on when it ran.
  static std::vector<std::vector<std::string>> WithoutColumn(
      std::vector<std::vector<std::string>> rows, size_t column) {
    for (auto& row : rows) {
      if (row.size() > column) row.erase(row.begin() + column);
    }
    return rows;
  }

  std::unique_ptr<apiserver::ApiServer> server_;
  std::unique_ptr<KubectlHarness> kubectl_;
};

}  // namespace integration
}  // namespace kcr

#endif  // KCR_TEST_INTEGRATION_KUBECTL_APISERVER_FIXTURE_H_
