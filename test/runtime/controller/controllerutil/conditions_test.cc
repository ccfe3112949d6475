#include "runtime/controller/controllerutil/conditions.h"

#include "api/object_builder.h"
#include "gtest/gtest.h"

namespace kcr::controller::controllerutil {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1700000000);

api::Condition Ready(std::string status, std::string reason) {
  api::Condition c;
  c.type = "Ready";
  c.status = std::move(status);
  c.reason = std::move(reason);
  return c;
}

TEST(ConditionsTest, TransitionTimeMovesOnlyWithStatus) {
  api::ObjectBuilder b("example.org/v1", "Nginx");
  auto changed = SetStatusCondition(b, Ready("False", "Starting"), kT0);
  ASSERT_TRUE(changed.ok());
  EXPECT_TRUE(*changed);
  ASSERT_EQ(ConditionsOf(b).size(), 1u);
  EXPECT_EQ(ConditionsOf(b)[0].last_transition_time, "2023-11-14T22:13:20Z");

  // Same status, new reason: reason changes, the time does not.
  changed =
      SetStatusCondition(b, Ready("False", "Pulling"), kT0 + absl::Minutes(1));
  EXPECT_TRUE(*changed);
  EXPECT_EQ(ConditionsOf(b)[0].reason, "Pulling");
  EXPECT_EQ(ConditionsOf(b)[0].last_transition_time, "2023-11-14T22:13:20Z");

  // Nothing new: nothing changes.
  changed =
      SetStatusCondition(b, Ready("False", "Pulling"), kT0 + absl::Minutes(2));
  EXPECT_FALSE(*changed);

  changed =
      SetStatusCondition(b, Ready("True", "Running"), kT0 + absl::Minutes(3));
  EXPECT_TRUE(*changed);
  EXPECT_EQ(ConditionsOf(b)[0].last_transition_time, "2023-11-14T22:16:20Z");
  EXPECT_TRUE(api::IsStatusConditionTrue(ConditionsOf(b), "Ready"));

  EXPECT_TRUE(*RemoveStatusCondition(b, "Ready"));
  EXPECT_FALSE(*RemoveStatusCondition(b, "Ready"));
  EXPECT_TRUE(ConditionsOf(b).empty());
}

TEST(ConditionsTest, StatusThatIsNotAnObjectIsAnError) {
  api::ObjectBuilder b("example.org/v1", "Nginx");
  ASSERT_TRUE(b.SetString("/status", "weird").ok());
  EXPECT_FALSE(SetStatusCondition(b, Ready("True", "x"), kT0).ok());
}

}  // namespace
}  // namespace kcr::controller::controllerutil
