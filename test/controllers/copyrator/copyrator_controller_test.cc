// The copyrator controller against the in-process local API server (with
// its namespace controller and garbage collector) through a Manager: copies
// follow their source and are put back when edited or deleted by hand; a
// Terminating namespace gets no copy; a change of ruleType swaps the
// copies; an invalid rule changes nothing; a source namespace deleted takes
// its copies along; a rule whose finalizer was removed by hand still has
// its copies removed; a foreign object at a target name is left alone
// until it goes.
#include "controllers/copyrator/copyrator_controller.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/crd/crd_manifests.h"
#include "api/errors/errors.h"
#include "api/json/yaml_to_json.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "base/context.h"
#include "base/status_macros.h"
#include "controllers/copyrator/copy_plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "runtime/client/options.h"
#include "runtime/controller/manager.h"
#include "test/controllers/manager_test_fixture.h"
#include "test/integration/process_util.h"

namespace kcr::copyrator {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const Context kBg = Context::Background();
const client::Resource kConfigMaps =
    client::Resource::Namespaced({"", "v1", "configmaps"});
const client::Resource kSecrets =
    client::Resource::Namespaced({"", "v1", "secrets"});
const client::Resource kNamespaces =
    client::Resource::ClusterScoped({"", "v1", "namespaces"});
const client::Resource kRules =
    client::Resource::Namespaced({"flant.com", "v1", "copyrators"});
const client::Resource kEvents =
    client::Resource::Namespaced({"", "v1", "events"});

// The tutorial's sample rule (manifests/samples/copyrator_rule.yaml).
constexpr char kSampleRule[] = R"({
  "apiVersion": "flant.com/v1", "kind": "CopyratorRule",
  "metadata": {"name": "main-rule", "namespace": "default"},
  "ruleType": "configmap",
  "selector": {"copyrator": "true"},
  "namespace": "default"})";

std::string Str(const api::Object& o, std::string_view pointer) {
  const rapidjson::Value* v = o.Find(pointer);
  if (v == nullptr) return "";
  if (v->IsString()) return v->GetString();
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> writer(out);
  v->Accept(writer);
  return out.GetString();
}

// A field of the rule's Ready condition ("" when it has none).
std::string Ready(const api::Object& rule, const std::string& field) {
  const rapidjson::Value* conditions = rule.Find("/status/conditions");
  if (conditions == nullptr || !conditions->IsArray()) return "";
  for (rapidjson::SizeType i = 0; i < conditions->Size(); ++i) {
    const std::string at = absl::StrCat("/status/conditions/", i);
    if (Str(rule, at + "/type") == "Ready") {
      return Str(rule, absl::StrCat(at, "/", field));
    }
  }
  return "";
}

class CopyratorControllerTest : public testing::ManagerTestFixture {
 protected:
  void SetUp() override {
    apiserver::ApiServerOptions options = NoSimulatedNode();
    // Long enough that a deleted namespace is still Terminating when a
    // test looks at it.
    options.controllers.namespace_deletion_grace_period = grace_period_;
    StartServer(std::move(options));
    if (HasFatalFailure()) return;
    ASSERT_NO_FATAL_FAILURE(InstallCrd(api::crd::kCopyratorRuleCrdYaml));
    ASSERT_NO_FATAL_FAILURE(StartManager());
  }

  void StartManager() {
    ManagerTestFixture::StartManager([](controller::Manager& mgr) {
      CopyratorOptions options;
      options.workers = 2;
      return AddCopyratorController(mgr, options);
    });
  }

  // The sum of the counter `name`'s series whose `label` is `value`.
  double CounterSum(const std::string& name, const std::string& label,
                    const std::string& value) {
    double sum = 0;
    for (const prometheus::MetricFamily& f :
         mgr_->GetMetricsRegistry().Collect()) {
      if (f.name != name) continue;
      for (const prometheus::ClientMetric& m : f.metric) {
        for (const prometheus::ClientMetric::Label& l : m.label) {
          if (l.name == label && l.value == value) sum += m.counter.value;
        }
      }
    }
    return sum;
  }

  double ReconcileErrors() {
    return CounterSum("controller_runtime_reconcile_errors_total", "controller",
                      kCopyratorControllerName);
  }

