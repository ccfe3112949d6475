// manifests/ as a cluster operator uses it: `kubectl kustomize manifests/`
// renders offline, and the output applied to a local API server (a
// process, with its deployment and replicaset controllers and simulated
// node) creates every object; the controller manager's Deployment brings
// up its two pods, with the probes, security context, resources and env
// exactly as written; a second apply changes nothing; the RBAC allows
// every call the controllers make; and the samples apply on the
// installed CRDs.
#include <cstring>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
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
using ::testing::IsEmpty;
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
              "8443");
    EXPECT_EQ(field(c + ".resources.requests.cpu}"), "100m");
    EXPECT_EQ(field(c + ".resources.requests.memory}"), "64Mi");
    EXPECT_EQ(field(c + ".resources.limits.cpu}"), "1");
    EXPECT_EQ(field(c + ".resources.limits.memory}"), "256Mi");
    EXPECT_EQ(field(c + ".args[*]}"),
              "--leader-elect --leader-election-namespace=$(POD_NAMESPACE) "
              "--metrics-bind-address=:8443 --metrics-secure "
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

// One API request as the server logged it, in RBAC's terms.
struct Request {
  std::string verb;  // get, list, watch, create, update, patch, delete, ...
  std::string group;
  std::string resource;  // with "/<subresource>" for one
  std::string namespace_;
  std::string line;  // method and target, for messages
};

// The RBAC view of `method` `target`; nullopt for non-resource URLs
// (discovery, /version, /openapi), which every user may read.
std::optional<Request> ParseRequest(const std::string& method,
                                    const std::string& target) {
  const size_t q = target.find('?');
  const std::string path = target.substr(0, q);
  const std::string query = q == std::string::npos ? "" : target.substr(q);
  std::vector<std::string> seg = absl::StrSplit(path, '/', absl::SkipEmpty());
  Request r;
  r.line = absl::StrCat(method, " ", target);
  size_t rest = 0;
  if (seg.size() >= 2 && seg[0] == "api") {
    rest = 2;
  } else if (seg.size() >= 3 && seg[0] == "apis") {
    r.group = seg[1];
    rest = 3;
  } else {
    return std::nullopt;
  }
  if (seg.size() <= rest) return std::nullopt;
  if (seg[rest] == "namespaces" && seg.size() >= rest + 3) {
    r.namespace_ = seg[rest + 1];
    rest += 2;
  }
  r.resource = seg[rest];
  const bool named = seg.size() > rest + 1;
  if (seg.size() > rest + 2) absl::StrAppend(&r.resource, "/", seg[rest + 2]);
  if (method == "GET") {
    r.verb = named ? "get"
             : absl::StrContains(query, "watch=true") ||
                     absl::StrContains(query, "watch=1")
                 ? "watch"
                 : "list";
  } else if (method == "POST") {
    r.verb = "create";
  } else if (method == "PUT") {
    r.verb = "update";
  } else if (method == "PATCH") {
    r.verb = "patch";
  } else if (method == "DELETE") {
    r.verb = named ? "delete" : "deletecollection";
  } else {
    r.verb = absl::AsciiStrToLower(method);
  }
  return r;
}

// One rule of a (Cluster)Role.
struct Rule {
  std::set<std::string> groups, resources, verbs;
  bool Allows(const Request& r) const {
    return groups.count(r.group) != 0 && resources.count(r.resource) != 0 &&
           verbs.count(r.verb) != 0;
  }
};

// ["a","b"] as kubectl's jsonpath prints a list of strings.
std::set<std::string> JsonStrings(absl::string_view list) {
  std::set<std::string> out;
  absl::ConsumePrefix(&list, "[");
  absl::ConsumeSuffix(&list, "]");
  for (absl::string_view item : absl::StrSplit(list, ',')) {
    absl::ConsumePrefix(&item, "\"");
    absl::ConsumeSuffix(&item, "\"");
    out.insert(std::string(item));
  }
  return out;
}

// What the controllers call, read from the server's request log while
// the manager (every controller, with --leader-elect) works through the
// samples and a Secret rule, an Nginx spec change, a source change, a
// SimpleDeployment's sleepytime change, and the deletion of a LoadTest, a
// rule and a SimpleDeployment, is all allowed by the
// ClusterRole, or by the Role in kcr-system. (The local server stores
// RBAC but does not enforce it: this is what stands between a new call
// in a controller and Forbidden in a real cluster.)
TEST_F(ManifestsTest, TheRbacAllowsEveryCallTheControllersMake) {
  ASSERT_NO_FATAL_FAILURE(StartServer("rbac", {"--v=2"}));
  ASSERT_NO_FATAL_FAILURE(CopyManifests());
  Install();
  ASSERT_NO_FATAL_FAILURE(WaitForCrdsEstablished());
  Kubectl({"apply", "-f", Render(manifests_ + "/samples")});
  // And a Secret rule, the copyrator's other kind.
  ASSERT_TRUE(Apply(R"(apiVersion: v1
kind: Secret
metadata:
  name: shared-token
  namespace: default
  labels:
    share: "yes"
stringData:
  token: not-a-real-token
---
apiVersion: flant.com/v1
kind: CopyratorRule
metadata:
  name: secret-rule
  namespace: default
ruleType: secret
selector:
  share: "yes"
namespace: default
)"));
  auto rules_of = [&](const std::vector<std::string>& get) {
    std::vector<Rule> rules;
    std::string out =
        Jsonpath(get,
                 "{range .rules[*]}{.apiGroups}|{.resources}|{.verbs}{\"\\n\"}"
                 "{end}")
            .value_or("");
    for (absl::string_view line :
         absl::StrSplit(out, '\n', absl::SkipEmpty())) {
      std::vector<absl::string_view> parts = absl::StrSplit(line, '|');
      if (parts.size() != 3) continue;
      rules.push_back(Rule{JsonStrings(parts[0]), JsonStrings(parts[1]),
                           JsonStrings(parts[2])});
    }
    return rules;
  };
  const std::vector<Rule> cluster_rules =
      rules_of({"clusterrole", "kcr-controller-manager"});
  const std::vector<Rule> role_rules =
      rules_of({"role", "kcr-leader-election", "-n", "kcr-system"});
  ASSERT_FALSE(cluster_rules.empty());
  ASSERT_FALSE(role_rules.empty());

  // From here on every request in the log is the manager's, except the
  // kubectl commands below (their writes carry fieldManager=kubectl-*;
  // the reads and deletes they make are listed in `kubectl_requests`).
  const std::string log_path = dir_ + "/apiserver.log";
  const size_t log_start = apiserver::ReadFile(log_path).size();
  std::set<std::string> kubectl_requests;
  ManagerProcess* mgr = StartManager(
      {"--leader-elect", "--leader-election-namespace=kcr-system"});
  ASSERT_TRUE(mgr->started());
  auto logged = [&](const std::string& text) {
    return WaitFor([&] { return mgr->CountLogLines(text) > 0; },
                   absl::Seconds(60));
  };
  EXPECT_TRUE(logged("created copy kind=ConfigMap")) << mgr->Log();
  EXPECT_TRUE(logged("created copy kind=Secret")) << mgr->Log();
  EXPECT_TRUE(logged("state=executing->finished")) << mgr->Log();
  EXPECT_TRUE(logged("created deployment=my-nginx-deploy")) << mgr->Log();
  EXPECT_TRUE(logged("Handler 'create_fn' succeeded.")) << mgr->Log();
  // A spec change (the Deployment updated), a source change (copies
  // updated), then the LoadTest and the rule deleted (their finalizers:
  // pods deleted, copies listed and deleted).
  kubectl_requests.insert(
      "GET /apis/example.org/v1/namespaces/default/nginxes/my-nginx");
  Kubectl({"patch", "nginx", "my-nginx", "--type=merge", "-p",
           R"({"spec":{"replicas":3}})"});
  EXPECT_TRUE(logged("updated deployment=my-nginx-deploy")) << mgr->Log();
  kubectl_requests.insert(
      "GET /api/v1/namespaces/default/configmaps/copyrator-demo");
  Kubectl({"patch", "configmap", "copyrator-demo", "--type=merge", "-p",
           R"({"data":{"greeting":"changed"}})"});
  EXPECT_TRUE(logged("updated copy kind=ConfigMap")) << mgr->Log();
  // The SimpleDeployment's handlers: a new sleepytime replaces the pod.
  kubectl_requests.insert(
      "GET /apis/example.org/v1/namespaces/default/simpledeployments/"
      "example-01");
  Kubectl({"patch", "sd", "example-01", "--type=merge", "-p",
           R"({"spec":{"sleepytime":"60"}})"});
  EXPECT_TRUE(logged("Handler 'sleepytime_fn' succeeded.")) << mgr->Log();
  kubectl_requests.insert(
      "DELETE /apis/example.org/v1/namespaces/default/loadtests/hello-load");
  kubectl_requests.insert(
      "DELETE /apis/flant.com/v1/namespaces/default/copyrators/main-rule");
  kubectl_requests.insert(
      "DELETE /apis/example.org/v1/namespaces/default/simpledeployments/"
      "example-01");
  Kubectl({"delete", "loadtest", "hello-load", "--wait=false"});
  Kubectl({"delete", "copyrators", "main-rule", "--wait=false"});
  Kubectl({"delete", "sd", "example-01", "--wait=false"});
  EXPECT_TRUE(logged("pods gone, finalizer removed")) << mgr->Log();
  EXPECT_TRUE(logged("copies removed, finalizer released")) << mgr->Log();
  EXPECT_TRUE(logged("Handler 'delete_fn' succeeded.")) << mgr->Log();
  // And its finalizer removed.
  EXPECT_TRUE(WaitForGone({"sd", "example-01"})) << mgr->Log();
  // A clean stop releases the Lease (an update) too.
  EXPECT_EQ(mgr->Stop(), std::optional<int>(0));

  const std::string log = apiserver::ReadFile(log_path).substr(log_start);
  std::set<std::string> denied, seen;
  int requests = 0;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    const size_t at = line.find("request method=");
    if (at == absl::string_view::npos) continue;
    std::vector<std::string> words = absl::StrSplit(
        line.substr(at + strlen("request method=")), ' ', absl::SkipEmpty());
    if (words.size() < 2 || !absl::StartsWith(words[1], "target=")) {
      continue;
    }
    const std::string target = words[1].substr(strlen("target="));
    if (absl::StrContains(target, "fieldManager=kubectl-") ||
        kubectl_requests.count(absl::StrCat(
            words[0], " ", target.substr(0, target.find('?')))) != 0) {
      continue;
    }
    std::optional<Request> r = ParseRequest(words[0], target);
    if (!r.has_value()) continue;
    ++requests;
    seen.insert(absl::StrCat(r->verb, " ", r->group, "/", r->resource));
    bool allowed = false;
    for (const Rule& rule : cluster_rules) allowed |= rule.Allows(*r);
    if (r->namespace_ == "kcr-system") {
      for (const Rule& rule : role_rules) allowed |= rule.Allows(*r);
    }
    if (!allowed) {
      denied.insert(absl::StrCat(r->verb, " ", r->group, "/", r->resource, " (",
                                 r->line, ")"));
    }
  }
  EXPECT_GT(requests, 20) << "the request log is not what this test reads";
  EXPECT_THAT(
      seen,
      ::testing::IsSupersetOf(
          {"watch /pods", "create /pods", "create /events",
           "update coordination.k8s.io/leases",
           "update example.org/loadtests/status", "create /configmaps",
           "watch example.org/simpledeployments",
           "patch example.org/simpledeployments",
           "patch example.org/simpledeployments/status", "delete /pods"}));
  EXPECT_THAT(denied, IsEmpty())
      << "calls the ClusterRole (manifests/rbac/cluster_role.yaml) does "
         "not allow; add them there and to docs/deploy.md";
  std::cout << "calls seen: " << absl::StrJoin(seen, ", ") << "\n";
}

TEST_F(ManifestsTest, SamplesApplyOnTheInstalledCrds) {
  ASSERT_NO_FATAL_FAILURE(StartServer("samples"));
  ASSERT_NO_FATAL_FAILURE(CopyManifests());
  Install();
  ASSERT_NO_FATAL_FAILURE(WaitForCrdsEstablished());
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
