// ManagerFixture: end-to-end tests of the controllers as users run them —
// cmd/local-apiserver as a process (with its garbage collector, namespace
// controller and simulated node), manifests/crds applied with kubectl, and
// cmd/controller-manager as one or more processes against it. Tests drive
// both with the real kubectl and read what the managers logged.
//
//   StartServerWithCrds("nginx");
//   ManagerProcess* mgr = StartManager({"--controllers=nginx"});
//   ASSERT_TRUE(Apply(kNginxYaml));
//   EXPECT_TRUE(WaitForJsonpath({"deploy", "web-deploy"},
//                               "{.spec.replicas}", "2"));
//
// Every manager still running when the test ends is stopped with SIGTERM
// and must exit 0.
#ifndef KCR_TEST_E2E_MANAGER_FIXTURE_H_
#define KCR_TEST_E2E_MANAGER_FIXTURE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "test/integration/kubectl_server_fixture.h"
#include "test/integration/process_util.h"

namespace kcr::e2e {

// The binaries, relative to the test's runfiles directory.
inline constexpr char kManagerBinary[] =
    "cmd/controller-manager/controller-manager";

// One cmd/controller-manager process. Its stdout and stderr (the glog
// lines) go to files in the test's directory.
class ManagerProcess {
 public:
  // Starts the binary with --kubeconfig=`kubeconfig`, metrics and health
  // probes on free loopback ports, and `args`.
  ManagerProcess(const std::string& kubeconfig, const std::string& dir,
                 int index, const std::vector<std::string>& args);

  bool started() const { return process_.started(); }
  bool Running() { return process_.Running(); }
  // Everything it has logged so far (stderr).
  std::string Log() const;
  // Its stdout so far (the metrics and probe addresses it printed).
  std::string Out() const;
  // How many lines of Log() contain `text`.
  int CountLogLines(const std::string& text) const;
  // "http://127.0.0.1:<port>" of /metrics once it printed it ("" if not
  // within `timeout`).
  std::string MetricsUrl(absl::Duration timeout = absl::Seconds(30));
  std::string HealthUrl(absl::Duration timeout = absl::Seconds(30));
  // GET `path` ("/metrics", "/readyz") from the address the URL names;
  // the body, or "" when it cannot connect.
  static std::string HttpGet(const std::string& url, const std::string& path);
  // SIGTERM; the exit code (nullopt if it had to be killed).
  std::optional<int> Stop(absl::Duration timeout = absl::Seconds(40));
  // SIGKILL: a crash. It gives nothing back (a held Lease stays held).
  void Kill();

 private:
  std::string UrlPrinted(const std::string& prefix, absl::Duration timeout);

  std::string out_path_;
  std::string err_path_;
  apiserver::BackgroundProcess process_;
};

class ManagerFixture : public integration::KubectlServerFixture {
 protected:
  static constexpr char kCrdDir[] = "manifests/crds";

  // StartServer(name, server_args), then `kubectl apply` of manifests/crds
  // and a wait until the custom resources are served. ASSERTs inside.
  void StartServerWithCrds(const std::string& name,
                           std::vector<std::string> server_args = {});
  // Waits until each of manifests/crds' CRDs is Established (once they
  // are applied, here or from a rendering of manifests/). ASSERTs inside.
  void WaitForCrdsEstablished();

  // A new controller-manager against the server; owned by the fixture.
  // ASSERT on its started().
  ManagerProcess* StartManager(const std::vector<std::string>& args);

  // kubectl `args`, failing the test (ADD_FAILURE with its stderr) when it
  // exits non-zero; its stdout.
  std::string Kubectl(const std::vector<std::string>& args,
                      const std::string& stdin_text = "");
  // `kubectl apply -f -` of `yaml`; true when it succeeded.
  bool Apply(const std::string& yaml);
  // `kubectl get <get_args> -o jsonpath=<jsonpath>`: its stdout, or
  // nullopt when kubectl failed (e.g. NotFound).
  std::optional<std::string> Jsonpath(const std::vector<std::string>& get_args,
                                      const std::string& jsonpath);
  // Polls Jsonpath until it prints `want`; false after `timeout`, with
  // the last value seen in the failure message the caller writes
  // (last_jsonpath_).
  bool WaitForJsonpath(const std::vector<std::string>& get_args,
                       const std::string& jsonpath, const std::string& want,
                       absl::Duration timeout = absl::Seconds(60));
  // Polls until `kubectl get <get_args>` answers NotFound.
  bool WaitForGone(const std::vector<std::string>& get_args,
                   absl::Duration timeout = absl::Seconds(60));

  void TearDown() override;

  std::vector<std::unique_ptr<ManagerProcess>> managers_;
  std::string last_jsonpath_;
};

}  // namespace kcr::e2e

#endif  // KCR_TEST_E2E_MANAGER_FIXTURE_H_
