#include "test/e2e/manager_fixture.h"

#include <signal.h>

#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "test/runtime/metrics/raw_http.h"

namespace kcr::e2e {
namespace {

using apiserver::ReadFile;
using apiserver::WaitFor;

std::vector<std::string> ManagerArgv(const std::string& kubeconfig,
                                     const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kManagerBinary, "--kubeconfig=" + kubeconfig,
                                   "--metrics-bind-address=127.0.0.1:0",
                                   "--health-probe-bind-address=127.0.0.1:0"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace

ManagerProcess::ManagerProcess(const std::string& kubeconfig,
                               const std::string& dir, int index,
                               const std::vector<std::string>& args)
    : out_path_(absl::StrCat(dir, "/manager-", index, ".out")),
      err_path_(absl::StrCat(dir, "/manager-", index, ".log")),
      process_(ManagerArgv(kubeconfig, args), {}, out_path_, err_path_) {}

std::string ManagerProcess::Log() const { return ReadFile(err_path_); }

std::string ManagerProcess::Out() const { return ReadFile(out_path_); }

int ManagerProcess::CountLogLines(const std::string& text) const {
  int n = 0;
  for (absl::string_view line : absl::StrSplit(Log(), '\n')) {
    if (absl::StrContains(line, text)) ++n;
  }
  return n;
}

std::string ManagerProcess::UrlPrinted(const std::string& prefix,
                                       absl::Duration timeout) {
  std::string url;
  WaitFor(
      [&] {
        for (absl::string_view line : absl::StrSplit(Out(), '\n')) {
          if (absl::ConsumePrefix(&line, prefix)) {
            // "http://127.0.0.1:PORT/metrics" or ".../healthz, /readyz".
            const size_t path = line.find('/', line.find("//") + 2);
            url = std::string(line.substr(0, path));
            return true;
          }
        }
        return false;
      },
      timeout);
  return url;
}

std::string ManagerProcess::MetricsUrl(absl::Duration timeout) {
  return UrlPrinted("metrics: ", timeout);
}

std::string ManagerProcess::HealthUrl(absl::Duration timeout) {
  return UrlPrinted("health probes: ", timeout);
}

std::string ManagerProcess::HttpGet(const std::string& url,
                                    const std::string& path) {
  int port = 0;
  const size_t colon = url.rfind(':');
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(url.substr(colon + 1), &port)) {
    return "";
  }
  const std::string answer = metrics::testing::Get(port, path);
  if (!absl::StartsWith(answer, "HTTP/1.1 ")) return "";
  return metrics::testing::Body(answer);
}

std::optional<int> ManagerProcess::Stop(absl::Duration timeout) {
  process_.Signal(SIGTERM);
  std::optional<int> code = process_.Wait(timeout);
  if (!code.has_value()) process_.Stop(absl::ZeroDuration());
  return code;
}

void ManagerProcess::Kill() {
  process_.Signal(SIGKILL);
  process_.Wait(absl::Seconds(10));
}

void ManagerFixture::StartServerWithCrds(const std::string& name,
                                         std::vector<std::string> server_args) {
  ASSERT_NO_FATAL_FAILURE(StartServer(name, std::move(server_args)));
  // Each file by name: kustomize does not read the runfiles' symlinks.
  integration::KubectlResult r =
      kubectl_->Run({"apply", "-f", absl::StrCat(kCrdDir, "/nginx.yaml"), "-f",
                     absl::StrCat(kCrdDir, "/copyrator_rule.yaml"), "-f",
                     absl::StrCat(kCrdDir, "/loadtest.yaml"), "-f",
                     absl::StrCat(kCrdDir, "/simpledeployment.yaml")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_NO_FATAL_FAILURE(WaitForCrdsEstablished());
}

void ManagerFixture::WaitForCrdsEstablished() {
  for (const char* crd :
       {"nginxes.example.org", "copyrators.flant.com", "loadtests.example.org",
        "simpledeployments.example.org"}) {
    ASSERT_TRUE(WaitForJsonpath(
        {"crd", crd}, "{.status.conditions[?(@.type==\"Established\")].status}",
        "True"))
        << crd << ": " << last_jsonpath_;
  }
}

ManagerProcess* ManagerFixture::StartManager(
    const std::vector<std::string>& args) {
  const int index = static_cast<int>(managers_.size());
  managers_.push_back(std::make_unique<ManagerProcess>(server_->kubeconfig(),
                                                       dir_, index, args));
  return managers_.back().get();
}

std::string ManagerFixture::Kubectl(const std::vector<std::string>& args,
                                    const std::string& stdin_text) {
  integration::KubectlResult r = kubectl_->Run(args, stdin_text);
  if (r.exit_code != 0) {
    ADD_FAILURE() << "kubectl " << absl::StrJoin(args, " ") << " exited "
                  << r.exit_code << ": " << r.err;
  }
  return r.out;
}

bool ManagerFixture::Apply(const std::string& yaml) {
  integration::KubectlResult r = kubectl_->Run({"apply", "-f", "-"}, yaml);
  if (r.exit_code != 0) {
    ADD_FAILURE() << "kubectl apply exited " << r.exit_code << ": " << r.err;
  }
  return r.exit_code == 0;
}

std::optional<std::string> ManagerFixture::Jsonpath(
    const std::vector<std::string>& get_args, const std::string& jsonpath) {
  std::vector<std::string> args = {"get"};
  args.insert(args.end(), get_args.begin(), get_args.end());
  args.push_back("-o");
  args.push_back("jsonpath=" + jsonpath);
  integration::KubectlResult r = kubectl_->Run(args);
  if (r.exit_code != 0) {
    last_jsonpath_ = "<kubectl failed: " + r.err + ">";
    return std::nullopt;
  }
  last_jsonpath_ = r.out;
  return r.out;
}

bool ManagerFixture::WaitForJsonpath(const std::vector<std::string>& get_args,
                                     const std::string& jsonpath,
                                     const std::string& want,
                                     absl::Duration timeout) {
  return WaitFor(
      [&] {
        std::optional<std::string> got = Jsonpath(get_args, jsonpath);
        return got.has_value() && *got == want;
      },
      timeout);
}

bool ManagerFixture::WaitForGone(const std::vector<std::string>& get_args,
                                 absl::Duration timeout) {
  std::vector<std::string> args = {"get"};
  args.insert(args.end(), get_args.begin(), get_args.end());
  return WaitFor(
      [&] {
        integration::KubectlResult r = kubectl_->Run(args);
        return r.exit_code != 0 && absl::StrContains(r.err, "NotFound");
      },
      timeout);
}

void ManagerFixture::TearDown() {
  for (size_t i = 0; i < managers_.size(); ++i) {
    if (!managers_[i]->Running()) continue;
    std::optional<int> code = managers_[i]->Stop();
    EXPECT_EQ(code, std::optional<int>(0))
        << "manager " << i << " did not stop cleanly; its log:\n"
        << managers_[i]->Log();
  }
  managers_.clear();
  KubectlServerFixture::TearDown();
}

}  // namespace kcr::e2e