  double Warnings(const std::string& reason) {
    return CounterSum("kcr_copyrator_warnings_total", "reason", reason);
  }

  void CreateNamespace(const std::string& name) {
    api::ObjectBuilder b("v1", "Namespace");
    b.SetName(name);
    auto created = client_->Create(kBg, kNamespaces, *b.Build().value());
    ASSERT_TRUE(created.ok()) << created.status();
  }

  // `kind` ConfigMap or Secret, with `labels` and data {key: value}.
  void CreateSource(const std::string& kind, const std::string& ns,
                    const std::string& name,
                    const std::map<std::string, std::string>& labels,
                    const std::string& data_json) {
    api::ObjectBuilder b("v1", kind);
    b.SetNamespace(ns).SetName(name).SetLabels(labels);
    ASSERT_TRUE(b.SetJson("/data", data_json).ok());
    auto created = client_->Create(
        kBg, (kind == "Secret" ? kSecrets : kConfigMaps).InNamespace(ns),
        *b.Build().value());
    ASSERT_TRUE(created.ok()) << created.status();
  }

  absl::StatusOr<api::ObjectPtr> CreateRule(const std::string& json) {
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr rule, api::Object::Parse(json));
    return client_->Create(
        kBg, kRules.InNamespace(std::string(rule->namespace_())), *rule);
  }

  absl::StatusOr<api::ObjectPtr> PatchRule(const std::string& name,
                                           const std::string& merge_patch) {
    return client_->Patch(kBg, kRules.InNamespace("default"), name,
                          api::PatchType::kMerge, merge_patch);
  }

  api::ObjectPtr Get(const client::Resource& r, const std::string& ns,
                     const std::string& name) {
    auto got = client_->Get(kBg, ns.empty() ? r : r.InNamespace(ns), name);
    return got.ok() ? *got : nullptr;
  }

  // Polls until `pred` holds (generous: a loaded machine).
  bool Eventually(const std::function<bool()>& pred) {
    return apiserver::WaitFor(pred, absl::Seconds(60));
  }

  // Waits for the object at ns/name to satisfy `pred`; it, or null.
  api::ObjectPtr WaitFor(const client::Resource& r, const std::string& ns,
                         const std::string& name,
                         const std::function<bool(const api::Object&)>& pred) {
    api::ObjectPtr last;
    if (Eventually([&] {
          last = Get(r, ns, name);
          return last != nullptr && pred(*last);
        })) {
      return last;
    }
    ADD_FAILURE() << ns << "/" << name
                  << " last seen: " << (last ? last->ToJson() : "(none)");
    return nullptr;
  }

  bool WaitForGone(const client::Resource& r, const std::string& ns,
                   const std::string& name) {
    return Eventually([&] { return Get(r, ns, name) == nullptr; });
  }

  api::ObjectPtr WaitForRule(
      const std::string& name,
      const std::function<bool(const api::Object&)>& pred) {
    return WaitFor(kRules, "default", name, pred);
  }

  // The Active namespaces other than `besides`.
  std::vector<std::string> ActiveNamespacesBut(const std::string& besides) {
    std::vector<std::string> out;
    auto list = client_->List(kBg, kNamespaces);
    EXPECT_TRUE(list.ok()) << list.status();
    if (!list.ok()) return out;
    for (const api::ObjectPtr& ns : list->items) {
      if (ns->name() != besides && !ns->being_deleted() &&
          Str(*ns, "/status/phase") == "Active") {
        out.emplace_back(ns->name());
      }
    }
    return out;
  }

  // The reasons of the Warning Events on the rule `name`.
  std::vector<std::string> WarningsOn(const std::string& name) {
    std::vector<std::string> out;
    auto list = client_->List(kBg, kEvents.InNamespace("default"));
    if (!list.ok()) return out;
    for (const api::ObjectPtr& e : list->items) {
      if (Str(*e, "/involvedObject/name") == name &&
          Str(*e, "/type") == "Warning") {
        out.push_back(Str(*e, "/reason"));
      }
    }
    return out;
  }

  absl::Duration grace_period_ = absl::Seconds(30);
};

auto DataIs(const std::string& json) {
  return [json](const api::Object& o) { return Str(o, "/data") == json; };
}

