#include "api/types/event.h"

#include "gtest/gtest.h"

namespace kcr {
namespace api {
namespace {

ObjectPtr Parse(std::string_view json) {
  absl::StatusOr<ObjectPtr> obj = Object::Parse(json);
  EXPECT_TRUE(obj.ok()) << obj.status();
  return obj.ok() ? *obj : nullptr;
}

TEST(EventTest, BuildAndRead) {
  ObjectPtr nginx = Parse(
      R"({"apiVersion":"example.org/v1","kind":"Nginx","metadata":{"name":"web",)"
      R"("namespace":"ns","uid":"u-1","resourceVersion":"42"}})");
  const absl::Time t0 = absl::FromUnixSeconds(1795341600);
  EventBuilder b("ns", "web.1879a2b3c4d5e6f7");
  b.SetInvolvedObject(ObjectReference::To(*nginx))
      .SetReason("Created")
      .SetMessage("created deployment web-deploy")
      .SetType(kEventTypeNormal)
      .SetCount(1)
      .SetFirstTimestamp(t0)
      .SetLastTimestamp(t0)
      .SetSource("kcr-controller-manager", "");
  absl::StatusOr<ObjectPtr> built = b.Build();
  ASSERT_TRUE(built.ok()) << built.status();
  auto event = EventView::Create(*built);
  ASSERT_TRUE(event.ok());
  ObjectReference ref = event->involved_object();
  EXPECT_EQ(ref.kind, "Nginx");
  EXPECT_EQ(ref.namespace_, "ns");
  EXPECT_EQ(ref.name, "web");
  EXPECT_EQ(ref.uid, "u-1");
  EXPECT_EQ(ref.api_version, "example.org/v1");
  EXPECT_EQ(ref.resource_version, "42");
  EXPECT_EQ(event->reason(), "Created");
  EXPECT_EQ(event->message(), "created deployment web-deploy");
  EXPECT_EQ(event->type(), "Normal");
  EXPECT_EQ(event->count(), 1);
  EXPECT_EQ(event->first_timestamp(), "2026-11-22T10:00:00Z");
  EXPECT_EQ(event->last_timestamp(), "2026-11-22T10:00:00Z");
  EXPECT_EQ(event->source_component(), "kcr-controller-manager");
  EXPECT_EQ(event->source_host(), "");
  EXPECT_EQ((*built)->Find("/source/host"), nullptr);

  // A repeat bumps count and lastTimestamp.
  EventBuilder repeat(**built);
  repeat.SetCount(2).SetLastTimestamp(t0 + absl::Minutes(1));
  auto again = EventView::Create(*repeat.Build());
  EXPECT_EQ(again->count(), 2);
  EXPECT_EQ(again->first_timestamp(), "2026-11-22T10:00:00Z");
  EXPECT_EQ(again->last_timestamp(), "2026-11-22T10:01:00Z");
}

TEST(EventTest, BadFields) {
  auto event = EventView::Create(Parse(
      R"({"kind":"Event","metadata":{},"involvedObject":"pod/x","reason":1,)"
      R"("count":"3","source":{"component":false}})"));
  ASSERT_TRUE(event.ok());
  EXPECT_EQ(event->involved_object().name, "");
  EXPECT_EQ(event->reason(), "");
  EXPECT_EQ(event->count(), 0);
  EXPECT_EQ(event->source_component(), "");
  EXPECT_FALSE(
      EventView::Create(Parse(R"({"kind":"Pod","metadata":{}})")).ok());
}

}  // namespace
}  // namespace api
}  // namespace kcr
