// The copyrator's planner: what a rule creates, updates, deletes and
// leaves alone, from objects built in memory.
#include "controllers/copyrator/copy_plan.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "api/object_builder.h"
#include "gtest/gtest.h"

namespace kcr::copyrator {
namespace {

constexpr char kRule[] = "default/main-rule";

api::ObjectPtr Namespace(const std::string& name,
                         const std::string& phase = "Active") {
  api::ObjectBuilder b("v1", "Namespace");
  b.SetName(name);
  EXPECT_TRUE(b.SetString("/status/phase", phase).ok());
  return b.Build().value();
}

api::ObjectPtr ConfigMap(const std::string& ns, const std::string& name,
                         const std::string& data,
                         std::map<std::string, std::string> labels = {
                             {"copyrator", "true"}}) {
  api::ObjectBuilder b("v1", "ConfigMap");
  b.SetNamespace(ns).SetName(name).SetLabels(labels);
  EXPECT_TRUE(b.SetString("/data/key", data).ok());
  b.SetUid(ns + "-" + name).SetResourceVersion("7");
  return b.Build().value();
}

api::ObjectPtr CopyOf(const api::Object& source, const std::string& ns,
                      const std::string& rule = kRule) {
  api::ObjectBuilder b = DesiredCopy(rule, source, ns).value()->ToBuilder();
  b.SetUid("copy-" + ns).SetResourceVersion("9");
  return b.Build().value();
}

class CopyPlanTest : public ::testing::Test {
 protected:
  CopyPlanTest() {
    in_.rule = kRule;
    in_.kind = kConfigMapKind;
    in_.namespaces = {Namespace("default"), Namespace("a"), Namespace("b")};
    in_.existing = [this](std::string_view ns, std::string_view name) {
      auto it = objects_.find(std::string(ns) + "/" + std::string(name));
      return it == objects_.end() ? nullptr : it->second;
    };
  }

  void Put(const api::ObjectPtr& o) {
    objects_[RefOf(*o)] = o;
    if (o->Annotation(kRuleAnnotation) == kRule) in_.copies.push_back(o);
  }

  static std::vector<std::string> Refs(const std::vector<api::ObjectPtr>& v) {
    std::vector<std::string> out;
    for (const auto& o : v) out.push_back(RefOf(*o));
    return out;
  }

