// The server's fault rules as kubectl users meet them: an injected
// Conflict or InternalError printed as kube-apiserver's would be (kubectl
// create configmap sends protobuf and words its own prefix), a 429 that
// kubectl retries after Retry-After, and a `kubectl get -w` that sees
// nothing of a held kind until the hold is released.
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/apiserver/test_client.h"
#include "test/integration/kubectl_apiserver_fixture.h"

namespace kcr {
namespace integration {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class KubectlFaultRulesTest : public KubectlApiServerFixture {
 protected:
  void SetUp() override {
    apiserver::ApiServerOptions options;
    options.controllers.node_simulator = false;
    ASSERT_NO_FATAL_FAILURE(StartServer(std::move(options)));
  }

  // An error rule for kubectl's next create of a ConfigMap.
  void FailNextCreate(int code) {
    apiserver::ErrorRule rule;
    rule.match.verb = "create";
    rule.match.resource = "configmaps";
    rule.match.user_agent = "kubectl/";
    rule.code = code;
    ASSERT_TRUE(server_->faults()->AddErrorRule(rule).ok());
  }
};

TEST_F(KubectlFaultRulesTest, InjectedErrorsAsKubectlPrintsThem) {
  FailNextCreate(409);
  KubectlResult conflict = kubectl_->Run({"create", "configmap", "a"});
  EXPECT_EQ(conflict.exit_code, 1);
  EXPECT_THAT(conflict.err,
              HasSubstr("error: failed to create configmap: Operation cannot "
                        "be fulfilled on configmaps \"a\": the object has "
                        "been modified; please apply your changes to the "
                        "latest version and try again"));
  FailNextCreate(500);
  KubectlResult internal = kubectl_->Run({"create", "configmap", "a"});
  EXPECT_EQ(internal.exit_code, 1);
  EXPECT_THAT(internal.err,
              HasSubstr("error: failed to create configmap: Internal error "
                        "occurred: injected fault"));
  EXPECT_EQ(kubectl_->Run({"get", "configmap", "a"}).exit_code, 1);
  // A 429 is retried after its Retry-After: one create lands.
  FailNextCreate(429);
  const int64_t mark = server_->write_log()->last_seq();
  KubectlResult throttled = kubectl_->Run({"create", "configmap", "a"});
  EXPECT_EQ(throttled.exit_code, 0) << throttled.err;
  EXPECT_THAT(throttled.out, HasSubstr("configmap/a created"));
  EXPECT_EQ(server_->faults()->rules_fired(), 3);
  int creates = 0;
  for (const apiserver::WriteRecord& w : server_->write_log()->Since(mark)) {
    if (w.verb == "create" && w.name == "a") {
      EXPECT_THAT(w.user_agent, ::testing::StartsWith("kubectl/"));
      ++creates;
    }
  }
  EXPECT_EQ(creates, 1);
}

TEST_F(KubectlFaultRulesTest, WatchOfAHeldKindWaitsForTheRelease) {
  ASSERT_EQ(kubectl_->Run({"create", "configmap", "first"}).exit_code, 0);
  apiserver::WatchHold hold;
  hold.match.resource = "configmaps";
  hold.match.user_agent = "kubectl/";
  server_->faults()->HoldWatch(hold);
  auto watch = kubectl_->Start({"get", "configmaps", "-w"});
  ASSERT_TRUE(watch->WaitForLine("first", absl::Seconds(20))) << watch->out();
  // Written by another client while kubectl's watch is held.
  apiserver::TestClient writer("127.0.0.1", server_->port());
  writer.SetHeader("User-Agent", "writer/1.0");
  ASSERT_EQ(writer
                .Post("/api/v1/namespaces/default/configmaps",
                      R"({"metadata":{"name":"second"}})")
                .status,
            201);
  EXPECT_FALSE(watch->WaitForLine("second", absl::Seconds(1))) << watch->out();
  EXPECT_THAT(watch->out(), Not(HasSubstr("second")));
  EXPECT_EQ(server_->faults()->ReleaseWatchHolds(), 1);
  EXPECT_TRUE(watch->WaitForLine("second", absl::Seconds(20))) << watch->out();
}

}  // namespace
}  // namespace integration
}  // namespace kcr
