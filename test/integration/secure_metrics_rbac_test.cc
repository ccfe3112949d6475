// The manager's secure /metrics against a real API server with RBAC:
// cmd/local-apiserver (HTTPS, --authorization-mode=RBAC) with
// manifests/rbac applied, and cmd/controller-manager as a process running
// as the kcr-controller-manager ServiceAccount (a token from `kubectl
// create token`) with --metrics-secure. Scrapers' tokens go through the
// server's TokenReview and SubjectAccessReview: none is 401, a
// ServiceAccount without the kcr-metrics-reader role 403, one bound to it
// 200. The health probes stay plain HTTP.
#include <signal.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/integration/kubectl_server_fixture.h"
#include "test/integration/process_util.h"

namespace kcr {
namespace integration {
namespace {

using apiserver::BackgroundProcess;
using apiserver::ProcessResult;
using apiserver::ReadFile;
using apiserver::RunProcess;
using apiserver::WaitFor;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kManager[] = "cmd/controller-manager/controller-manager";
constexpr char kAdminToken[] = "admin-token-for-metrics";

// One HTTP(S) answer: status code and body.
struct Answer {
  int code = 0;
  std::string body;
};

// GET `url` with curl (not verifying the self-signed certificate), with
// `token` as bearer token when not empty.
Answer Get(const std::string& url, const std::string& token) {
  std::vector<std::string> argv = {
      "/usr/bin/curl", "-sk", "--max-time", "20", "-w", "\n%{http_code}"};
  if (!token.empty()) {
    argv.push_back("-H");
    argv.push_back("Authorization: Bearer " + token);
  }
  argv.push_back(url);
  ProcessResult r = RunProcess(argv, {});
  Answer answer;
  const size_t nl = r.out.rfind('\n');
  if (nl == std::string::npos ||
      !absl::SimpleAtoi(r.out.substr(nl + 1), &answer.code)) {
    return answer;
  }
  answer.body = r.out.substr(0, nl);
  return answer;
}

class SecureMetricsRbacTest : public KubectlServerFixture {
 protected:
  std::string Kubectl(const std::vector<std::string>& args) {
    KubectlResult r = kubectl_->Run(args);
    EXPECT_EQ(r.exit_code, 0) << absl::StrJoin(args, " ") << ": " << r.err;
    return r.out;
  }

  // A token of ServiceAccount `ns`/`name`.
  std::string Token(const std::string& ns, const std::string& name) {
    return std::string(absl::StripAsciiWhitespace(
        Kubectl({"create", "token", name, "-n", ns, "--duration=1h"})));
  }

  // The line of the manager's stdout starting with `prefix`, without it,
  // up to the path ("https://127.0.0.1:PORT").
  std::string Printed(const std::string& out_path, const std::string& prefix) {
    std::string url;
    WaitFor(
        [&] {
          for (absl::string_view line :
               absl::StrSplit(ReadFile(out_path), '\n')) {
            if (absl::ConsumePrefix(&line, prefix)) {
              url = std::string(line.substr(0, line.find('/', 8)));
              return true;
            }
          }
          return false;
        },
        absl::Seconds(30));
    return url;
  }
};

TEST_F(SecureMetricsRbacTest, OnlyAScraperWithTheReaderRoleReadsMetrics) {
  ASSERT_NO_FATAL_FAILURE(
      StartServer("secure-metrics", {"--secure", "--authorization-mode=RBAC",
                                     absl::StrCat("--token=", kAdminToken)}));
  Kubectl({"create", "namespace", "kcr-system"});
  for (const char* file :
       {"service_account.yaml", "cluster_role.yaml",
        "cluster_role_binding.yaml", "leader_election_role.yaml",
        "leader_election_role_binding.yaml", "metrics_auth_role_binding.yaml",
        "metrics_reader_role.yaml"}) {
    Kubectl({"apply", "-f", absl::StrCat("manifests/rbac/", file)});
  }
  Kubectl({"create", "serviceaccount", "scraper"});
  Kubectl({"create", "serviceaccount", "stranger"});
  Kubectl({"create", "clusterrolebinding", "scraper-reads-metrics",
           "--clusterrole=kcr-metrics-reader",
           "--serviceaccount=default:scraper"});

  // The manager's kubeconfig: the server's, with the ServiceAccount's
  // token for the admin's.
  const std::string token = Token("kcr-system", "kcr-controller-manager");
  ASSERT_FALSE(token.empty());
  const std::string kubeconfig = dir_ + "/manager.kubeconfig";
  const std::string admin = ReadFile(server_->kubeconfig());
  ASSERT_THAT(admin, HasSubstr(kAdminToken));
  ProcessResult w =
      RunProcess({"/usr/bin/tee", kubeconfig}, {},
                 absl::StrReplaceAll(admin, {{kAdminToken, token}}));
  ASSERT_EQ(w.exit_code, 0) << w.err;

  const std::string out = dir_ + "/manager.out";
  const std::string log = dir_ + "/manager.log";
  BackgroundProcess manager(
      {kManager, "--kubeconfig=" + kubeconfig, "--controllers=pods",
       "--metrics-secure", "--metrics-bind-address=127.0.0.1:0",
       "--health-probe-bind-address=127.0.0.1:0"},
      {}, out, log);
  ASSERT_TRUE(manager.started());
  const std::string metrics = Printed(out, "metrics: ");
  const std::string health = Printed(out, "health probes: ");
  ASSERT_TRUE(absl::StartsWith(metrics, "https://")) << ReadFile(out);
  ASSERT_TRUE(absl::StartsWith(health, "http://")) << ReadFile(out);
  // Serving and allowed: the probes answer over plain HTTP without a token.
  EXPECT_TRUE(WaitFor([&] { return Get(health + "/readyz", "").code == 200; },
                      absl::Seconds(30)))
      << ReadFile(log);
  EXPECT_EQ(Get(health + "/healthz", "").code, 200);

  Answer none = Get(metrics + "/metrics", "");
  EXPECT_EQ(none.code, 401) << none.body;
  Answer forged = Get(metrics + "/metrics", "not-a-token");
  EXPECT_EQ(forged.code, 401) << forged.body;
  Answer stranger = Get(metrics + "/metrics", Token("default", "stranger"));
  EXPECT_EQ(stranger.code, 403) << stranger.body;
  EXPECT_THAT(stranger.body,
              HasSubstr("Authorization denied for user "
                        "system:serviceaccount:default:stranger"));
  Answer scraper = Get(metrics + "/metrics", Token("default", "scraper"));
  EXPECT_EQ(scraper.code, 200) << scraper.body;
  EXPECT_THAT(scraper.body, HasSubstr("# TYPE "));
  EXPECT_THAT(scraper.body, HasSubstr("rest_client_requests_total"));
  // A scraper's answer is the manager's reviews, not the manager's role:
  // the manager itself may not read /metrics.
  Answer self = Get(metrics + "/metrics", token);
  EXPECT_EQ(self.code, 403) << self.body;

  manager.Signal(SIGTERM);
  EXPECT_EQ(manager.Wait(absl::Seconds(30)), std::optional<int>(0));
  // The ServiceAccount's roles were enough: the server refused nothing.
  EXPECT_THAT(ReadFile(log), Not(HasSubstr("forbidden")));
  if (HasFailure()) ADD_FAILURE() << "the manager's log:\n" << ReadFile(log);
}

}  // namespace
}  // namespace integration
}  // namespace kcr
