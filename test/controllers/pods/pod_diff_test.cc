#include "controllers/pods/pod_diff.h"

#include <string>

#include "api/object.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kcr::pods {
namespace {

using ::testing::ElementsAre;
using ::testing::FieldsAre;

api::ObjectPtr Parse(const std::string& json) {
  auto object = api::Object::Parse(json);
  EXPECT_TRUE(object.ok()) << object.status();
  return object.ok() ? *object : nullptr;
}

constexpr char kPending[] = R"({"apiVersion":"v1","kind":"Pod",
  "metadata":{"namespace":"default","name":"web"},
  "spec":{"containers":[{"name":"c","image":"nginx"}]},
  "status":{"phase":"Pending"}})";

constexpr char kRunning[] = R"({"apiVersion":"v1","kind":"Pod",
  "metadata":{"namespace":"default","name":"web"},
  "spec":{"nodeName":"kcr-node","containers":[{"name":"c","image":"nginx"}]},
  "status":{"phase":"Running",
    "conditions":[{"type":"Ready","status":"True"}],
    "initContainerStatuses":[{"name":"i","restartCount":1}],
    "containerStatuses":[{"name":"c","ready":true,"restartCount":2}]}})";

TEST(PodStateOfTest, ReadsTheFourFields) {
  PodState s = PodStateOf(Parse(kRunning));
  EXPECT_EQ(s.phase, "Running");
  EXPECT_TRUE(s.ready);
  EXPECT_EQ(s.restarts, 3);
  EXPECT_EQ(s.node, "kcr-node");
}

TEST(PodStateOfTest, MissingAndMistypedFieldsReadEmpty) {
  PodState s = PodStateOf(Parse(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},
          "spec":{"nodeName":7},
          "status":{"phase":["Running"],"conditions":"no",
                    "containerStatuses":[{"restartCount":"many"}]}})"));
  EXPECT_EQ(s.phase, "");
  EXPECT_FALSE(s.ready);
  EXPECT_EQ(s.restarts, 0);
  EXPECT_EQ(s.node, "");
  // Not a Pod at all, or nothing.
  EXPECT_EQ(
      PodStateOf(
          Parse(
              R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}})"))
          .phase,
      "");
  EXPECT_EQ(PodStateOf(nullptr).restarts, 0);
}

TEST(DiffPodStatesTest, EveryFieldInOrder) {
  std::vector<PodChange> changes =
      DiffPodStates(PodStateOf(Parse(kPending)), PodStateOf(Parse(kRunning)));
  EXPECT_THAT(changes, ElementsAre(FieldsAre("phase", "Pending", "Running"),
                                   FieldsAre("ready", "false", "true"),
                                   FieldsAre("restarts", "0", "3"),
                                   FieldsAre("node", "\"\"", "kcr-node")));
  EXPECT_EQ(FormatChanges(changes),
            "phase=Pending->Running ready=false->true restarts=0->3 "
            "node=\"\"->kcr-node");
}

TEST(DiffPodStatesTest, OnlyWhatChanged) {
  PodState before = PodStateOf(Parse(kRunning));
  PodState after = before;
  EXPECT_TRUE(DiffPodStates(before, after).empty());
  EXPECT_EQ(FormatChanges({}), "");

  after.restarts = 4;
  EXPECT_EQ(FormatChanges(DiffPodStates(before, after)), "restarts=3->4");

  after = before;
  after.ready = false;
  after.phase = "Failed";
  EXPECT_EQ(FormatChanges(DiffPodStates(before, after)),
            "phase=Running->Failed ready=true->false");
}

TEST(FormatStateTest, KeyValuePairs) {
  EXPECT_EQ(FormatState(PodStateOf(Parse(kRunning))),
            "phase=Running ready=true restarts=3 node=kcr-node");
  EXPECT_EQ(FormatState(PodState{}),
            "phase=\"\" ready=false restarts=0 node=\"\"");
}

}  // namespace
}  // namespace kcr::pods
