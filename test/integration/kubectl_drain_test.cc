// `kubectl drain` of the simulated node, with kubectl 1.32 and 1.33 (the
// dispatcher on the PATH picks the server's minor): it cordons the node and
// deletes its pods with an empty protobuf DeleteOptions, which the server
// takes as the default options.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/integration/kubectl_apiserver_fixture.h"
#include "test/integration/kubectl_harness.h"

namespace kcr::integration {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Version {
  std::string git_version;
  std::string minor;
};

void PrintTo(const Version& v, std::ostream* os) { *os << v.git_version; }

class KubectlDrainTest : public KubectlApiServerFixture,
                         public ::testing::WithParamInterface<Version> {
 protected:
  void SetUp() override {
    apiserver::ApiServerOptions options;
    options.git_version = GetParam().git_version;
    options.minor = GetParam().minor;
    ASSERT_NO_FATAL_FAILURE(StartServer(std::move(options)));
  }
};

TEST_P(KubectlDrainTest, CordonsTheNodeAndDeletesItsPods) {
  KubectlResult r = kubectl_->Run(
      {"create", "deployment", "web", "--image=nginx", "--replicas=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunUntil(
      {"get", "pods", "-o", "name", "--field-selector", "status.phase=Running"},
      [](const KubectlResult& r) {
        return r.exit_code == 0 &&
               r.out.find("pod/web-") != r.out.rfind("pod/web-");
      });
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string before = r.out;

  // -v=9 shows the body: the protobuf envelope with an empty object.
  KubectlResult drained =
      kubectl_->Run({"drain", "kcr-node", "--ignore-daemonsets", "-v=9"});
  ASSERT_EQ(drained.exit_code, 0) << drained.err;
  EXPECT_THAT(drained.out, HasSubstr("node/kcr-node cordoned"));
  EXPECT_THAT(drained.out, HasSubstr("node/kcr-node drained"));
  EXPECT_THAT(drained.err, HasSubstr("application/vnd.kubernetes.protobuf"));
  EXPECT_THAT(drained.err, Not(HasSubstr("malformed protobuf body")));

  // The pods it ran are gone; their replacements wait for a node.
  r = kubectl_->Run({"get", "pods", "-o",
                     "jsonpath={range .items[*]}{.metadata.name} "
                     "{.status.phase}{\"\\n\"}{end}"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (absl::string_view line : absl::StrSplit(before, '\n')) {
    if (line.empty()) continue;
    EXPECT_THAT(r.out,
                Not(HasSubstr(std::string(line.substr(line.find('/') + 1)))));
  }
  EXPECT_THAT(r.out, Not(HasSubstr("Running")));
  r = kubectl_->Run(
      {"get", "node", "kcr-node", "-o", "jsonpath={.spec.unschedulable}"});
  EXPECT_EQ(r.out, "true");
}

INSTANTIATE_TEST_SUITE_P(Minors, KubectlDrainTest,
                         ::testing::Values(Version{"v1.32.4", "32"},
                                           Version{"v1.33.1", "33"}),
                         [](const ::testing::TestParamInfo<Version>& info) {
                           return "Minor" + info.param.minor;
                         });

}  // namespace
}  // namespace kcr::integration
