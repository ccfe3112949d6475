#include "api/types/pod.h"

#include <functional>
#include <string>

#include "gmock/gmock.h"
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

TEST(PodViewTest, HowContainersEnded) {
  absl::StatusOr<PodView> pod = PodView::Create(Parse(R"({"kind":"Pod",
    "metadata":{"name":"p"},"status":{"phase":"Failed","reason":"Evicted",
    "message":"low on memory",
    "containerStatuses":[
      {"name":"side","state":{"terminated":{"reason":"Completed",
        "exitCode":0}}},
      {"name":"main","state":{"terminated":{"reason":"Error","exitCode":3,
        "message":"3 of 10 requests failed"}}},
      {"name":"pull","state":{"waiting":{"reason":"ImagePullBackOff",
        "message":"back-off pulling image"}}}]}})"));
  ASSERT_TRUE(pod.ok());
  EXPECT_TRUE(pod->finished());
  EXPECT_EQ(pod->reason(), "Evicted");
  EXPECT_EQ(pod->message(), "low on memory");
  std::optional<ContainerStatus> main = pod->terminated_container("main");
  ASSERT_TRUE(main.has_value());
  EXPECT_EQ(main->state_reason, "Error");
  EXPECT_EQ(main->state_message, "3 of 10 requests failed");
  EXPECT_EQ(main->exit_code, 3);
  // Another name: the first container that ended.
  EXPECT_EQ(pod->terminated_container("other")->name, "side");
  EXPECT_EQ(pod->terminated_container("other")->exit_code, 0);
  const ContainerStatus pull = pod->container_statuses()[2];
  EXPECT_EQ(pull.state_message, "back-off pulling image");
  EXPECT_EQ(pull.exit_code, std::nullopt);

  absl::StatusOr<PodView> running = PodView::Create(Parse(
      R"({"kind":"Pod","metadata":{"name":"r"},"status":{"phase":"Running",
      "containerStatuses":[{"name":"main","state":{"running":{}}}]}})"));
  ASSERT_TRUE(running.ok());
  EXPECT_FALSE(running->finished());
  EXPECT_EQ(running->terminated_container("main"), std::nullopt);
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

TEST(PodBuilderTest, LoadPodSpec) {
  OwnerReference owner{"example.org/v1", "LoadTest", "lt", "uid-1", true, true};
  PodBuilder b("team-a", "");
  b.SetGenerateName("lt-load-")
      .SetLabels({{"loadtest", "lt"}})
      .SetOwner(owner)
      .SetRestartPolicy("Never")
      .SetContainer({"load",
                     "busybox:1.36",
                     {"/bin/sh", "-c"},
                     {"wget -q -O- http://svc:80/"},
                     {{"TARGET", "http://svc:80/"}, {"REPEAT", "3"}},
                     {8080}});
  absl::StatusOr<ObjectPtr> pod = b.Build();
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ((*pod)->kind(), "Pod");
  EXPECT_EQ((*pod)->api_version(), "v1");
  EXPECT_EQ((*pod)->namespace_(), "team-a");
  EXPECT_EQ((*pod)->name(), "");
  EXPECT_EQ((*pod)->generate_name(), "lt-load-");
  EXPECT_EQ((*pod)->Label("loadtest"), "lt");
  ASSERT_TRUE((*pod)->controller_reference().has_value());
  EXPECT_EQ((*pod)->controller_reference()->uid, "uid-1");
  EXPECT_EQ(
      b.ToJson(),
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"team-a",)"
      R"("generateName":"lt-load-","labels":{"loadtest":"lt"},)"
      R"("ownerReferences":[{"apiVersion":"example.org/v1","kind":"LoadTest",)"
      R"("name":"lt","uid":"uid-1","controller":true,"blockOwnerDeletion":true}]},)"
      R"("spec":{"restartPolicy":"Never","containers":[{"name":"load",)"
      R"("image":"busybox:1.36","command":["/bin/sh","-c"],)"
      R"("args":["wget -q -O- http://svc:80/"],)"
      R"("env":[{"name":"TARGET","value":"http://svc:80/"},)"
      R"({"name":"REPEAT","value":"3"}],"ports":[{"containerPort":8080}]}]}})");
}

TEST(PodBuilderTest, SetContainerReplacesByName) {
  PodBuilder b("ns", "p");
  b.SetContainer({"a", "img:1"}).SetContainer({"b", "img:2"});
  b.SetContainer({"a", "img:3", {}, {"x"}});
  absl::StatusOr<ObjectPtr> pod = b.Build();
  ASSERT_TRUE(pod.ok()) << pod.status();
  const rapidjson::Value* list = (*pod)->Find("/spec/containers");
  ASSERT_NE(list, nullptr);
  ASSERT_EQ(list->Size(), 2u);
  EXPECT_STREQ((*list)[0]["image"].GetString(), "img:3");
  EXPECT_STREQ((*list)[0]["args"][0].GetString(), "x");
  EXPECT_STREQ((*list)[1]["name"].GetString(), "b");
}