  PlanInput in_;
  std::map<std::string, api::ObjectPtr> objects_;
};

using Names = std::vector<std::string>;

TEST_F(CopyPlanTest, CopiesIntoEveryOtherActiveNamespace) {
  in_.namespaces.push_back(Namespace("going", "Terminating"));
  in_.sources = {ConfigMap("default", "app", "v1")};
  CopyPlan plan = PlanCopies(in_).value();
  EXPECT_EQ(Refs(plan.create), (Names{"a/app", "b/app"}));
  EXPECT_TRUE(plan.update.empty());
  EXPECT_TRUE(plan.remove.empty());
  EXPECT_TRUE(plan.conflicts.empty());
  EXPECT_EQ(plan.wanted, 2);

  const api::Object& copy = *plan.create[0];
  EXPECT_EQ(copy.Annotation(kRuleAnnotation), "default/main-rule");
  EXPECT_EQ(copy.Annotation(kSourceAnnotation), "default/app");
  EXPECT_EQ(copy.Label(kRuleLabel), "default.main-rule");
  EXPECT_EQ(copy.Label(kSourceLabel), "default.app");
  EXPECT_EQ(copy.Label("copyrator"), "true");
  EXPECT_EQ(std::string(copy.Find("/data/key")->GetString()), "v1");
  EXPECT_TRUE(copy.resource_version().empty());
}

TEST_F(CopyPlanTest, InStepCopiesAreLeftAndStaleOnesUpdated) {
  api::ObjectPtr source = ConfigMap("default", "app", "v2", {{"x", "1"}});
  in_.sources = {source};
  Put(CopyOf(*source, "a"));
  Put(CopyOf(*ConfigMap("default", "app", "v1"), "b"));
  CopyPlan plan = PlanCopies(in_).value();
  EXPECT_EQ(plan.in_step, 1);
  ASSERT_EQ(Refs(plan.update), (Names{"b/app"}));
  const api::Object& updated = *plan.update[0];
  EXPECT_EQ(updated.resource_version(), "9");  // a conditional update
  EXPECT_EQ(std::string(updated.Find("/data/key")->GetString()), "v2");
  EXPECT_EQ(updated.Label("x"), "1");
  EXPECT_FALSE(updated.Label("copyrator").has_value());
}

TEST_F(CopyPlanTest, CopiesOfGoneSourcesAreRemoved) {
  Put(CopyOf(*ConfigMap("default", "old", "v"), "a"));
  Put(CopyOf(*ConfigMap("default", "other", "v"), "a", "default/other-rule"));
  CopyPlan plan = PlanCopies(in_).value();
  EXPECT_EQ(Refs(plan.remove), (Names{"a/old"}));
  EXPECT_TRUE(plan.create.empty());
}

TEST_F(CopyPlanTest, ForeignObjectsAndOtherRulesCopiesAreConflicts) {
  api::ObjectPtr source = ConfigMap("default", "app", "v");
  in_.sources = {source};
  Put(ConfigMap("a", "app", "mine", {}));
  Put(CopyOf(*source, "b", "default/other-rule"));
  CopyPlan plan = PlanCopies(in_).value();
  EXPECT_TRUE(plan.create.empty());
  EXPECT_TRUE(plan.update.empty());
  EXPECT_TRUE(plan.remove.empty());
  ASSERT_EQ(plan.conflicts.size(), 2u);
  EXPECT_EQ(plan.conflicts[0].target, "a/app");
  EXPECT_EQ(plan.conflicts[0].source, "default/app");
  EXPECT_EQ(plan.conflicts[0].reason, "exists and is not a copy");
  EXPECT_EQ(plan.conflicts[1].target, "b/app");
  EXPECT_EQ(plan.conflicts[1].reason,
            "is a copy made by rule default/other-rule");
}

TEST_F(CopyPlanTest, TwoSourcesOfOneNameKeepTheCopyThatStands) {
  api::ObjectPtr first = ConfigMap("default", "app", "1");
  api::ObjectPtr second = ConfigMap("a", "app", "2");
  in_.sources = {first, second};
  Put(second);  // a source stands at the first one's target in "a"
  Put(first);
  Put(CopyOf(*second, "b"));
  CopyPlan plan = PlanCopies(in_).value();
  // b/app stays the second source's copy; the first is reported there.
  EXPECT_EQ(plan.in_step, 1);
  EXPECT_TRUE(plan.create.empty());
  ASSERT_EQ(plan.conflicts.size(), 3u);
  EXPECT_EQ(plan.conflicts[0].target, "a/app");
  EXPECT_EQ(plan.conflicts[0].reason, "exists and is not a copy");
  EXPECT_EQ(plan.conflicts[1].target, "b/app");
  EXPECT_EQ(plan.conflicts[1].source, "default/app");
  EXPECT_EQ(plan.conflicts[1].reason,
            "also claimed by source a/app of this rule");
  EXPECT_EQ(plan.conflicts[2].target, "default/app");
}

TEST_F(CopyPlanTest, SecretsKeepTypeAndDataAndARetypedCopyIsRemoved) {
  in_.kind = kSecretKind;
  api::ObjectBuilder b("v1", "Secret");
  b.SetNamespace("default").SetName("db");
  ASSERT_TRUE(b.SetString("/type", "Opaque").ok());
  ASSERT_TRUE(b.SetString("/data/password", "aHVudGVyMg==").ok());
  api::ObjectPtr source = b.Build().value();
  in_.sources = {source};
  api::ObjectBuilder retyped = CopyOf(*source, "a")->ToBuilder();
  ASSERT_TRUE(retyped.SetString("/type", "kubernetes.io/basic-auth").ok());
  Put(retyped.Build().value());
  CopyPlan plan = PlanCopies(in_).value();
  EXPECT_EQ(Refs(plan.create), (Names{"b/db"}));
  EXPECT_EQ(Refs(plan.remove), (Names{"a/db"}));
  EXPECT_EQ(std::string(plan.create[0]->Find("/type")->GetString()), "Opaque");
  EXPECT_EQ(std::string(plan.create[0]->Find("/data/password")->GetString()),
            "aHVudGVyMg==");
}

TEST(LabelValueTest, ShortNamesAreReadableAndLongOnesFit) {
  EXPECT_EQ(LabelValue("default", "main-rule"), "default.main-rule");
  const std::string long_name(100, 'x');
  const std::string a = LabelValue("default", long_name);
  const std::string b = LabelValue("default", long_name + "y");
  EXPECT_EQ(a.size(), 63u);
  EXPECT_NE(a, b);
  EXPECT_EQ(a, LabelValue("default", long_name));
}

}  // namespace
}  // namespace kcr::copyrator