auto ReadyIs(const std::string& status, const std::string& reason) {
  return [status, reason](const api::Object& rule) {
    return Ready(rule, "status") == status && Ready(rule, "reason") == reason &&
           Ready(rule, "observedGeneration") ==
               std::to_string(rule.generation());
  };
}

auto CopiesAre(size_t n) {
  return [n](const api::Object& rule) {
    return Str(rule, "/status/copies") == std::to_string(n);
  };
}

TEST_F(CopyratorControllerTest, CopiesFollowTheirSource) {
  ASSERT_NO_FATAL_FAILURE(CreateNamespace("team-a"));
  ASSERT_NO_FATAL_FAILURE(CreateSource("ConfigMap", "default", "app-config",
                                       {{"copyrator", "true"}},
                                       R"({"greeting":"hello"})"));
  ASSERT_TRUE(CreateRule(kSampleRule).ok());

  api::ObjectPtr copy = WaitFor(kConfigMaps, "team-a", "app-config",
                                DataIs(R"({"greeting":"hello"})"));
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->Annotation(kRuleAnnotation), "default/main-rule");
  EXPECT_EQ(copy->Annotation(kSourceAnnotation), "default/app-config");
  EXPECT_EQ(copy->Label(kRuleLabel), "default.main-rule");
  EXPECT_EQ(copy->Label(kSourceLabel), "default.app-config");
  EXPECT_EQ(copy->Label("copyrator"), "true");

  // One copy in every other Active namespace, and the rule says so.
  const std::vector<std::string> others = ActiveNamespacesBut("default");
  ASSERT_GE(others.size(), 2u);
  for (const std::string& ns : others) {
    EXPECT_NE(WaitFor(kConfigMaps, ns, "app-config",
                      DataIs(R"({"greeting":"hello"})")),
              nullptr);
  }
  api::ObjectPtr rule = WaitForRule("main-rule", [&](const api::Object& r) {
    return ReadyIs("True", "Synced")(r) && CopiesAre(others.size())(r);
  });
  ASSERT_NE(rule, nullptr);
  EXPECT_THAT(rule->finalizers(), ElementsAre(kFinalizer));
  EXPECT_EQ(Str(*rule, "/status/observedGeneration"),
            std::to_string(rule->generation()));
  EXPECT_EQ(Ready(*rule, "message"),
            absl::StrCat(others.size(), " copies of 1 source"));
  // Never onto itself.
  api::ObjectPtr source = Get(kConfigMaps, "default", "app-config");
  ASSERT_NE(source, nullptr);
  EXPECT_FALSE(source->Annotation(kRuleAnnotation).has_value());

  // The source's data and labels change: the copy follows.
  ASSERT_TRUE(client_
                  ->Patch(kBg, kConfigMaps.InNamespace("default"), "app-config",
                          api::PatchType::kMerge,
                          R"({"data":{"greeting":"bonjour"},)"
                          R"("metadata":{"labels":{"tier":"web"}}})")
                  .ok());
  copy = WaitFor(kConfigMaps, "team-a", "app-config", [](const api::Object& o) {
    return Str(o, "/data") == R"({"greeting":"bonjour"})" &&
           o.Label("tier") == "web";
  });
  ASSERT_NE(copy, nullptr);

  // A namespace created later gets a copy.
  ASSERT_NO_FATAL_FAILURE(CreateNamespace("team-b"));
  EXPECT_NE(WaitFor(kConfigMaps, "team-b", "app-config",
                    DataIs(R"({"greeting":"bonjour"})")),
            nullptr);
  EXPECT_NE(WaitForRule("main-rule", CopiesAre(others.size() + 1)), nullptr);

  // A copy edited by hand is put back; one deleted by hand comes back.
  ASSERT_TRUE(client_
                  ->Patch(kBg, kConfigMaps.InNamespace("team-a"), "app-config",
                          api::PatchType::kMerge,
                          R"({"data":{"greeting":"edited"}})")
                  .ok());
  ASSERT_TRUE(
      client_->Delete(kBg, kConfigMaps.InNamespace("team-b"), "app-config")
          .ok());
  EXPECT_NE(WaitFor(kConfigMaps, "team-a", "app-config",
                    DataIs(R"({"greeting":"bonjour"})")),
            nullptr);
  EXPECT_NE(WaitFor(kConfigMaps, "team-b", "app-config",
                    DataIs(R"({"greeting":"bonjour"})")),
            nullptr);

  // The source stops matching: its copies go, the source stays.
  ASSERT_TRUE(client_
                  ->Patch(kBg, kConfigMaps.InNamespace("default"), "app-config",
                          api::PatchType::kMerge,
                          R"({"metadata":{"labels":{"copyrator":null}}})")
                  .ok());
  EXPECT_TRUE(WaitForGone(kConfigMaps, "team-a", "app-config"));
  EXPECT_TRUE(WaitForGone(kConfigMaps, "team-b", "app-config"));
  EXPECT_NE(WaitForRule("main-rule", CopiesAre(0)), nullptr);
  EXPECT_NE(Get(kConfigMaps, "default", "app-config"), nullptr);
  EXPECT_EQ(ReconcileErrors(), 0);
}

