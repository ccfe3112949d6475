// cmd/controller-manager as a process: --help lists its flags; a bad flag,
// an unknown controller and a missing or broken kubeconfig are one line
// and exit code 2; --embedded starts an API server that kubectl can use
// with the printed kubeconfig, runs the pods controller (kcr_pods on
// /metrics follows a pod made with kubectl) and the simpledeployment one
// (the sample's children), and stops on SIGINT with 0;
// --controllers=simpledeployment runs that one alone; started against a
// server without the SimpleDeployment CRD it keeps running (ready) and
// handles a SimpleDeployment once the CRD is applied.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/integration/process_util.h"
#include "test/runtime/metrics/raw_http.h"

extern char** environ;

namespace kcr {
namespace {

using ::kcr::apiserver::ProcessResult;
using ::kcr::apiserver::ReadFile;
using ::kcr::apiserver::RunProcess;
using ::kcr::apiserver::WaitFor;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kBinary[] = "cmd/controller-manager/controller-manager";
constexpr char kServerBinary[] = "cmd/local-apiserver/local-apiserver";
constexpr char kSimpleDeploymentCrd[] = "manifests/crds/simpledeployment.yaml";

void ExpectOneLineExit2(const ProcessResult& r, const std::string& label) {
  EXPECT_EQ(r.exit_code, 2) << label << ": " << r.err;
  EXPECT_THAT(r.err, StartsWith("controller-manager: ")) << label;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1)
      << label << ": " << r.err;
}

TEST(ControllerManagerTest, HelpListsItsFlags) {
  ProcessResult r = RunProcess({kBinary, "--help"}, {});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string text = r.out + r.err;
  for (const char* flag :
       {"--kubeconfig", "--context", "--namespace", "--controllers",
        "--workers", "--leader-elect", "--leader-election-namespace",
        "--leader-election-id", "--metrics-bind-address",
        "--health-probe-bind-address", "--qps", "--burst", "--embedded",
        "--resync-period", "--loadtest-image", "--leader-elect-lease-duration",
        "--leader-elect-renew-deadline", "--leader-elect-retry-period",
        "--event-ttl"}) {
    EXPECT_THAT(text, HasSubstr(flag)) << flag;
  }
  // Every controller is named in --controllers' help.
  EXPECT_THAT(text, HasSubstr("copyrator, loadtest, nginx, pods, "
                              "simpledeployment."));
  // gflags' own flags are not the manager's.
  EXPECT_THAT(text, ::testing::Not(HasSubstr("--flagfile")));
}

TEST(ControllerManagerTest, BadFlagsExitTwo) {
  ExpectOneLineExit2(RunProcess({kBinary, "--bogus"}, {}), "--bogus");
  ExpectOneLineExit2(RunProcess({kBinary, "--workers=x"}, {}), "--workers=x");
  ExpectOneLineExit2(RunProcess({kBinary, "--workers=0"}, {}), "--workers=0");
  ExpectOneLineExit2(RunProcess({kBinary, "--event-ttl=soon"}, {}),
                     "--event-ttl=soon");
  ExpectOneLineExit2(RunProcess({kBinary, "--event-ttl=-1h"}, {}),
                     "--event-ttl=-1h");
  ExpectOneLineExit2(RunProcess({kBinary, "--resync-period=often"}, {}),
                     "--resync-period=often");
  ExpectOneLineExit2(RunProcess({kBinary, "--resync-period=-1s"}, {}),
                     "--resync-period=-1s");
  ExpectOneLineExit2(RunProcess({kBinary, "--loadtest-image="}, {}),
                     "--loadtest-image=");
  // The renew deadline must be shorter than the lease.
  ExpectOneLineExit2(
      RunProcess({kBinary, "--leader-elect-renew-deadline=20s"}, {}),
      "--leader-elect-renew-deadline=20s");
  ExpectOneLineExit2(
      RunProcess({kBinary, "--leader-elect-retry-period=0s"}, {}),
      "--leader-elect-retry-period=0s");
  ProcessResult r = RunProcess({kBinary, "--controllers=pods,nope"}, {});
  ExpectOneLineExit2(r, "--controllers");
  EXPECT_THAT(r.err, HasSubstr("\"nope\""));
  r = RunProcess({kBinary, "--controllers=simpledeployment,simpledeploy"}, {});
  ExpectOneLineExit2(r, "--controllers=simpledeployment,simpledeploy");
  EXPECT_THAT(r.err, HasSubstr("\"simpledeploy\""));
  EXPECT_THAT(r.err, HasSubstr("known: copyrator, loadtest, nginx, pods, "
                               "simpledeployment)"));
}

TEST(ControllerManagerTest, MissingOrBrokenKubeconfigIsOneLine) {
  const std::string dir = ::testing::TempDir();
  ProcessResult r =
      RunProcess({kBinary, "--kubeconfig=" + dir + "/does-not-exist"}, {});
  ExpectOneLineExit2(r, "missing");
  EXPECT_THAT(r.err, HasSubstr("kubeconfig"));

  const std::string broken = dir + "/broken-kubeconfig";
  std::ofstream(broken) << "apiVersion: v1\nclusters: [\n  - {{{\n";
  ExpectOneLineExit2(RunProcess({kBinary, "--kubeconfig=" + broken}, {}),
                     "broken");

  // A kubeconfig without the asked-for context.
  const std::string other = dir + "/other-kubeconfig";
  std::ofstream(other) << "apiVersion: v1\nkind: Config\nclusters:\n"
                          "- name: c\n  cluster: {server: http://127.0.0.1:1}\n"
                          "contexts:\n- name: x\n  context: {cluster: c}\n"
                          "current-context: x\n";
  ExpectOneLineExit2(
      RunProcess({kBinary, "--kubeconfig=" + other, "--context=nope"}, {}),
      "context");
}

// GET http://127.0.0.1:<port><path>; the body of a 200, or nullopt.
std::optional<std::string> HttpGet(int port, const std::string& path) {
  const std::string answer = metrics::testing::Get(port, path);
  if (!absl::StartsWith(answer, "HTTP/1.1 200")) return std::nullopt;
  return metrics::testing::Body(answer);
}

// The value after "<prefix>" on the first line of `text` that starts so.
std::string LineAfter(const std::string& text, const std::string& prefix) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::ConsumePrefix(&line, prefix)) return std::string(line);
  }
  return "";
}

class EmbeddedTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (pid_t pid : {pid_, server_pid_}) {
      if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
      }
    }
  }

  // Starts the binary with stdout and stderr to files.
  void Start(const std::vector<std::string>& args) {
    out_ = ::testing::TempDir() + "/cm.out";
    err_ = ::testing::TempDir() + "/cm.err";
    Spawn(kBinary, args, out_, err_, &pid_);
  }

  // Starts `binary` with stdout and stderr to the files `out` and `err`.
  void Spawn(const char* binary, const std::vector<std::string>& args,
             const std::string& out, const std::string& err, pid_t* pid) {
    std::vector<std::string> argv = {binary};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_EQ(
        posix_spawn(pid, binary, &actions, nullptr, cargv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
  }

  // The exit code after `sig`, or nullopt if it did not exit in time.
  std::optional<int> Signal(int sig) {
    kill(pid_, sig);
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (absl::Now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
    return std::nullopt;
  }

  ProcessResult Kubectl(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/kubectl",
                                     "--kubeconfig=" + kubeconfig_};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, {{"HOME", ::testing::TempDir()}}, "",
                      absl::Seconds(60));
  }

  pid_t pid_ = -1;
  pid_t server_pid_ = -1;  // the local API server, when started
  std::string out_, err_, kubeconfig_;
};

