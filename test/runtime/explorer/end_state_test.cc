#include "runtime/explorer/end_state.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "api/object.h"
#include "gtest/gtest.h"

namespace kcr::explorer {
namespace {

StateObject Obj(const std::string& resource, const std::string& json) {
  auto o = api::Object::Parse(json);
  EXPECT_TRUE(o.ok()) << o.status();
  return StateObject{"", resource, *o};
}

TEST(EndStateTest, DropsHowAndWhenAnObjectWasWritten) {
  EndState a = EndState::Of({Obj("configmaps", R"({"kind":"ConfigMap",
      "metadata":{"name":"p","namespace":"d","uid":"u1","resourceVersion":"5",
      "generation":2,"creationTimestamp":"2026-01-01T00:00:00Z",
      "managedFields":[{"manager":"x"}],
      "ownerReferences":[{"kind":"X","name":"o","uid":"u9"}]},
      "status":{"observedGeneration":2,"conditions":[{"type":"Ready",
      "lastTransitionTime":"2026-01-01T00:00:01Z"}]},"data":{"k":"v"}})")});
  EndState b = EndState::Of({Obj("configmaps", R"({"data":{"k":"v"},
      "kind":"ConfigMap","status":{"conditions":[{"type":"Ready",
      "lastTransitionTime":"2027-05-05T00:00:00Z"}]},
      "metadata":{"namespace":"d","name":"p","uid":"u2","resourceVersion":"9",
      "ownerReferences":[{"kind":"X","name":"o","uid":"u3"}]}})")});
  EXPECT_EQ(a, b) << a.ToString() << b.ToString();
  EXPECT_EQ(a.DiffFrom(b), "");
  ASSERT_EQ(a.objects().size(), 1u);
  EXPECT_EQ(a.objects().begin()->first, "core/configmaps d/p");
  EXPECT_TRUE(absl::StrContains(a.objects().begin()->second, "<time>"));
}

TEST(EndStateTest, ContentDifferencesShow) {
  EndState ref = EndState::Of(
      {Obj("configmaps",
           R"({"metadata":{"name":"p","namespace":"d"},"data":{"k":"v"}})"),
       Obj("configmaps", R"({"metadata":{"name":"q","namespace":"d"}})")});
  EndState got = EndState::Of(
      {Obj("configmaps",
           R"({"metadata":{"name":"p","namespace":"d"},"data":{"k":"w"}})"),
       Obj("configmaps", R"({"metadata":{"name":"r","namespace":"d"}})")});
  const std::string diff = got.DiffFrom(ref);
  EXPECT_TRUE(absl::StrContains(diff, "differs: core/configmaps d/p")) << diff;
  EXPECT_TRUE(absl::StrContains(diff, "missing: core/configmaps d/q")) << diff;
  EXPECT_TRUE(absl::StrContains(diff, "extra: core/configmaps d/r")) << diff;
}

TEST(EndStateTest, GeneratedNamesBecomeStableWhereverTheyAppear) {
  auto run = [](const std::string& a, const std::string& b) {
    return EndState::Of(
        {Obj("secrets",
             R"({"metadata":{"name":")" + a +
                 R"(","generateName":"p-","namespace":"d"},"data":{"n":"1"}})"),
         Obj("secrets",
             R"({"metadata":{"name":")" + b +
                 R"(","generateName":"p-","namespace":"d"},"data":{"n":"2"}})"),
         Obj("pods", R"({"metadata":{"name":"x","namespace":"d",
             "ownerReferences":[{"name":")" +
                         b + R"("}]}})")});
  };
  EndState one = run("p-abcde", "p-zzzzz");
  EndState two = run("p-qqqqq", "p-aaaaa");
  EXPECT_EQ(one, two) << one.ToString() << two.ToString();
  EXPECT_TRUE(one.objects().count("core/secrets d/p-<0>")) << one.ToString();
  EXPECT_TRUE(absl::StrContains(one.objects().at("core/pods d/x"), "p-<1>"))
      << one.ToString();
  // One generated object more is a difference.
  EndState three = EndState::Of(
      {Obj("secrets",
           R"({"metadata":{"name":"p-1","generateName":"p-","namespace":"d"}})"),
       Obj("secrets",
           R"({"metadata":{"name":"p-2","generateName":"p-","namespace":"d"}})")});
  EndState four = EndState::Of({Obj(
      "secrets",
      R"({"metadata":{"name":"p-1","generateName":"p-","namespace":"d"}})")});
  EXPECT_NE(three, four);
  EXPECT_TRUE(
      absl::StrContains(three.DiffFrom(four), "extra: core/secrets d/p-<1>"))
      << three.DiffFrom(four);
}

TEST(EndStateTest, ConditionsCompareWhateverTheirOrder) {
  EndState a = EndState::Of({Obj("deployments", R"({"metadata":{"name":"d",
      "namespace":"n"},"status":{"conditions":[{"type":"Progressing"},
      {"type":"Available"}]}})")});
  EndState b = EndState::Of({Obj("deployments", R"({"metadata":{"name":"d",
      "namespace":"n"},"status":{"conditions":[{"type":"Available"},
      {"type":"Progressing"}]}})")});
  EXPECT_EQ(a, b) << a.ToString() << b.ToString();
  // Other lists keep their order.
  EndState c = EndState::Of({Obj("deployments", R"({"metadata":{"name":"d",
      "namespace":"n"},"spec":{"args":["x","y"]}})")});
  EndState d = EndState::Of({Obj("deployments", R"({"metadata":{"name":"d",
      "namespace":"n"},"spec":{"args":["y","x"]}})")});
  EXPECT_NE(c, d);
}

TEST(EndStateTest, IgnoredFieldsAreNotCompared) {
  EndState a = EndState::Of(
      {Obj(
          "deployments",
          R"({"metadata":{"name":"d","namespace":"n"},"status":{"readyReplicas":1}})")},
      {"/status/readyReplicas"});
  EndState b = EndState::Of(
      {Obj(
          "deployments",
          R"({"metadata":{"name":"d","namespace":"n"},"status":{"readyReplicas":3}})")},
      {"/status/readyReplicas"});
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace kcr::explorer