TEST_F(CopyratorControllerTest, ATerminatingNamespaceGetsNoCopy) {
  ASSERT_NO_FATAL_FAILURE(CreateNamespace("team-a"));
  ASSERT_NO_FATAL_FAILURE(CreateNamespace("doomed"));
  ASSERT_NO_FATAL_FAILURE(CreateSource("ConfigMap", "default", "first",
                                       {{"copyrator", "true"}},
                                       R"({"n":"1"})"));
  ASSERT_TRUE(CreateRule(kSampleRule).ok());
  ASSERT_NE(WaitFor(kConfigMaps, "doomed", "first", DataIs(R"({"n":"1"})")),
            nullptr);

  // The namespace controller keeps it Terminating for the grace period.
  ASSERT_TRUE(client_->Delete(kBg, kNamespaces, "doomed").ok());
  ASSERT_TRUE(Eventually([&] {
    api::ObjectPtr ns = Get(kNamespaces, "", "doomed");
    return ns != nullptr && Str(*ns, "/status/phase") == "Terminating";
  }));
  const std::vector<std::string> others = ActiveNamespacesBut("default");

  // A new source, and a change to the old one: copies everywhere but in
  // the Terminating namespace, and no error on the way.
  ASSERT_NO_FATAL_FAILURE(CreateSource("ConfigMap", "default", "second",
                                       {{"copyrator", "true"}},
                                       R"({"n":"2"})"));
  ASSERT_TRUE(client_
                  ->Patch(kBg, kConfigMaps.InNamespace("default"), "first",
                          api::PatchType::kMerge, R"({"data":{"n":"1b"}})")
                  .ok());
  for (const std::string& ns : others) {
    EXPECT_NE(WaitFor(kConfigMaps, ns, "second", DataIs(R"({"n":"2"})")),
              nullptr);
    EXPECT_NE(WaitFor(kConfigMaps, ns, "first", DataIs(R"({"n":"1b"})")),
              nullptr);
  }
  api::ObjectPtr rule = WaitForRule("main-rule", [&](const api::Object& r) {
    return ReadyIs("True", "Synced")(r) && CopiesAre(2 * others.size())(r);
  });
  EXPECT_NE(rule, nullptr);
  // Still Terminating, and without the new copy.
  api::ObjectPtr doomed = Get(kNamespaces, "", "doomed");
  ASSERT_NE(doomed, nullptr) << "the grace period ended before the check";
  EXPECT_EQ(Get(kConfigMaps, "doomed", "second"), nullptr);
  EXPECT_GT(CounterSum("controller_runtime_reconcile_total", "controller",
                       kCopyratorControllerName),
            0);
  EXPECT_EQ(ReconcileErrors(), 0);
  EXPECT_THAT(WarningsOn("main-rule"), ::testing::IsEmpty());
}

