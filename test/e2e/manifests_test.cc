// manifests/ as a cluster operator uses it: `kubectl kustomize manifests/`
// renders offline, and the output applied to a local API server (a
// process, with its deployment and replicaset controllers and simulated
// node) creates every object; the controller manager's Deployment brings
// up its two pods, with the probes, security context, resources and env
// exactly as written; a second apply changes nothing; and the samples
// apply on the installed CRDs.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/e2e/manager_fixture.h"

namespace kcr::e2e {
namespace {

using apiserver::ProcessResult;
using apiserver::RunProcess;
using apiserver::WaitFor;
using ::testing::Eq;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Optional;

const std::vector<std::string> kInSystem = {"-n", "kcr-system"};
constexpr char kDeploy[] = "deployment/kcr-controller-manager";
constexpr char kManagerPods[] =
    "app.kubernetes.io/name=kcr,app.kubernetes.io/component="
    "controller-manager";

// The documents of a multi-document YAML stream (empty ones skipped).
int CountDocuments(const std::string& yaml) {
  int n = 0;
  for (absl::string_view doc : absl::StrSplit(yaml, "\n---\n")) {
    if (absl::StrContains(doc, "kind:")) ++n;
  }
  return n;
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipWhitespace());
}

class ManifestsTest : public ManagerFixture {
 protected:
  // A copy of manifests/ with the runfiles' symlinks resolved (kustomize
  // refuses files that are links out of the kustomization's directory).
  void CopyManifests() {
    manifests_ = dir_ + "/manifests";
    ProcessResult r =
        RunProcess({"/bin/cp", "-rL", "manifests", manifests_}, {});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // `kubectl kustomize <dir>` written to <dir>.yaml; its path.
  std::string Render(const std::string& dir) {
    std::string out = Kubectl({"kustomize", dir});
    EXPECT_FALSE(out.empty()) << dir;
    const std::string path = dir + ".yaml";
    ProcessResult r = RunProcess({"/usr/bin/tee", path}, {}, out);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return path;
  }

  std::string Get(const std::vector<std::string>& args,
                  const std::string& jsonpath) {
    std::vector<std::string> get = args;
    get.insert(get.end(), kInSystem.begin(), kInSystem.end());
    return Jsonpath(get, jsonpath).value_or("<error>");
  }

  // Installs the rendered manifests/ and returns the rendered text.
  std::string Install() {
    const std::string rendered = Render(manifests_);
    const std::string text = apiserver::ReadFile(rendered);
    const std::string out = Kubectl({"apply", "-f", rendered});
    // One "<kind>/<name> created" line per object: nothing refused,
    // nothing skipped.
    std::vector<std::string> lines = Lines(out);
    EXPECT_EQ(static_cast<int>(lines.size()), CountDocuments(text)) << out;
    for (const std::string& line : lines) {
      EXPECT_TRUE(absl::EndsWith(line, " created")) << line;
    }
    // Every object reads back.
    EXPECT_EQ(static_cast<int>(
                  Lines(Kubectl({"get", "-f", rendered, "-o", "name"})).size()),
              CountDocuments(text));
    return rendered;
  }

  std::string manifests_;
};

TEST_F(ManifestsTest, InstallsAndTheManagerDeploymentComesUpAsWritten) {
  ASSERT_NO_FATAL_FAILURE(StartServer("manifests"));
  ASSERT_NO_FATAL_FAILURE(CopyManifests());
  const std::string rendered = Install();

  // What the ClusterRole grants: named resources and verbs only.
  const std::string verbs =
      Jsonpath({"clusterrole", "kcr-controller-manager"}, "{.rules[*].verbs}")
          .value_or("<error>");
  EXPECT_THAT(verbs, HasSubstr("watch"));
  EXPECT_THAT(verbs, Not(HasSubstr("*")));
  EXPECT_THAT(Jsonpath({"clusterrole", "kcr-controller-manager"},
                       "{.rules[*].resources}"),
              Optional(Not(HasSubstr("*"))));
  EXPECT_THAT(Jsonpath({"clusterrolebinding", "kcr-controller-manager"},
                       "{.subjects[0].namespace}/{.subjects[0].name}"),
              Optional(Eq("kcr-system/kcr-controller-manager")));
  EXPECT_EQ(Get({"rolebinding", "kcr-leader-election"},
                "{.roleRef.kind}/{.roleRef.name}"),
            "Role/kcr-leader-election");
  EXPECT_EQ(Get({"role", "kcr-leader-election"}, "{.rules[0].resources[0]}"),
            "leases");

  // The server's deployment controller and the simulated node bring up
  // both replicas.
  EXPECT_TRUE(WaitForJsonpath({kDeploy, "-n", "kcr-system"},
                              "{.status.readyReplicas}", "2"))
      << last_jsonpath_;
  EXPECT_TRUE(WaitForJsonpath({"pods", "-n", "kcr-system", "-l", kManagerPods},
                              "{range .items[*]}{.status.phase}{\" \"}{end}",
                              "Running Running "))
      << last_jsonpath_;

  // What the Deployment says reaches the pods unchanged.
  for (const std::vector<std::string>& of :
       {std::vector<std::string>{kDeploy},
        std::vector<std::string>{"pods", "-l", kManagerPods}}) {
    const bool is_pod = of[0] == "pods";
    // The pod spec, under the Deployment's template or a pod's own.
    const std::string spec =
        is_pod ? "{.items[0].spec" : "{.spec.template.spec";
    const std::string c = spec + ".containers[0]";
    auto field = [&](const std::string& jsonpath) { return Get(of, jsonpath); };
    SCOPED_TRACE(of[0]);
    EXPECT_EQ(field(spec + ".serviceAccountName}"), "kcr-controller-manager");
    EXPECT_EQ(field(spec + ".securityContext.runAsNonRoot}"), "true");
    EXPECT_EQ(field(spec + ".securityContext.runAsUser}"), "65532");
    EXPECT_EQ(field(spec + ".securityContext.seccompProfile.type}"),
              "RuntimeDefault");
    EXPECT_EQ(field(c + ".securityContext.runAsNonRoot}"), "true");
    EXPECT_EQ(field(c + ".securityContext.readOnlyRootFilesystem}"), "true");
    EXPECT_EQ(field(c + ".securityContext.allowPrivilegeEscalation}"), "false");
    EXPECT_EQ(field(c + ".securityContext.capabilities.drop[*]}"), "ALL");
    EXPECT_EQ(field(c + ".securityContext.seccompProfile.type}"),
              "RuntimeDefault");
    EXPECT_EQ(field(c + ".livenessProbe.httpGet.path}"), "/healthz");
    EXPECT_EQ(field(c + ".livenessProbe.httpGet.port}"), "health");
    EXPECT_EQ(field(c + ".readinessProbe.httpGet.path}"), "/readyz");
    EXPECT_EQ(field(c + ".readinessProbe.httpGet.port}"), "health");
    EXPECT_EQ(field(c + ".ports[?(@.name==\"health\")].containerPort}"),
              "8081");
    EXPECT_EQ(field(c + ".ports[?(@.name==\"metrics\")].containerPort}"),
              "8080");
    EXPECT_EQ(field(c + ".resources.requests.cpu}"), "100m");
    EXPECT_EQ(field(c + ".resources.requests.memory}"), "64Mi");
    EXPECT_EQ(field(c + ".resources.limits.cpu}"), "1");
    EXPECT_EQ(field(c + ".resources.limits.memory}"), "256Mi");
    EXPECT_EQ(field(c + ".args[*]}"),
              "--leader-elect --leader-election-namespace=$(POD_NAMESPACE) "
              "--metrics-bind-address=:8080 "
              "--health-probe-bind-address=:8081");
    EXPECT_EQ(field(c + ".env[?(@.name==\"POD_NAMESPACE\")].valueFrom."
                        "fieldRef.fieldPath}"),
              "metadata.namespace");
    // The load pods run the manager's own image.
    EXPECT_EQ(field(c + ".env[?(@.name==\"LOADTEST_IMAGE\")].value}"),
              field(c + ".image}"));
  }

  // Applying the same output again changes nothing (an upgrade with no
  // change is a no-op).
  for (const std::string& line : Lines(Kubectl({"apply", "-f", rendered}))) {
    EXPECT_TRUE(absl::EndsWith(line, " unchanged")) << line;
  }
}

// The Deployment's arguments, as the kubelet would pass them ($(POD_NAMESPACE)
// expanded; the fixed ports moved to free loopback ones), are flags the
// manager accepts, and with them it takes the Lease in kcr-system.
TEST_F(ManifestsTest, TheDeploymentsArgumentsLeadInTheManagersNamespace) {
  ASSERT_NO_FATAL_FAILURE(StartServer("args"));
  ASSERT_NO_FATAL_FAILURE(CopyManifests());
  Install();
  const std::string args =
      Get({kDeploy}, "{.spec.template.spec.containers[0].args[*]}");
  std::vector<std::string> argv = {"--controllers=pods"};
  for (absl::string_view word : absl::StrSplit(args, ' ', absl::SkipEmpty())) {
    std::string arg(word);
    absl::StrReplaceAll({{"$(POD_NAMESPACE)", "kcr-system"}}, &arg);
    if (absl::StartsWith(arg, "--metrics-bind-address=") ||
        absl::StartsWith(arg, "--health-probe-bind-address=")) {
      arg = arg.substr(0, arg.find('=') + 1) + "127.0.0.1:0";
    }
    argv.push_back(arg);
  }
  ManagerProcess* mgr = StartManager(argv);
  ASSERT_TRUE(mgr->started());
  std::string holder;
  EXPECT_TRUE(WaitFor(
      [&] {
        holder =
            Get({"lease", "kcr-controller-manager"}, "{.spec.holderIdentity}");
        return !holder.empty() && holder != "<error>";
      },
      absl::Seconds(60)))
      << holder << "\n"
      << mgr->Log();
  EXPECT_TRUE(
      WaitFor([&] { return mgr->CountLogLines("manager: leading") == 1; },
              absl::Seconds(60)))
      << mgr->Log();
  EXPECT_THAT(ManagerProcess::HttpGet(mgr->HealthUrl(), "/readyz"),
              HasSubstr("ok"));
}

TEST_F(ManifestsTest, SamplesApplyOnTheInstalledCrds) {
  ASSERT_NO_FATAL_FAILURE(StartServer("samples"));
  ASSERT_NO_FATAL_FAILURE(CopyManifests());
  Install();
  for (const char* crd : {"nginxes.example.org", "copyrators.flant.com",
                          "loadtests.example.org"}) {
    ASSERT_TRUE(WaitForJsonpath(
        {"crd", crd}, "{.status.conditions[?(@.type==\"Established\")].status}",
        "True"))
        << crd << ": " << last_jsonpath_;
  }
  const std::string samples = Render(manifests_ + "/samples");
  const std::string out = Kubectl({"apply", "-f", samples});
  std::vector<std::string> lines = Lines(out);
  EXPECT_EQ(static_cast<int>(lines.size()),
            CountDocuments(apiserver::ReadFile(samples)))
      << out;
  for (const std::string& line : lines) {
    EXPECT_TRUE(absl::EndsWith(line, " created")) << line;
  }
  EXPECT_THAT(Jsonpath({"nginx", "my-nginx"}, "{.spec.replicas}"),
              Optional(Eq("2")));
  EXPECT_THAT(Jsonpath({"copyrators", "main-rule"}, "{.ruleType}"),
              Optional(Eq("configmap")));
  EXPECT_THAT(Jsonpath({"loadtest", "hello-load"}, "{.spec.test.servicePort}"),
              Optional(Eq("http")));
  // What the copyrator rule selects, and the port the LoadTest names.
  EXPECT_THAT(
      Jsonpath({"configmap", "copyrator-demo"}, "{.metadata.labels.copyrator}"),
      Optional(Eq("true")));
  EXPECT_THAT(
      Jsonpath({"service", "hello"}, "{.spec.ports[?(@.name==\"http\")].port}"),
      Optional(Eq("80")));
}

}  // namespace
}  // namespace kcr::e2e
