// The simulated containers' logs and PodLogOptions parsing (pods/log).
#include "apiserver/endpoints/pod_log.h"

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/object_builder.h"
#include "api/types/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kcr::apiserver {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

api::ObjectPtr Pod(const std::string& annotations, const std::string& state) {
  auto b = api::ObjectBuilder::FromJson(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
      "namespace":"default","annotations":{)" +
      annotations + R"(}},"spec":{"nodeName":"kcr-node","containers":[
      {"name":"c","image":"img:1"}]},"status":{"containerStatuses":[
      {"name":"c","state":)" +
      state + "}]}}");
  EXPECT_TRUE(b.ok()) << b.status();
  auto o = b->Build();
  EXPECT_TRUE(o.ok()) << o.status();
  return *o;
}

std::vector<std::string> Texts(const std::vector<LogLine>& lines) {
  std::vector<std::string> out;
  for (const LogLine& l : lines) out.push_back(l.text);
  return out;
}

TEST(SimulatedContainerLogTest, NothingBeforeTheContainerStarts) {
  EXPECT_TRUE(
      SimulatedContainerLog(
          *Pod("", R"({"waiting":{"reason":"ContainerCreating"}})"), "c")
          .empty());
  EXPECT_TRUE(
      SimulatedContainerLog(
          *Pod("", R"({"running":{"startedAt":"2025-01-01T00:00:00Z"}})"),
          "other")
          .empty());
}

TEST(SimulatedContainerLogTest, StartLinesThenTheTerminationMessage) {
  auto running = Pod("", R"({"running":{"startedAt":"2025-01-01T00:00:00Z"}})");
  std::vector<LogLine> lines = SimulatedContainerLog(*running, "c");
  EXPECT_THAT(Texts(lines),
              ElementsAre("Starting c (image img:1)",
                          "c is running on node kcr-node (simulated: no "
                          "process runs)"));
  EXPECT_EQ(lines[0].time, *api::ParseTime("2025-01-01T00:00:00Z"));

  auto done =
      Pod("", R"({"terminated":{"exitCode":0,"startedAt":"2025-01-01T00:00:00Z",
      "finishedAt":"2025-01-01T00:00:02Z","message":"{\"requests\":3}",
      "containerID":"containerd://x"}})");
  lines = SimulatedContainerLog(*done, "c");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2].text, "{\"requests\":3}");
  EXPECT_EQ(lines[2].time, *api::ParseTime("2025-01-01T00:00:02Z"));
}

TEST(SimulatedContainerLogTest, SimLogAnnotationReplacesTheStartLines) {
  auto pod = Pod(R"("kcr.io/sim-log":"one\ntwo\n")",
                 R"({"running":{"startedAt":"2025-01-01T00:00:00Z"}})");
  EXPECT_THAT(Texts(SimulatedContainerLog(*pod, "c")),
              ElementsAre("one", "two"));
}

TEST(FormatLogLineTest, TimestampsHaveNineFractionalDigits) {
  LogLine line{*api::ParseTime("2025-01-02T03:04:05.5Z"), "hi"};
  EXPECT_EQ(FormatLogLine(line, false), "hi\n");
  EXPECT_EQ(FormatLogLine(line, true), "2025-01-02T03:04:05.500000000Z hi\n");
}

TEST(ParsePodLogOptionsTest, ReadsAndValidates) {
  HttpRequest req;
  req.query = {{"container", "c"},
               {"follow", "true"},
               {"tailLines", "3"},
               {"limitBytes", "10"},
               {"timestamps", "1"}};
  auto o = ParsePodLogOptions(req, "p");
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->container, "c");
  EXPECT_TRUE(o->follow);
  EXPECT_TRUE(o->timestamps);
  EXPECT_EQ(o->tail_lines, 3);
  EXPECT_EQ(o->limit_bytes, 10);

  req.query = {{"tailLines", "-1"}, {"limitBytes", "0"}};
  o = ParsePodLogOptions(req, "p");
  ASSERT_FALSE(o.ok());
  EXPECT_THAT(std::string(o.status().message()),
              HasSubstr("PodLogOptions \"p\" is invalid"));
  EXPECT_THAT(std::string(o.status().message()),
              HasSubstr("limitBytes: Invalid value: 0: must be greater than "
                        "0"));

  req.query = {{"sinceSeconds", "5"}, {"sinceTime", "2025-01-01T00:00:00Z"}};
  o = ParsePodLogOptions(req, "p");
  ASSERT_FALSE(o.ok());
  EXPECT_THAT(std::string(o.status().message()),
              HasSubstr("at most one of `sinceTime` or `sinceSeconds`"));

  req.query = {{"tailLines", "x"}};
  o = ParsePodLogOptions(req, "p");
  ASSERT_FALSE(o.ok());
  EXPECT_THAT(std::string(o.status().message()), HasSubstr("tailLines"));
}

}  // namespace
}  // namespace kcr::apiserver