TEST_F(CopyratorControllerTest, ChangingTheRuleTypeSwapsTheCopies) {
  ASSERT_NO_FATAL_FAILURE(CreateNamespace("team-a"));
  ASSERT_NO_FATAL_FAILURE(CreateSource("ConfigMap", "default", "settings",
                                       {{"copyrator", "true"}},
                                       R"({"k":"v"})"));
  ASSERT_NO_FATAL_FAILURE(CreateSource("Secret", "default", "token",
                                       {{"copyrator", "true"}},
                                       R"({"t":"c2VjcmV0"})"));
  ASSERT_TRUE(CreateRule(kSampleRule).ok());
  ASSERT_NE(WaitFor(kConfigMaps, "team-a", "settings", DataIs(R"({"k":"v"})")),
            nullptr);
  EXPECT_EQ(Get(kSecrets, "team-a", "token"), nullptr);

  ASSERT_TRUE(PatchRule("main-rule", R"({"ruleType":"secret"})").ok());
  api::ObjectPtr secret =
      WaitFor(kSecrets, "team-a", "token", DataIs(R"({"t":"c2VjcmV0"})"));
  ASSERT_NE(secret, nullptr);
  EXPECT_EQ(secret->Annotation(kSourceAnnotation), "default/token");
  EXPECT_TRUE(WaitForGone(kConfigMaps, "team-a", "settings"));
  const size_t others = ActiveNamespacesBut("default").size();
  EXPECT_NE(WaitForRule("main-rule",
                        [&](const api::Object& r) {
                          return ReadyIs("True", "Synced")(r) &&
                                 CopiesAre(others)(r);
                        }),
            nullptr);

  // And back.
  ASSERT_TRUE(PatchRule("main-rule", R"({"ruleType":"configmap"})").ok());
  EXPECT_NE(WaitFor(kConfigMaps, "team-a", "settings", DataIs(R"({"k":"v"})")),
            nullptr);
  EXPECT_TRUE(WaitForGone(kSecrets, "team-a", "token"));
  EXPECT_EQ(ReconcileErrors(), 0);
}

TEST_F(CopyratorControllerTest, AnInvalidRuleChangesNothing) {
  ASSERT_NO_FATAL_FAILURE(CreateNamespace("team-a"));
  ASSERT_NO_FATAL_FAILURE(CreateSource("ConfigMap", "default", "app-config",
                                       {{"copyrator", "true"}},
                                       R"({"greeting":"hello"})"));
  ASSERT_TRUE(CreateRule(kSampleRule).ok());
  api::ObjectPtr copy = WaitFor(kConfigMaps, "team-a", "app-config",
                                DataIs(R"({"greeting":"hello"})"));
  ASSERT_NE(copy, nullptr);
  ASSERT_NE(WaitForRule("main-rule", ReadyIs("True", "Synced")), nullptr);

  // The schema rejects an unknown ruleType: nothing changes.
  auto rejected = PatchRule("main-rule", R"({"ruleType":"configmaps"})");
  ASSERT_TRUE(api::IsInvalid(rejected.status())) << rejected.status();
  EXPECT_THAT(rejected.status().message(),
              HasSubstr(R"(ruleType: Unsupported value: "configmaps": )"
                        R"(supported values: "configmap", "secret")"));
  auto bad_new = CreateRule(R"({
    "apiVersion": "flant.com/v1", "kind": "CopyratorRule",
    "metadata": {"name": "typo", "namespace": "default"},
    "ruleType": "Secret", "selector": {"copyrator": "true"}})");
  ASSERT_TRUE(api::IsInvalid(bad_new.status())) << bad_new.status();
  EXPECT_EQ(Get(kRules, "default", "typo"), nullptr);
  api::ObjectPtr rule = Get(kRules, "default", "main-rule");
  ASSERT_NE(rule, nullptr);
  EXPECT_EQ(Str(*rule, "/ruleType"), "configmap");

  // The schema accepts any selector string, the controller cannot act on
  // one that does not parse: Ready=False, a Warning Event, and the copies
  // stay as they are (even as the source changes).
  ASSERT_TRUE(PatchRule("main-rule", R"({"selector":"app in ("})").ok());
  rule = WaitForRule("main-rule", ReadyIs("False", "InvalidSpec"));
  ASSERT_NE(rule, nullptr);
  EXPECT_THAT(Ready(*rule, "message"), HasSubstr("selector"));
  EXPECT_EQ(Str(*rule, "/status/copies"),
            std::to_string(ActiveNamespacesBut("default").size()));
  EXPECT_TRUE(Eventually([&] {
    std::vector<std::string> warnings = WarningsOn("main-rule");
    return std::find(warnings.begin(), warnings.end(), "InvalidSpec") !=
           warnings.end();
  }));
  EXPECT_GE(Warnings("InvalidSpec"), 1);
  EXPECT_EQ(Warnings("Conflict"), 0);
  api::ObjectPtr still = Get(kConfigMaps, "team-a", "app-config");
  ASSERT_NE(still, nullptr);
  EXPECT_EQ(still->resource_version(), copy->resource_version());

  // A source namespace that is not a namespace name: the same.
  ASSERT_TRUE(PatchRule("main-rule", R"({"selector":{"copyrator":"true"},)"
                                     R"("namespace":"Not_A_Name"})")
                  .ok());
  rule = WaitForRule("main-rule", [](const api::Object& r) {
    return ReadyIs("False", "InvalidSpec")(r) &&
           Ready(r, "message").find("namespace") != std::string::npos;
  });
  ASSERT_NE(rule, nullptr);
  EXPECT_NE(Get(kConfigMaps, "team-a", "app-config"), nullptr);

  // Fixed: back in step.
  ASSERT_TRUE(PatchRule("main-rule", R"({"namespace":"default"})").ok());
  EXPECT_NE(WaitForRule("main-rule", ReadyIs("True", "Synced")), nullptr);
  EXPECT_NE(Get(kConfigMaps, "team-a", "app-config"), nullptr);
}

