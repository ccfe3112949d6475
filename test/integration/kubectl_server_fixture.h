// KubectlServerFixture: cmd/local-apiserver as a process and the real
// kubectl pointed at it, each test with a directory (and HOME) of its own.
// The server must stop cleanly (exit 0) when the test ends.
#ifndef KCR_TEST_INTEGRATION_KUBECTL_SERVER_FIXTURE_H_
#define KCR_TEST_INTEGRATION_KUBECTL_SERVER_FIXTURE_H_

#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "test/integration/kubectl_harness.h"
#include "test/integration/process_util.h"

namespace kcr {
namespace integration {

class KubectlServerFixture : public ::testing::Test {
 protected:
  static constexpr char kKubectl[] = "/usr/bin/kubectl";
  static constexpr char kBinary[] = "cmd/local-apiserver/local-apiserver";

  // Starts the server with `args`, its files under a new directory whose
  // name starts with `name`. ASSERTs inside.
  void StartServer(const std::string& name,
                   std::vector<std::string> args = {}) {
    ASSERT_EQ(access(kKubectl, X_OK), 0)
        << kKubectl << " is missing: these tests need the real kubectl";
    static int counter = 0;
    const char* tmp = getenv("TEST_TMPDIR");
    dir_ = std::string(tmp != nullptr ? tmp : "/tmp") + "/" + name + "-" +
           std::to_string(getpid()) + "-" + std::to_string(counter++);
    ASSERT_EQ(system(("mkdir -p " + dir_ + "/home").c_str()), 0);
    server_ = std::make_unique<apiserver::LocalApiServerProcess>(
        kBinary, dir_, std::move(args));
    ASSERT_TRUE(server_->ok()) << server_->error();
    kubectl_ =
        std::make_unique<KubectlHarness>(server_->kubeconfig(), dir_ + "/home");
  }

  void TearDown() override {
    if (server_ != nullptr) {
      std::optional<int> code = server_->Stop();
      EXPECT_EQ(code, std::optional<int>(0)) << "server did not stop cleanly";
    }
  }

  std::string dir_;
  std::unique_ptr<apiserver::LocalApiServerProcess> server_;
  std::unique_ptr<KubectlHarness> kubectl_;
};

}  // namespace integration
}  // namespace kcr

#endif  // KCR_TEST_INTEGRATION_KUBECTL_SERVER_FIXTURE_H_
