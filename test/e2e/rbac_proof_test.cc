// manifests/rbac proven by enforcement, both ways, on one local API server
// with RBAC (a process, HTTPS):
// - enough: managers running as a ServiceAccount bound to the shipped
//   ClusterRole and Role (every controller, with --leader-elect and
//   --metrics-secure plus the system:auth-delegator binding, and another
//   with --shards) work through the samples, a spec change and deletes,
//   serve a scrape, and the server refuses them nothing;
// - no more than needed: for each rule of the ClusterRole and the Role, a
//   manager bound to a copy without that rule gets a 403 from the server
//   for a call that rule allows; without the system:auth-delegator
//   binding, a scrape is a 500 after a 403 on the TokenReview.
// Each manager has a namespace of its own (--namespace) with its own copy
// of the samples, so that no manager's writes stand in for another's; all
// run at once.
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
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

using apiserver::ReadFile;
using apiserver::WaitFor;

constexpr char kAdminToken[] = "rbac-proof-admin";
constexpr char kClusterRole[] = "manifests/rbac/cluster_role.yaml";
constexpr char kRole[] = "manifests/rbac/leader_election_role.yaml";

// A rule as kubectl's jsonpath prints it.
struct Rule {
  std::set<std::string> groups, resources, verbs;
  std::string ToString() const {
    return absl::StrCat("{", absl::StrJoin(groups, ","), "} {",
                        absl::StrJoin(resources, ","), "} {",
                        absl::StrJoin(verbs, ","), "}");
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

// Whether the server's log line "forbidden user=<u> verb=<v> path=<p>"
// (its --v=2 record of each 403) is a call `rule` allows.
bool RuleAllows(const Rule& rule, absl::string_view verb,
                absl::string_view path) {
  if (rule.verbs.count(std::string(verb)) == 0) return false;
  std::vector<absl::string_view> parts =
      absl::StrSplit(path, '/', absl::SkipEmpty());
  // /api/v1/... or /apis/<group>/<version>/...
  std::string group;
  size_t i = 0;
  if (parts.size() >= 2 && parts[0] == "api") {
    i = 2;
  } else if (parts.size() >= 3 && parts[0] == "apis") {
    group = std::string(parts[1]);
    i = 3;
  } else {
    return false;
  }
  if (rule.groups.count(group) == 0) return false;
  if (i + 1 < parts.size() && parts[i] == "namespaces" &&
      parts.size() > i + 2) {
    i += 2;  // a namespaced resource, not the namespaces resource
  }
  if (i >= parts.size()) return false;
  std::string resource(parts[i]);
  // <resource>/<name>/<subresource>
  if (i + 2 < parts.size()) absl::StrAppend(&resource, "/", parts[i + 2]);
  return rule.resources.count(resource) != 0;
}

class RbacProofTest : public ManagerFixture {
 protected:
  std::vector<Rule> RulesOf(const std::vector<std::string>& get) {
    std::vector<Rule> rules;
    const std::string out =
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
  }

  // `file` (a role) without rule `index` and named `name`, as JSON.
  std::string Without(const std::string& file, int index,
                      const std::string& name) {
    return Kubectl(
        {"patch", "--local", "-f", file, "--type=json", "-o", "json", "-p",
         absl::StrCat("[{\"op\":\"remove\",\"path\":\"/rules/", index,
                      "\"},{\"op\":\"replace\",\"path\":\"/metadata/name\","
                      "\"value\":\"",
                      name, "\"}]")});
  }

  // The samples, in namespace `ns`.
  std::string Samples(const std::string& ns) {
    std::string yaml;
    for (const char* file : {"hello_service.yaml", "nginx.yaml",
                             "loadtest.yaml", "copyrator_source.yaml",
                             "copyrator_rule.yaml", "simpledeployment.yaml"}) {
      std::string text = ReadFile(absl::StrCat("manifests/samples/", file));
      text = absl::StrReplaceAll(
          text, {{"namespace: default", absl::StrCat("namespace: ", ns)},
                 {"  name: main-rule\n",
                  absl::StrCat("  name: main-rule\n  namespace: ", ns, "\n")}});
      absl::StrAppend(&yaml, "---\n", text, "\n");
    }
    return yaml;
  }

  // ServiceAccount `name` in kcr-system bound to ClusterRole `cluster_role`
  // and, in kcr-system, Role `role`; namespace `name` with the samples; a
  // manager running as it (every controller, --namespace=`name`) with
  // `args`.
  ManagerProcess* Variant(const std::string& name,
                          const std::string& cluster_role,
                          const std::string& role,
                          const std::vector<std::string>& args) {
    const std::string objects = absl::StrCat(
        "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: ", name,
        ", namespace: kcr-system}\n---\n"
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\n"
        "metadata: {name: ",
        name,
        "}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: "
        "ClusterRole, name: ",
        cluster_role, "}\nsubjects:\n- {kind: ServiceAccount, name: ", name,
        ", namespace: kcr-system}\n---\n"
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\n"
        "metadata: {name: ",
        name,
        ", namespace: kcr-system}\nroleRef: {apiGroup: "
        "rbac.authorization.k8s.io, kind: Role, name: ",
        role, "}\nsubjects:\n- {kind: ServiceAccount, name: ", name,
        ", namespace: kcr-system}\n---\n"
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: ",
        name, "}\n", Samples(name));
    EXPECT_TRUE(Apply(objects)) << name;
    const std::string token(absl::StripAsciiWhitespace(Kubectl(
        {"create", "token", name, "-n", "kcr-system", "--duration=1h"})));
    const std::string kubeconfig = absl::StrCat(dir_, "/", name, ".kubeconfig");
    std::ofstream(kubeconfig) << absl::StrReplaceAll(
        ReadFile(server_->kubeconfig()), {{kAdminToken, token}});
    std::vector<std::string> argv = {
        absl::StrCat("--namespace=", name),
        "--leader-election-namespace=kcr-system",
        absl::StrCat("--leader-election-id=", name)};
    argv.insert(argv.end(), args.begin(), args.end());
    managers_.push_back(std::make_unique<ManagerProcess>(
        kubeconfig, dir_, static_cast<int>(managers_.size()), argv));
    EXPECT_TRUE(managers_.back()->started()) << name;
    return managers_.back().get();
  }

  // The server's 403s to `user`: {verb, path} pairs.
  std::vector<std::pair<std::string, std::string>> Refusals(
      const std::string& user) {
    std::vector<std::pair<std::string, std::string>> out;
    const std::string prefix = absl::StrCat("forbidden user=", user, " verb=");
    for (absl::string_view line :
         absl::StrSplit(ReadFile(dir_ + "/apiserver.log"), '\n')) {
      const size_t at = line.find(prefix);
      if (at == absl::string_view::npos) continue;
      absl::string_view rest = line.substr(at + prefix.size());
      std::vector<absl::string_view> parts = absl::StrSplit(rest, " path=");
      if (parts.size() != 2) continue;
      out.emplace_back(std::string(parts[0]), std::string(parts[1]));
    }
    return out;
  }
};

std::string User(const std::string& name) {
  return absl::StrCat("system:serviceaccount:kcr-system:", name);
}

TEST_F(RbacProofTest, TheShippedRolesAreEnoughAndEveryRuleIsNeeded) {
  const absl::Time start = absl::Now();
  ASSERT_NO_FATAL_FAILURE(StartServerWithCrds(
      "rbac-proof", {"--secure", "--authorization-mode=RBAC",
                     "--enable-admission-plugins="
                     "OwnerReferencesPermissionEnforcement",
                     absl::StrCat("--token=", kAdminToken), "--v=2"}));
  ASSERT_TRUE(Apply(ReadFile("manifests/namespace.yaml")));
  Kubectl({"apply", "-f", kClusterRole, "-f", kRole});
  const std::vector<Rule> cluster_rules =
      RulesOf({"clusterrole", "kcr-controller-manager"});
  const std::vector<Rule> role_rules =
      RulesOf({"role", "kcr-leader-election", "-n", "kcr-system"});
  ASSERT_FALSE(cluster_rules.empty());
  ASSERT_FALSE(role_rules.empty());

  // Enough: the shipped roles, with leader election (and secure metrics,
  // with the system:auth-delegator binding of
  // rbac/metrics_auth_role_binding.yaml) and with shards.
  ASSERT_TRUE(Apply(absl::StrReplaceAll(
      ReadFile("manifests/rbac/metrics_auth_role_binding.yaml"),
      {{"name: kcr-controller-manager\n    namespace",
        "name: kcr-all\n    "
        "namespace"}})));
  ManagerProcess* all =
      Variant("kcr-all", "kcr-controller-manager", "kcr-leader-election",
              {"--leader-elect", "--metrics-secure"});
  Variant("kcr-shards", "kcr-controller-manager", "kcr-leader-election",
          {"--shards=2"});
  // No more than needed: one rule less each; and secure metrics without
  // the system:auth-delegator binding.
  std::map<std::string, Rule> removed;  // variant -> the rule it lacks
  ManagerProcess* no_delegator =
      Variant("kcr-no-delegator", "kcr-controller-manager",
              "kcr-leader-election", {"--leader-elect", "--metrics-secure"});
  removed["kcr-no-delegator"] =
      Rule{{"authentication.k8s.io"}, {"tokenreviews"}, {"create"}};
  for (size_t i = 0; i < cluster_rules.size(); ++i) {
    const std::string name = absl::StrCat("kcr-no-c", i);
    ASSERT_TRUE(Apply(Without(kClusterRole, i, name)));
    Variant(name, name, "kcr-leader-election", {"--leader-elect"});
    removed[name] = cluster_rules[i];
  }
  for (size_t i = 0; i < role_rules.size(); ++i) {
    const std::string name = absl::StrCat("kcr-no-r", i);
    std::string role = Without(kRole, i, name);
    ASSERT_TRUE(Apply(role));
    Variant(name, "kcr-controller-manager", name, {"--leader-elect"});
    removed[name] = role_rules[i];
  }
  const absl::Time started = absl::Now();

  // The flows succeed with the shipped roles: an Nginx's Deployment and
  // status, a LoadTest run, the copyrator's copies, a SimpleDeployment's
  // pod; then a spec change and deletions.
  for (const std::string ns : {"kcr-all", "kcr-shards"}) {
    EXPECT_TRUE(WaitForJsonpath({"nginx", "my-nginx", "-n", ns},
                                "{.status.readyReplicas}", "2"))
        << ns << " " << last_jsonpath_;
    EXPECT_TRUE(WaitForJsonpath({"loadtest", "hello-load", "-n", ns},
                                "{.status.state}", "finished"))
        << ns << " " << last_jsonpath_;
    EXPECT_TRUE(WaitFor(
        [&] {
          return !Jsonpath({"sd", "example-01", "-n", ns},
                           "{.status.create_fn.children[0]}")
                      .value_or("")
                      .empty();
        },
        absl::Seconds(60)))
        << ns;
    Kubectl({"patch", "nginx", "my-nginx", "-n", ns, "--type=merge", "-p",
             "{\"spec\":{\"replicas\":3}}"});
    EXPECT_TRUE(WaitForJsonpath({"deploy", "my-nginx-deploy", "-n", ns},
                                "{.spec.replicas}", "3"))
        << ns << " " << last_jsonpath_;
    Kubectl({"delete", "loadtest", "hello-load", "-n", ns});
    Kubectl({"delete", "copyrators", "main-rule", "-n", ns});
    Kubectl({"delete", "sd", "example-01", "-n", ns});
  }

  // A scrape: the manager asks the server a TokenReview.
  auto scrape = [&](ManagerProcess* mgr) {
    apiserver::ProcessResult r = apiserver::RunProcess(
        {"/usr/bin/curl", "-sk", "-o", "/dev/null", "-w", "%{http_code}",
         "--max-time", "20", "-H",
         absl::StrCat("Authorization: Bearer ", kAdminToken),
         absl::StrCat(mgr->MetricsUrl(), "/metrics")},
        {});
    return r.out;
  };
  EXPECT_EQ(scrape(all), "200");
  EXPECT_EQ(scrape(no_delegator), "500");

  // Every rule is needed: each variant gets a 403 for a call its missing
  // rule allows (the finalizers rule through the
  // OwnerReferencesPermissionEnforcement admission plugin: a child with
  // blockOwnerDeletion needs update on its owner's finalizers).
  std::set<std::string> pending;
  for (const auto& [name, rule] : removed) pending.insert(name);
  WaitFor(
      [&] {
        for (auto it = pending.begin(); it != pending.end();) {
          bool shown = false;
          for (const auto& [verb, path] : Refusals(User(*it))) {
            shown |= RuleAllows(removed[*it], verb, path);
          }
          it = shown ? pending.erase(it) : std::next(it);
        }
        return pending.empty();
      },
      absl::Seconds(90));
  for (const std::string& name : pending) {
    std::string refusals;
    for (const auto& [verb, path] : Refusals(User(name))) {
      absl::StrAppend(&refusals, "\n  ", verb, " ", path);
    }
    ADD_FAILURE() << "no 403 shows that this rule is needed: "
                  << removed[name].ToString() << " (" << name
                  << "); the server refused:" << refusals;
  }
  // ... and the shipped roles were refused nothing.
  for (const std::string name : {"kcr-all", "kcr-shards"}) {
    for (const auto& [verb, path] : Refusals(User(name))) {
      ADD_FAILURE() << name << " was refused " << verb << " " << path;
    }
  }
  std::cout << "rbac proof: " << removed.size() << " rules, "
            << managers_.size() << " managers; set up in "
            << absl::FormatDuration(started - start) << ", total "
            << absl::FormatDuration(absl::Now() - start) << std::endl;
}

}  // namespace
}  // namespace kcr::e2e
