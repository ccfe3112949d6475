// The copyrator explored (runtime/explorer): crashes after each of its
// writes, API errors on each, stale views of rules and ConfigMaps,
// unobserved states. Two scenarios, so that each explores in well under
// two minutes: a rule, a source change, a new namespace and the rule's
// delete ("copyrator"); a foreign object at a target name, a source
// delete and the rule's delete ("copyrator-foreign"). A copy must never
// overwrite a foreign object. Rerun one point with
//   bazel test //test/controllers/copyrator:copyrator_explorer_test
//     --test_env=KCR_EXPLORE=<scenario>:<point>:seed=1
#include <string>

#include "absl/strings/str_cat.h"
#include "api/crd/crd_manifests.h"
#include "api/object.h"
#include "base/status_macros.h"
#include "controllers/copyrator/copy_plan.h"
#include "controllers/copyrator/copyrator_controller.h"
#include "glog/logging.h"
#include "gtest/gtest.h"
#include "runtime/explorer/explorer.h"

namespace kcr::copyrator {
namespace {

const client::Resource kConfigMaps =
    client::Resource::Namespaced({"", "v1", "configmaps"});
const client::Resource kNamespaces =
    client::Resource::ClusterScoped({"", "v1", "namespaces"});
const client::Resource kRules =
    client::Resource::Namespaced({"flant.com", "v1", "copyrators"});

// A ConfigMap the copyrator does not own (label foreign=true), standing
// where a copy would go.
std::string Foreign(const std::string& ns, const std::string& name) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{)",
                      R"("name":")", name, R"(","namespace":")", ns,
                      R"(","labels":{"foreign":"true"}},)",
                      R"("data":{"owner":"someone"}})");
}

std::string Source(const std::string& name, const std::string& value) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{)",
                      R"("name":")", name, R"(","namespace":"default",)",
                      R"("labels":{"copyrator":"true"}},)",
                      R"("data":{"value":")", value, R"("}})");
}

constexpr char kRule[] = R"({
    "apiVersion":"flant.com/v1","kind":"CopyratorRule",
    "metadata":{"name":"main-rule","namespace":"default"},
    "ruleType":"configmap","selector":{"copyrator":"true"},
    "namespace":"default"})";

std::string NamespaceJson(const std::string& name) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Namespace",)",
                      R"("metadata":{"name":")", name, R"("}})");
}

// Every ConfigMap labelled foreign=true still holds what its owner wrote.
absl::Status ForeignUntouched(const Context& ctx, client::RestClient& client) {
  client::ListOptions list;
  list.label_selector = "foreign=true";
  auto got = client.List(ctx, kConfigMaps, list);
  if (!got.ok()) return got.status();
  for (const api::ObjectPtr& o : got->items) {
    const rapidjson::Value* owner = o->Find("/data/owner");
    if (IsCopy(*o) || owner == nullptr || !owner->IsString() ||
        std::string(owner->GetString()) != "someone") {
      return absl::FailedPreconditionError(absl::StrCat(
          "foreign ConfigMap ", RefOf(*o), " was overwritten: ", o->ToJson()));
    }
  }
  return absl::OkStatus();
}

explorer::Scenario Base(const std::string& name) {
  explorer::Scenario s;
  s.name = name;
  s.crds = {{"copyrator-crd.yaml", api::crd::kCopyratorRuleCrdYaml}};
  s.add_controllers = [](controller::Manager* mgr) {
    return AddCopyratorController(*mgr, CopyratorOptions{});
  };
  s.invariants = {
      {"a copy never overwrites a foreign object", ForeignUntouched}};
  // Sources and their copies (which carry the sources' labels), the
  // foreign objects, the rules.
  s.state = {explorer::Collection(kRules),
             explorer::Collection(kConfigMaps, "copyrator=true"),
             explorer::Collection(kConfigMaps, "foreign=true")};
  return s;
}

// A rule, its source changed, a new namespace, the rule deleted (its
// copies go with it).
explorer::Scenario SyncScenario() {
  explorer::Scenario s = Base("copyrator");
  s.objects = {{"source.yaml", Source("app-config", "1")}};
  s.steps = {
      explorer::Step::Create(kRules.InNamespace("default"), kRule),
      explorer::Step::Patch(kConfigMaps.InNamespace("default"), "app-config",
                            R"({"data":{"value":"2"}})"),
      explorer::Step::Create(kNamespaces, NamespaceJson("team-a")),
      explorer::Step::Delete(kRules.InNamespace("default"), "main-rule"),
  };
  return s;
}

// A foreign object at a target name, then its source; the source deleted
// (its copies go, the foreign object stays), then the rule.
explorer::Scenario ForeignScenario() {
  explorer::Scenario s = Base("copyrator-foreign");
  s.objects = {{"team-a.yaml", NamespaceJson("team-a")}};
  explorer::Step foreign = explorer::Step::Create(
      kConfigMaps.InNamespace("team-a"), Foreign("team-a", "db-config"));
  explorer::Step source = explorer::Step::Create(
      kConfigMaps.InNamespace("default"), Source("db-config", "x"));
  s.steps = {
      explorer::Step::Create(kRules.InNamespace("default"), kRule),
      explorer::Step{
          "create foreign team-a/db-config, then source "
          "default/db-config",
          [foreign, source](const Context& ctx, client::RestClient& client) {
            KCR_RETURN_IF_ERROR(foreign.run(ctx, client));
            return source.run(ctx, client);
          }},
      explorer::Step::Delete(kConfigMaps.InNamespace("default"), "db-config"),
      explorer::Step::Delete(kRules.InNamespace("default"), "main-rule"),
  };
  return s;
}

void ExpectNoFindings(const explorer::Scenario& scenario) {
  explorer::ExplorerOptions options;
  // The runs mostly wait for quiet: more of them at once than cores.
  options.parallelism = 4;
  auto report = explorer::Explore(scenario, options);
  ASSERT_TRUE(report.ok()) << report.status();
  if (report->skipped) return;
  EXPECT_GT(report->runs.size(), 1u);
  EXPECT_TRUE(report->ok()) << report->ToString();
  LOG(INFO) << report->ToString();
}

TEST(CopyratorExplorerTest, RuleSourceChangeNewNamespaceRuleDelete) {
  ExpectNoFindings(SyncScenario());
}

TEST(CopyratorExplorerTest, ForeignObjectAndSourceDelete) {
  ExpectNoFindings(ForeignScenario());
}

}  // namespace
}  // namespace kcr::copyrator