TEST_F(CopyratorControllerTest, AForeignObjectIsLeftAloneUntilItGoes) {
  ASSERT_NO_FATAL_FAILURE(CreateNamespace("team-a"));
  ASSERT_NO_FATAL_FAILURE(CreateSource("ConfigMap", "team-a", "app-config", {},
                                       R"({"mine":"yes"})"));
  ASSERT_NO_FATAL_FAILURE(CreateSource("ConfigMap", "default", "app-config",
                                       {{"copyrator", "true"}},
                                       R"({"greeting":"hello"})"));
  ASSERT_TRUE(CreateRule(kSampleRule).ok());
  api::ObjectPtr rule = WaitForRule("main-rule", ReadyIs("False", "Conflict"));
  ASSERT_NE(rule, nullptr);
  EXPECT_THAT(Ready(*rule, "message"),
              HasSubstr("team-a/app-config (exists and is not a copy; "
                        "source default/app-config)"));
  EXPECT_TRUE(Eventually([&] { return Warnings("Conflict") == 1; }));
  api::ObjectPtr foreign = Get(kConfigMaps, "team-a", "app-config");
  ASSERT_NE(foreign, nullptr);
  EXPECT_EQ(Str(*foreign, "/data"), R"({"mine":"yes"})");
  EXPECT_FALSE(foreign->Annotation(kRuleAnnotation).has_value());

  // Its owner deletes it: the target is free, the copy comes.
  ASSERT_TRUE(
      client_->Delete(kBg, kConfigMaps.InNamespace("team-a"), "app-config")
          .ok());
  EXPECT_NE(WaitFor(kConfigMaps, "team-a", "app-config",
                    DataIs(R"({"greeting":"hello"})")),
            nullptr);
  EXPECT_NE(
      WaitForRule("main-rule",
                  [&](const api::Object& r) {
                    return ReadyIs("True", "Synced")(r) &&
                           CopiesAre(ActiveNamespacesBut("default").size())(r);
                  }),
      nullptr);
  EXPECT_EQ(Warnings("Conflict"), 1);
  EXPECT_EQ(ReconcileErrors(), 0);
}

// A namespace controller that deletes a Terminating namespace's contents
// after a second (not 30).
class SourceNamespaceTest : public CopyratorControllerTest {
 protected:
  SourceNamespaceTest() { grace_period_ = absl::Seconds(1); }
};

