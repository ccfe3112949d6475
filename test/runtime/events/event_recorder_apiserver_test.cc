// The recorder end to end: events recorded against the local API server,
// over HTTP with the real REST client, read back with List.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/object_builder.h"
#include "api/types/event.h"
#include "base/context.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/client/rest_client.h"
#include "runtime/events/event_broadcaster.h"
#include "test/apiserver/api_server_fixture.h"

namespace kcr::events {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const client::Resource kConfigMaps =
    client::Resource::Namespaced({"", "v1", "configmaps"}, "default");
const client::Resource kEvents =
    client::Resource::Namespaced({"", "v1", "events"}, "default");

class EventRecorderApiServerTest : public kcr::testing::ApiServerFixture {
 protected:
  void SetUp() override {
    StartServer();
    ASSERT_FALSE(HasFatalFailure());
    broadcaster_ = NewBroadcaster(client_.get());
    recorder_ = broadcaster_->NewRecorder({"test-controller", "node-1"});
  }
  void TearDown() override { broadcaster_.reset(); }

  api::ObjectPtr CreateConfigMap(const std::string& name) {
    api::ObjectBuilder b("v1", "ConfigMap");
    b.SetName(name).SetNamespace("default");
    auto created = client_->Create(ctx_, kConfigMaps, **b.Build());
    EXPECT_TRUE(created.ok()) << created.status();
    return *created;
  }

  std::vector<api::EventView> ListEvents() {
    std::vector<api::EventView> out;
    auto list = client_->List(ctx_, kEvents);
    EXPECT_TRUE(list.ok()) << list.status();
    if (!list.ok()) return out;
    for (const api::ObjectPtr& item : list->items) {
      auto view = api::EventView::Create(item);
      EXPECT_TRUE(view.ok()) << view.status();
      if (view.ok()) out.push_back(*view);
    }
    return out;
  }

  const Context ctx_ = Context::Background();
  std::unique_ptr<EventBroadcaster> broadcaster_;
  std::unique_ptr<EventRecorder> recorder_;
};

TEST_F(EventRecorderApiServerTest, RecordedEventIsListed) {
  api::ObjectPtr cm = CreateConfigMap("settings");
  recorder_->Eventf(*cm, api::kEventTypeNormal, "Synced", "copied to %d", 4);
  ASSERT_TRUE(broadcaster_->Flush(absl::Seconds(60)));
  std::vector<api::EventView> events = ListEvents();
  ASSERT_EQ(events.size(), 1u);
  const api::EventView& e = events[0];
  EXPECT_THAT(std::string(e.object().name()), StartsWith("settings."));
  EXPECT_EQ(e.object().namespace_(), "default");
  api::ObjectReference ref = e.involved_object();
  EXPECT_EQ(ref.kind, "ConfigMap");
  EXPECT_EQ(ref.api_version, "v1");
  EXPECT_EQ(ref.name, "settings");
  EXPECT_EQ(ref.namespace_, "default");
  EXPECT_EQ(ref.uid, cm->uid());
  EXPECT_EQ(ref.resource_version, cm->resource_version());
  EXPECT_EQ(e.reason(), "Synced");
  EXPECT_EQ(e.message(), "copied to 4");
  EXPECT_EQ(e.type(), "Normal");
  EXPECT_EQ(e.count(), 1);
  EXPECT_EQ(e.source_component(), "test-controller");
  EXPECT_EQ(e.source_host(), "node-1");
  EXPECT_FALSE(e.first_timestamp().empty());
  EXPECT_EQ(e.first_timestamp(), e.last_timestamp());
  const rapidjson::Value* reporting = e.object().Find("/reportingComponent");
  ASSERT_NE(reporting, nullptr);
  EXPECT_STREQ(reporting->GetString(), "test-controller");
  EXPECT_EQ(broadcaster_->stats().written, 1);
}

TEST_F(EventRecorderApiServerTest, RepeatsAreCountedOnOneEvent) {
  api::ObjectPtr cm = CreateConfigMap("settings");
  for (int i = 0; i < 3; ++i) {
    recorder_->Event(*cm, api::kEventTypeWarning, "Failed", "no source");
    ASSERT_TRUE(broadcaster_->Flush(absl::Seconds(60)));
  }
  std::vector<api::EventView> events = ListEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].count(), 3);
  EXPECT_EQ(events[0].message(), "no source");
  EXPECT_EQ(broadcaster_->stats().written, 3);
}

TEST_F(EventRecorderApiServerTest, SimilarEventsAreCombined) {
  api::ObjectPtr cm = CreateConfigMap("settings");
  for (int i = 0; i < 12; ++i) {
    recorder_->Event(*cm, api::kEventTypeWarning, "Failed",
                     absl::StrCat("attempt ", i));
  }
  ASSERT_TRUE(broadcaster_->Flush(absl::Seconds(60)));
  std::vector<api::EventView> events = ListEvents();
  // Nine as recorded, then one combined Event counting the last three.
  ASSERT_EQ(events.size(), 10u);
  int combined = 0;
  for (const api::EventView& e : events) {
    if (e.message().rfind("(combined from similar events): ", 0) == 0) {
      ++combined;
      EXPECT_EQ(e.count(), 3);
      EXPECT_EQ(e.message(), "(combined from similar events): attempt 11");
    } else {
      EXPECT_EQ(e.count(), 1);
    }
  }
  EXPECT_EQ(combined, 1);
}

TEST_F(EventRecorderApiServerTest, ClusterScopedObjectsEventsLiveInDefault) {
  api::ObjectBuilder b("v1", "Namespace");
  b.SetName("team-a");
  auto ns = client_->Create(
      ctx_, client::Resource::ClusterScoped({"", "v1", "namespaces"}),
      **b.Build());
  ASSERT_TRUE(ns.ok()) << ns.status();
  recorder_->Event(**ns, api::kEventTypeNormal, "Created", "made");
  ASSERT_TRUE(broadcaster_->Flush(absl::Seconds(60)));
  std::vector<api::EventView> events = ListEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].involved_object().name, "team-a");
  EXPECT_THAT(std::string(events[0].object().name()), HasSubstr("team-a."));
}

}  // namespace
}  // namespace kcr::events
