#include "api/types/condition.h"

#include "api/object_builder.h"
#include "gtest/gtest.h"

namespace kcr {
namespace api {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1795341600);  // 10:00:00Z
const absl::Time kT1 = kT0 + absl::Minutes(5);

TEST(ConditionTest, SetAddsWithNow) {
  std::vector<Condition> list;
  EXPECT_TRUE(SetStatusCondition(
      &list, {"Ready", "False", "Starting", "", "", 1}, kT0));
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].last_transition_time, "2026-11-22T10:00:00Z");
  // A given lastTransitionTime is kept on add.
  EXPECT_TRUE(SetStatusCondition(
      &list, {"Synced", "True", "", "", "2026-01-01T00:00:00Z", 0}, kT0));
  EXPECT_EQ(list[1].last_transition_time, "2026-01-01T00:00:00Z");
  EXPECT_FALSE(SetStatusCondition(nullptr, {"X", "True"}, kT0));
}

TEST(ConditionTest, TransitionTimeMovesOnlyOnStatusChange) {
  std::vector<Condition> list;
  SetStatusCondition(&list, {"Ready", "False", "Starting", "wait", "", 1}, kT0);
  // Same status, new reason/message/generation: changed, time kept.
  EXPECT_TRUE(SetStatusCondition(
      &list, {"Ready", "False", "Pulling", "pulling image", "", 2}, kT1));
  EXPECT_EQ(list[0].last_transition_time, "2026-11-22T10:00:00Z");
  EXPECT_EQ(list[0].reason, "Pulling");
  EXPECT_EQ(list[0].observed_generation, 2);
  // Nothing differs: unchanged.
  EXPECT_FALSE(SetStatusCondition(
      &list, {"Ready", "False", "Pulling", "pulling image", "", 2}, kT1));
  // Status flips: time moves to now.
  EXPECT_TRUE(
      SetStatusCondition(&list, {"Ready", "True", "Up", "", "", 2}, kT1));
  EXPECT_EQ(list[0].last_transition_time, "2026-11-22T10:05:00Z");
  EXPECT_EQ(list[0].message, "");
  // Status flips with an explicit time: that time is used.
  EXPECT_TRUE(SetStatusCondition(
      &list, {"Ready", "False", "Down", "", "2026-11-22T11:00:00Z", 2}, kT1));
  EXPECT_EQ(list[0].last_transition_time, "2026-11-22T11:00:00Z");
  EXPECT_EQ(list.size(), 1u);
}

TEST(ConditionTest, FindRemoveIsTrue) {
  std::vector<Condition> list = {{"A", "True"}, {"B", "False"}};
  EXPECT_TRUE(IsStatusConditionTrue(list, "A"));
  EXPECT_FALSE(IsStatusConditionTrue(list, "B"));
  EXPECT_TRUE(IsStatusConditionFalse(list, "B"));
  EXPECT_FALSE(IsStatusConditionTrue(list, "C"));
  EXPECT_EQ(FindStatusCondition(list, "B")->status, "False");
  EXPECT_EQ(FindStatusCondition(list, "C"), nullptr);
  EXPECT_TRUE(RemoveStatusCondition(&list, "A"));
  EXPECT_FALSE(RemoveStatusCondition(&list, "A"));
  EXPECT_EQ(list.size(), 1u);
}

TEST(ConditionTest, JsonRoundTripAndBadFields) {
  absl::StatusOr<ObjectPtr> obj = Object::Parse(
      R"({"metadata":{},"status":{"conditions":[)"
      R"({"type":"Ready","status":"True","reason":"Up","message":"ok",)"
      R"("lastTransitionTime":"2026-11-22T10:00:00Z","observedGeneration":3},)"
      R"(7,{"type":5,"status":["x"],"observedGeneration":"x"}]}})");
  ASSERT_TRUE(obj.ok());
  std::vector<Condition> list = ConditionsOf(**obj);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0], (Condition{"Ready", "True", "Up", "ok",
                                "2026-11-22T10:00:00Z", 3}));
  EXPECT_EQ(list[1], Condition{});  // wrong types read as absent
  ObjectBuilder b;
  ASSERT_TRUE(SetConditions(b, {list[0], {"Synced", "False"}}).ok());
  EXPECT_EQ(b.ToJson(),
            R"({"metadata":{},"status":{"conditions":[{"type":"Ready",)"
            R"("status":"True","observedGeneration":3,)"
            R"("lastTransitionTime":"2026-11-22T10:00:00Z","reason":"Up",)"
            R"("message":"ok"},{"type":"Synced","status":"False"}]}})");
  absl::StatusOr<ObjectPtr> built = b.Build();
  ASSERT_TRUE(built.ok());
  EXPECT_EQ(ConditionsOf(**built)[0], list[0]);
  EXPECT_TRUE(ConditionsOf(**built, "/nothing").empty());
  EXPECT_TRUE(ConditionsOf(**built, "/metadata").empty());
}

}  // namespace
}  // namespace api
}  // namespace kcr