TEST_F(EmbeddedTest, ServesKubectlAndMetricsAndStopsOnSigint) {
  Start({"--embedded", "--metrics-bind-address=127.0.0.1:0",
         "--health-probe-bind-address=127.0.0.1:0"});
  if (HasFatalFailure()) return;
  ASSERT_TRUE(WaitFor(
      [&] { return absl::StrContains(ReadFile(out_), "Ctrl-C stops."); },
      absl::Seconds(60)))
      << ReadFile(out_) << ReadFile(err_);
  const std::string out = ReadFile(out_);
  kubeconfig_ = LineAfter(out, "kubeconfig: ");
  ASSERT_FALSE(kubeconfig_.empty()) << out;
  EXPECT_THAT(out, HasSubstr("kubectl --kubeconfig=" + kubeconfig_ + " get"));
  int metrics_port = 0;
  ASSERT_TRUE(absl::SimpleAtoi(
      absl::StripSuffix(
          absl::StripPrefix(LineAfter(out, "metrics: "), "http://127.0.0.1:"),
          "/metrics"),
      &metrics_port))
      << out;

  ProcessResult get = Kubectl({"get", "pods"});
  EXPECT_EQ(get.exit_code, 0) << get.err;
  // The CRDs are installed.
  ProcessResult crds = Kubectl({"get", "crds", "-o", "name"});
  EXPECT_EQ(crds.exit_code, 0) << crds.err;
  EXPECT_THAT(crds.out, HasSubstr("nginxes.example.org"));
  EXPECT_THAT(crds.out, HasSubstr("loadtests.example.org"));
  // And the samples of manifests/samples.
  ProcessResult samples =
      Kubectl({"get", "nginxes,loadtests,copyrators", "-A", "-o", "name"});
  EXPECT_EQ(samples.exit_code, 0) << samples.err;
  EXPECT_THAT(samples.out, HasSubstr("nginx.example.org/my-nginx"));
  EXPECT_THAT(samples.out, HasSubstr("loadtest.example.org/hello-load"));
  EXPECT_THAT(samples.out, HasSubstr("copyratorrule.flant.com/main-rule"));

  // RBAC over HTTPS: the printed kubeconfig is an admin's; the
  // controllers run as the ServiceAccount of manifests/rbac, which may do
  // what the shipped roles say and no more.
  EXPECT_THAT(out, HasSubstr("embedded API server: https://127.0.0.1:"));
  EXPECT_THAT(out, HasSubstr("controllers run as: system:serviceaccount:"
                             "kcr-system:kcr-controller-manager"));
  ProcessResult whoami =
      Kubectl({"auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"});
  EXPECT_EQ(whoami.out, "admin") << whoami.err;
  const std::string as_manager =
      "--as=system:serviceaccount:kcr-system:kcr-controller-manager";
  EXPECT_EQ(Kubectl({"auth", "can-i", "create", "pods", "-A", as_manager}).out,
            "yes\n");
  EXPECT_EQ(Kubectl({"auth", "can-i", "get", "secrets", as_manager}).out,
            "no\n");

  // In a namespace of its own: the samples' controllers run pods in
  // default.
  ProcessResult ns = Kubectl({"create", "namespace", "try"});
  ASSERT_EQ(ns.exit_code, 0) << ns.err;
  ProcessResult run = Kubectl({"run", "web", "-n", "try", "--image=nginx"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // The simulated node runs it; the pods controller counts it.
  const std::string want = "kcr_pods{namespace=\"try\",phase=\"Running\"} 1";
  std::string metrics;
  EXPECT_TRUE(WaitFor(
      [&] {
        metrics = HttpGet(metrics_port, "/metrics").value_or("");
        return absl::StrContains(metrics, want);
      },
      absl::Seconds(60)))
      << metrics;
  EXPECT_TRUE(WaitFor(
      [&] {
        return absl::StrContains(ReadFile(err_),
                                 "pod updated namespace=try name=web");
      },
      absl::Seconds(30)))
      << ReadFile(err_);

  // The SimpleDeployment sample, handled: its pod's uid in CHILDREN.
  EXPECT_THAT(out, HasSubstr(" get sd,pods\n"));
  std::string sd;
  EXPECT_TRUE(WaitFor(
      [&] {
        sd = Kubectl({"get", "sd", "example-01"}).out;
        return absl::StrContains(sd, "CHILDREN") &&
               absl::StrContains(sd, "[\"");
      },
      absl::Seconds(60)))
      << sd << ReadFile(err_);

  // The shipped roles were enough: the server refused the manager nothing.
  EXPECT_THAT(ReadFile(err_), Not(HasSubstr("forbidden")));

  EXPECT_EQ(Signal(SIGINT), 0) << ReadFile(err_);
  // The kubeconfig of a stopped server is removed.
  EXPECT_EQ(access(kubeconfig_.c_str(), F_OK), -1);
}

// --controllers=simpledeployment runs that controller alone: the sample's
// pod is made and Running on the simulated node (it sleeps 120 s), with
// the pod's uid as the SimpleDeployment's children; the Nginx sample is
// left alone.
TEST_F(EmbeddedTest, RunsTheSimpleDeploymentControllerAlone) {
  Start({"--embedded", "--controllers=simpledeployment", "--workers=2",
         "--metrics-bind-address=0", "--health-probe-bind-address=0"});
  if (HasFatalFailure()) return;
  ASSERT_TRUE(WaitFor(
      [&] { return absl::StrContains(ReadFile(out_), "Ctrl-C stops."); },
      absl::Seconds(60)))
      << ReadFile(out_) << ReadFile(err_);
  kubeconfig_ = LineAfter(ReadFile(out_), "kubeconfig: ");
  ASSERT_FALSE(kubeconfig_.empty());
  EXPECT_THAT(ReadFile(err_), HasSubstr("controllers=simpledeployment "));

  std::string child;
  ASSERT_TRUE(WaitFor(
      [&] {
        child = Kubectl({"get", "sd", "example-01", "-o",
                         "jsonpath={.status.create_fn.children[0]}"})
                    .out;
        return !child.empty();
      },
      absl::Seconds(60)))
      << ReadFile(err_);
  std::string pods;
  EXPECT_TRUE(WaitFor(
      [&] {
        pods = Kubectl({"get", "pods", "-n", "default", "-o",
                        "jsonpath={range .items[*]}{.metadata.uid} "
                        "{.status.phase}{\"\\n\"}{end}"})
                   .out;
        return absl::StrContains(pods, child + " Running");
      },
      absl::Seconds(60)))
      << pods;
  EXPECT_TRUE(WaitFor([&] {
    return absl::StrContains(ReadFile(err_),
                             "[default/example-01] Handler 'create_fn' "
                             "succeeded.");
  })) << ReadFile(err_);
  // No other controller runs: the Nginx sample gets no Deployment.
  EXPECT_EQ(Kubectl({"get", "deployments", "-A", "-o", "name"}).out, "");

  EXPECT_EQ(Signal(SIGTERM), 0) << ReadFile(err_);
}

// --namespace holds for the handlers too: a SimpleDeployment in that
// namespace is handled, the sample in default is not.
TEST_F(EmbeddedTest, TheSimpleDeploymentControllerWatchesOnlyNamespace) {
  Start({"--embedded", "--controllers=simpledeployment", "--namespace=other",
         "--metrics-bind-address=0", "--health-probe-bind-address=0"});
  if (HasFatalFailure()) return;
  ASSERT_TRUE(WaitFor(
      [&] { return absl::StrContains(ReadFile(out_), "Ctrl-C stops."); },
      absl::Seconds(60)))
      << ReadFile(out_) << ReadFile(err_);
  kubeconfig_ = LineAfter(ReadFile(out_), "kubeconfig: ");
  ASSERT_FALSE(kubeconfig_.empty());
  ProcessResult ns = Kubectl({"create", "namespace", "other"});
  ASSERT_EQ(ns.exit_code, 0) << ns.err;
  std::ofstream(::testing::TempDir() + "/other-sd.yaml")
      << "apiVersion: example.org/v1\nkind: SimpleDeployment\n"
         "metadata: {name: in-other, namespace: other}\n"
         "spec: {sleepytime: 60}\n";
  ProcessResult apply =
      Kubectl({"apply", "-f", ::testing::TempDir() + "/other-sd.yaml"});
  ASSERT_EQ(apply.exit_code, 0) << apply.err;

  auto children = [&](const std::string& namespace_, const std::string& name) {
    return Kubectl({"get", "sd", name, "-n", namespace_, "-o",
                    "jsonpath={.status.create_fn.children[0]}"})
        .out;
  };
  EXPECT_TRUE(WaitFor([&] { return !children("other", "in-other").empty(); },
                      absl::Seconds(60)))
      << ReadFile(err_);
  EXPECT_EQ(children("default", "example-01"), "");
  EXPECT_EQ(Kubectl({"get", "pods", "-n", "default", "-o", "name"}).out, "");

  EXPECT_EQ(Signal(SIGTERM), 0) << ReadFile(err_);
}

// Against a server without the SimpleDeployment CRD the manager does not
// exit: it is ready, waits for the resource, and handles a SimpleDeployment
// once the CRD is applied (as the reconcilers wait for theirs).
TEST_F(EmbeddedTest, WaitsForTheSimpleDeploymentCrd) {
  const std::string dir = ::testing::TempDir();
  kubeconfig_ = dir + "/server-kubeconfig";
  Spawn(kServerBinary, {"--port=0", "--kubeconfig-out=" + kubeconfig_},
        dir + "/server.out", dir + "/server.err", &server_pid_);
  if (HasFatalFailure()) return;
  ASSERT_TRUE(WaitFor(
      [&] {
        return Kubectl({"get", "ns"}).exit_code == 0;
      },
      absl::Seconds(60)))
      << ReadFile(dir + "/server.err");

  Start({"--kubeconfig=" + kubeconfig_, "--controllers=simpledeployment",
         "--metrics-bind-address=0",
         "--health-probe-bind-address=127.0.0.1:0"});
  if (HasFatalFailure()) return;
  int probe_port = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        return absl::SimpleAtoi(
            absl::StripSuffix(
                absl::StripPrefix(LineAfter(ReadFile(out_), "health probes: "),
                                  "http://127.0.0.1:"),
                "/healthz, /readyz"),
            &probe_port);
      },
      absl::Seconds(60)))
      << ReadFile(out_) << ReadFile(err_);
  EXPECT_TRUE(
      WaitFor([&] { return HttpGet(probe_port, "/readyz").has_value(); },
              absl::Seconds(60)))
      << ReadFile(err_);
  EXPECT_TRUE(WaitFor(
      [&] {
        return absl::StrContains(ReadFile(err_),
                                 "simpledeployments.example.org is not "
                                 "available yet");
      },
      absl::Seconds(30)))
      << ReadFile(err_);
  // Still running a while later.
  absl::SleepFor(absl::Seconds(2));
  int status = 0;
  ASSERT_EQ(waitpid(pid_, &status, WNOHANG), 0) << ReadFile(err_);
  EXPECT_TRUE(HttpGet(probe_port, "/readyz").has_value());

  ProcessResult crd = Kubectl({"apply", "-f", kSimpleDeploymentCrd});
  ASSERT_EQ(crd.exit_code, 0) << crd.err;
  ASSERT_TRUE(WaitFor(
      [&] {
        std::ofstream(dir + "/late-sd.yaml")
            << "apiVersion: example.org/v1\nkind: SimpleDeployment\n"
               "metadata: {name: late, namespace: default}\n"
               "spec: {sleepytime: 60}\n";
        return Kubectl({"apply", "-f", dir + "/late-sd.yaml"}).exit_code == 0;
      },
      absl::Seconds(60)));
  std::string child;
  EXPECT_TRUE(WaitFor(
      [&] {
        child = Kubectl({"get", "sd", "late", "-o",
                         "jsonpath={.status.create_fn.children[0]}"})
                    .out;
        return !child.empty();
      },
      absl::Seconds(90)))
      << ReadFile(err_);

  EXPECT_EQ(Signal(SIGTERM), 0) << ReadFile(err_);
}

}  // namespace
}  // namespace kcr
