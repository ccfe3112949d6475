#include "api/types/pod.h"

#include "gtest/gtest.h"
#include "test/api/testdata_util.h"

namespace kcr {
namespace api {
namespace {

ObjectPtr Parse(std::string_view json) {
  absl::StatusOr<ObjectPtr> obj = Object::Parse(json);
  EXPECT_TRUE(obj.ok()) << obj.status();
  return obj.ok() ? *obj : nullptr;
}

TEST(PodViewTest, ReadsFixture) {
  absl::StatusOr<PodView> pod =
      PodView::Create(Parse(testing::ReadTestdata("pod.json")));
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ(pod->phase(), "Running");
  EXPECT_EQ(pod->node_name(), "worker-2");
  EXPECT_EQ(pod->pod_ip(), "10.244.1.37");
  EXPECT_TRUE(pod->ready());
  EXPECT_EQ(pod->conditions().size(), 4u);
  auto statuses = pod->container_statuses();
  ASSERT_EQ(statuses.size(), 1u);
  EXPECT_EQ(statuses[0].name, "web");
  EXPECT_TRUE(statuses[0].ready);
  EXPECT_TRUE(statuses[0].started);
  EXPECT_EQ(statuses[0].restart_count, 2);
  EXPECT_EQ(statuses[0].state, "running");
  EXPECT_EQ(pod->total_restarts(), 2);
  EXPECT_EQ(pod->ready_containers(), 1);
}

TEST(PodViewTest, CrashLoopAndInitRestarts) {
  absl::StatusOr<PodView> pod = PodView::Create(Parse(R"({"kind":"Pod",
    "metadata":{"name":"p"},"status":{"phase":"Running",
    "conditions":[{"type":"Ready","status":"False"}],
    "initContainerStatuses":[{"name":"init","restartCount":1,"ready":true,
      "state":{"terminated":{"reason":"Completed","exitCode":0}}}],
    "containerStatuses":[{"name":"a","restartCount":5,"ready":false,
      "state":{"waiting":{"reason":"CrashLoopBackOff"}}},
      {"name":"b","restartCount":0,"ready":true,"state":{"running":{}}}]}})"));
  ASSERT_TRUE(pod.ok());
  EXPECT_FALSE(pod->ready());
  EXPECT_EQ(pod->total_restarts(), 6);
  EXPECT_EQ(pod->ready_containers(), 1);
  auto statuses = pod->container_statuses();
  EXPECT_EQ(statuses[0].state, "waiting");
  EXPECT_EQ(statuses[0].state_reason, "CrashLoopBackOff");
  EXPECT_EQ(pod->init_container_statuses()[0].state_reason, "Completed");
}

TEST(PodViewTest, BadAndMissingFieldsReadAsAbsent) {
  absl::StatusOr<PodView> empty = PodView::Create(Parse(R"({"metadata":{}})"));
  ASSERT_TRUE(empty.ok());  // list items carry no kind
  EXPECT_EQ(empty->phase(), "");
  EXPECT_FALSE(empty->ready());
  EXPECT_EQ(empty->total_restarts(), 0);
  absl::StatusOr<PodView> bad = PodView::Create(Parse(R"({"kind":"Pod",
    "metadata":{},"spec":[],"status":{"phase":3,"conditions":{"a":1},
    "containerStatuses":[1,"x",{"name":2,"restartCount":"9","ready":"yes",
    "state":[]},{"restartCount":99999999999}]}})"));
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->phase(), "");
  EXPECT_EQ(bad->node_name(), "");
  EXPECT_TRUE(bad->conditions().empty());
  auto statuses = bad->container_statuses();
  ASSERT_EQ(statuses.size(), 2u);
  EXPECT_EQ(statuses[0].name, "");
  EXPECT_EQ(statuses[0].restart_count, 0);
  EXPECT_FALSE(statuses[0].ready);
  EXPECT_EQ(statuses[0].state, "");
  EXPECT_EQ(bad->total_restarts(), 0);
  ObjectPtr null_status = Parse(R"({"metadata":{},"status":null})");
  EXPECT_EQ(PodView::Create(null_status)->phase(), "");
}

TEST(PodViewTest, WrongKindOrNull) {
  EXPECT_FALSE(PodView::Create(nullptr).ok());
  EXPECT_EQ(PodView::Create(Parse(R"({"kind":"Service","metadata":{}})"))
                .status()
                .message(),
            "kind is Service, not Pod");
}

}  // namespace
}  // namespace api
}  // namespace kcr