TEST(PodBuilderTest, TerminationReadsBackThroughTheView) {
  ContainerStatus ended;
  ended.name = "main";
  ended.state = "terminated";
  ended.state_reason = "Error";
  ended.state_message = "summary";
  ended.exit_code = 1;
  absl::StatusOr<ObjectPtr> built = PodBuilder("ns", "p")
                                        .SetPhase("Failed")
                                        .SetContainerStatus(ended)
                                        .Build();
  ASSERT_TRUE(built.ok()) << built.status();
  std::optional<ContainerStatus> read =
      PodView::Create(*built)->terminated_container("main");
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->state_reason, "Error");
  EXPECT_EQ(read->state_message, "summary");
  EXPECT_EQ(read->exit_code, 1);
}

TEST(PodBuilderTest, StatusReadsBackThroughTheView) {
  PodBuilder b("ns", "p");
  const absl::Time t0 = absl::FromUnixSeconds(1795000000);
  b.SetNodeName("node-1")
      .SetPhase("Running")
      .SetPodIP("10.0.0.7")
      .SetCondition({"Ready", "True", "", "", "", 0}, t0)
      .SetContainerStatus({"a", "img:1", true, true, 2, "running", ""})
      .SetContainerStatus(
          {"b", "img:2", false, false, 5, "waiting", "CrashLoopBackOff"});
  // A second report of the same container replaces the first.
  b.SetContainerStatus(
      {"b", "img:2", false, false, 6, "waiting", "CrashLoopBackOff"});
  absl::StatusOr<ObjectPtr> built = b.Build();
  ASSERT_TRUE(built.ok()) << built.status();
  absl::StatusOr<PodView> pod = PodView::Create(*built);
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ(pod->node_name(), "node-1");
  EXPECT_EQ(pod->phase(), "Running");
  EXPECT_EQ(pod->pod_ip(), "10.0.0.7");
  EXPECT_TRUE(pod->ready());
  EXPECT_EQ(pod->conditions()[0].last_transition_time, "2026-11-18T11:06:40Z");
  auto statuses = pod->container_statuses();
  ASSERT_EQ(statuses.size(), 2u);
  EXPECT_EQ(statuses[0].state, "running");
  EXPECT_EQ(statuses[1].state_reason, "CrashLoopBackOff");
  EXPECT_EQ(statuses[1].restart_count, 6);
  EXPECT_EQ(pod->total_restarts(), 8);
  EXPECT_EQ(pod->ready_containers(), 1);

  // Edit a cached pod: the condition flips, the time moves with it.
  PodBuilder edit(**built);
  edit.SetCondition({"Ready", "False", "ContainersNotReady", "", "", 0},
                    t0 + absl::Seconds(60));
  absl::StatusOr<ObjectPtr> edited = edit.Build();
  ASSERT_TRUE(edited.ok());
  EXPECT_FALSE(PodView::Create(*edited)->ready());
  EXPECT_EQ(PodView::Create(*edited)->conditions()[0].last_transition_time,
            "2026-11-18T11:07:40Z");
}

TEST(PodBuilderTest, BadInputIsAnErrorAndNeverWritten) {
  struct Case {
    std::function<void(PodBuilder&)> edit;
    const char* message;
  } cases[] = {
      {[](PodBuilder& b) {
         b.SetContainer({"", "img"});
       },
       "spec.containers: name is required"},
      {[](PodBuilder& b) {
         b.SetContainer({"a", "img", {}, {}, {}, {0}});
       },
       "spec.containers[a].ports: 0 is not between 1 and 65535"},
      {[](PodBuilder& b) {
         b.SetContainer({"a", "img", {}, {}, {}, {65536}});
       },
       "65536 is not between 1 and 65535"},
      {[](PodBuilder& b) { b.SetRestartPolicy("Sometimes"); },
       "spec.restartPolicy: Unsupported value: \"Sometimes\""},
      {[](PodBuilder& b) { b.SetPhase("Done"); },
       "status.phase: Unsupported value: \"Done\""},
      {[](PodBuilder& b) {
         b.SetContainerStatus({"", "", false, false, 0, "", ""});
       },
       "status.containerStatuses: name is required"},
      {[](PodBuilder& b) {
         b.SetContainerStatus({"a", "", false, false, 0, "sleeping", ""});
       },
       "status.containerStatuses[a].state: unknown state \"sleeping\""},
  };
  for (const Case& c : cases) {
    PodBuilder b("ns", "p");
    c.edit(b);
    // The first error sticks; later good edits do not clear it.
    b.SetPhase("Running").SetPhase("Nope");
    absl::StatusOr<ObjectPtr> pod = b.Build();
    ASSERT_FALSE(pod.ok()) << c.message;
    EXPECT_EQ(pod.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(pod.status().message()),
                ::testing::HasSubstr(c.message));
    EXPECT_EQ(b.ToJson().find("Nope"), std::string::npos);
    EXPECT_EQ(b.ToJson().find("Sometimes"), std::string::npos);
    EXPECT_EQ(b.ToJson().find("65536"), std::string::npos);
  }
}

}  // namespace
}  // namespace api
}  // namespace kcr