TEST_F(SourceNamespaceTest, CopiesGoWithTheirSourceNamespace) {
  ASSERT_NO_FATAL_FAILURE(CreateNamespace("team-a"));
  ASSERT_NO_FATAL_FAILURE(CreateNamespace("upstream"));
  ASSERT_NO_FATAL_FAILURE(CreateSource("ConfigMap", "upstream", "shared",
                                       {{"copyrator", "true"}},
                                       R"({"k":"v"})"));
  ASSERT_TRUE(CreateRule(R"({
    "apiVersion": "flant.com/v1", "kind": "CopyratorRule",
    "metadata": {"name": "from-upstream", "namespace": "default"},
    "ruleType": "configmap", "selector": {"copyrator": "true"},
    "namespace": "upstream"})")
                  .ok());
  ASSERT_NE(WaitFor(kConfigMaps, "team-a", "shared", DataIs(R"({"k":"v"})")),
            nullptr);
  ASSERT_NE(WaitFor(kConfigMaps, "default", "shared", DataIs(R"({"k":"v"})")),
            nullptr);

  // The namespace controller deletes the source with its namespace.
  ASSERT_TRUE(client_->Delete(kBg, kNamespaces, "upstream").ok());
  EXPECT_TRUE(WaitForGone(kConfigMaps, "team-a", "shared"));
  EXPECT_TRUE(WaitForGone(kConfigMaps, "default", "shared"));
  EXPECT_TRUE(WaitForGone(kNamespaces, "", "upstream"));
  EXPECT_NE(WaitForRule("from-upstream",
                        [](const api::Object& r) {
                          return ReadyIs("True", "Synced")(r) &&
                                 CopiesAre(0)(r);
                        }),
            nullptr);
  EXPECT_EQ(ReconcileErrors(), 0);
}

TEST_F(CopyratorControllerTest, ARuleWithoutItsFinalizerLeavesNoCopies) {
  ASSERT_NO_FATAL_FAILURE(CreateNamespace("team-a"));
  ASSERT_NO_FATAL_FAILURE(CreateSource("ConfigMap", "default", "app-config",
                                       {{"copyrator", "true"}},
                                       R"({"greeting":"hello"})"));
  ASSERT_TRUE(CreateRule(kSampleRule).ok());
  ASSERT_TRUE(CreateRule(R"({
    "apiVersion": "flant.com/v1", "kind": "CopyratorRule",
    "metadata": {"name": "other", "namespace": "default"},
    "ruleType": "configmap", "selector": {"other": "true"}})")
                  .ok());
  ASSERT_NO_FATAL_FAILURE(CreateSource("ConfigMap", "default", "other-config",
                                       {{"other", "true"}}, R"({"x":"y"})"));
  ASSERT_NE(WaitFor(kConfigMaps, "team-a", "app-config",
                    DataIs(R"({"greeting":"hello"})")),
            nullptr);
  ASSERT_NE(
      WaitFor(kConfigMaps, "team-a", "other-config", DataIs(R"({"x":"y"})")),
      nullptr);
  ASSERT_NE(WaitForRule("main-rule",
                        [](const api::Object& r) {
                          return r.HasFinalizer(kFinalizer);
                        }),
            nullptr);

  // While no manager runs, the rule is deleted and its finalizer removed
  // by hand: it is gone at once, its copies are left behind...
  StopManager();
  ASSERT_TRUE(
      client_->Delete(kBg, kRules.InNamespace("default"), "main-rule").ok());
  ASSERT_TRUE(
      PatchRule("main-rule", R"({"metadata":{"finalizers":null}})").ok());
  ASSERT_TRUE(WaitForGone(kRules, "default", "main-rule"));
  ASSERT_NE(Get(kConfigMaps, "team-a", "app-config"), nullptr);

  // ... until a manager starts: the copies name their rule, which is gone.
  ASSERT_NO_FATAL_FAILURE(StartManager());
  EXPECT_TRUE(WaitForGone(kConfigMaps, "team-a", "app-config"));
  for (const std::string& ns : ActiveNamespacesBut("default")) {
    EXPECT_TRUE(WaitForGone(kConfigMaps, ns, "app-config")) << ns;
  }
  // The other rule's copies are not touched.
  EXPECT_NE(Get(kConfigMaps, "team-a", "other-config"), nullptr);
  EXPECT_NE(Get(kConfigMaps, "default", "app-config"), nullptr);

  // The same while the manager runs: deleted, then its finalizer removed
  // by hand before (or after) the controller gets to it.
  ASSERT_TRUE(
      client_->Delete(kBg, kRules.InNamespace("default"), "other").ok());
  auto released = PatchRule("other", R"({"metadata":{"finalizers":null}})");
  EXPECT_TRUE(released.ok() || api::IsNotFound(released.status()))
      << released.status();
  EXPECT_TRUE(WaitForGone(kRules, "default", "other"));
  EXPECT_TRUE(WaitForGone(kConfigMaps, "team-a", "other-config"));
  EXPECT_NE(Get(kConfigMaps, "default", "other-config"), nullptr);
}

}  // namespace
}  // namespace kcr::copyrator
