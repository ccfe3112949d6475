#include "runtime/controller/predicate.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "api/object.h"
#include "gtest/gtest.h"

namespace kcr::controller {
namespace {

api::ObjectPtr Obj(const std::string& ns, int64_t generation,
                   const std::string& rv, const std::string& labels = "{}",
                   const std::string& annotations = "{}") {
  auto o = api::Object::Parse(absl::StrCat(
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":")",
      ns, R"(","generation":)", generation, R"(,"resourceVersion":")", rv,
      R"(","labels":)", labels, R"(,"annotations":)", annotations, "}}"));
  EXPECT_TRUE(o.ok()) << o.status();
  return *o;
}

TEST(PredicateTest, EmptyPredicateLetsEverythingThrough) {
  Predicate p;
  auto o = Obj("a", 1, "1");
  EXPECT_TRUE(p.Create({o, false}));
  EXPECT_TRUE(p.Update({o, o}));
  EXPECT_TRUE(p.Delete({o, true}));
  EXPECT_TRUE(p.Generic({o}));
}

TEST(PredicateTest, GenerationChanged) {
  Predicate p = GenerationChanged();
  EXPECT_FALSE(p.Update({Obj("a", 1, "1"), Obj("a", 1, "2")}));  // status only
  EXPECT_TRUE(p.Update({Obj("a", 1, "1"), Obj("a", 2, "2")}));
  EXPECT_FALSE(p.Update({nullptr, Obj("a", 2, "2")}));
  EXPECT_FALSE(p.Update({Obj("a", 1, "1"), nullptr}));
  EXPECT_TRUE(p.Create({Obj("a", 1, "1"), false}));
  EXPECT_TRUE(p.Delete({Obj("a", 1, "1"), false}));
  EXPECT_TRUE(p.Generic({Obj("a", 1, "1")}));
}

TEST(PredicateTest, ResourceVersionChangedDropsResyncs) {
  Predicate p = ResourceVersionChanged();
  auto o = Obj("a", 1, "7");
  EXPECT_FALSE(p.Update({o, o}));
  EXPECT_TRUE(p.Update({o, Obj("a", 1, "8")}));
}

TEST(PredicateTest, LabelAndAnnotationChanged) {
  auto a = Obj("a", 1, "1", R"({"x":"1"})", R"({"n":"1"})");
  auto b = Obj("a", 1, "2", R"({"x":"2"})", R"({"n":"1"})");
  auto c = Obj("a", 1, "3", R"({"x":"2"})", R"({"n":"2"})");
  EXPECT_TRUE(LabelChanged().Update({a, b}));
  EXPECT_FALSE(LabelChanged().Update({b, c}));
  EXPECT_FALSE(AnnotationChanged().Update({a, b}));
  EXPECT_TRUE(AnnotationChanged().Update({b, c}));
}

TEST(PredicateTest, NamespaceAndLabelSelectorFilters) {
  Predicate ns = InNamespace("prod");
  EXPECT_TRUE(ns.Create({Obj("prod", 1, "1"), false}));
  EXPECT_FALSE(ns.Create({Obj("dev", 1, "1"), false}));
  EXPECT_FALSE(ns.Delete({Obj("dev", 1, "1"), false}));
  // An update is judged by the new object.
  EXPECT_TRUE(ns.Update({Obj("dev", 1, "1"), Obj("prod", 1, "2")}));

  auto selector = api::LabelSelector::Parse("app=web,tier!=db");
  ASSERT_TRUE(selector.ok());
  Predicate labels = MatchingLabels(*selector);
  EXPECT_TRUE(labels.Create({Obj("a", 1, "1", R"({"app":"web"})"), false}));
  EXPECT_FALSE(
      labels.Create({Obj("a", 1, "1", R"({"app":"web","tier":"db"})"), false}));
  EXPECT_FALSE(labels.Generic({Obj("a", 1, "1")}));
}

TEST(PredicateTest, AndOrNot) {
  auto prod_gen2 = Obj("prod", 2, "2");
  auto prod_gen1 = Obj("prod", 1, "1");
  auto dev_gen2 = Obj("dev", 2, "2");
  Predicate both = And({InNamespace("prod"), GenerationChanged()});
  EXPECT_TRUE(both.Update({prod_gen1, prod_gen2}));
  EXPECT_FALSE(both.Update({prod_gen1, Obj("prod", 1, "3")}));
  EXPECT_FALSE(both.Update({prod_gen1, dev_gen2}));
  Predicate either = Or({InNamespace("prod"), GenerationChanged()});
  EXPECT_TRUE(either.Update({prod_gen1, dev_gen2}));
  EXPECT_FALSE(either.Update({dev_gen2, Obj("dev", 2, "3")}));
  EXPECT_TRUE(And({}).Create({dev_gen2, false}));
  EXPECT_FALSE(Or({}).Create({dev_gen2, false}));
  Predicate not_prod = Not(InNamespace("prod"));
  EXPECT_FALSE(not_prod.Create({prod_gen1, false}));
  EXPECT_TRUE(not_prod.Create({dev_gen2, false}));
}

TEST(PredicateTest, CustomFunctions) {
  Predicate p;
  p.create = [](const CreateEvent& e) { return !e.is_in_initial_list; };
  p.delete_ = [](const DeleteEvent& e) { return !e.delete_state_unknown; };
  auto o = Obj("a", 1, "1");
  EXPECT_FALSE(p.Create({o, true}));
  EXPECT_TRUE(p.Create({o, false}));
  EXPECT_FALSE(p.Delete({o, true}));
  EXPECT_TRUE(p.Update({o, o}));
  Predicate f = NewPredicateFuncs(
      [](const api::Object& obj) { return obj.name() == "x"; });
  EXPECT_TRUE(f.Generic({o}));
}

}  // namespace
}  // namespace kcr::controller
