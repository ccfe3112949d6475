#include "runtime/explorer/point.h"

#include "gtest/gtest.h"

namespace kcr::explorer {
namespace {

TEST(PointTest, EveryFormRoundTrips) {
  for (const char* text :
       {"reference", "crash-after-write:3", "error-409-on-write:1",
        "error-500-on-write:2", "error-429-on-write:7",
        "error-504-after-store-on-write:4", "stale-view:configmaps:step:2",
        "stale-view:deployments.apps:step:1", "unobserved:step:3:2"}) {
    auto p = Point::Parse(text);
    ASSERT_TRUE(p.ok()) << text << ": " << p.status();
    EXPECT_EQ(p->ToString(), text);
  }
}

TEST(PointTest, FieldsAndClasses) {
  auto p = Point::Parse("error-504-after-store-on-write:4");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kind, Point::Kind::kError);
  EXPECT_EQ(p->code, 504);
  EXPECT_TRUE(p->after_store);
  EXPECT_EQ(p->write, 4);
  EXPECT_EQ(p->Class(), "api-error");
  EXPECT_EQ(Point::Parse("crash-after-write:1")->Class(), "crash");
  EXPECT_EQ(Point::Parse("stale-view:secrets:step:1")->Class(), "stale-view");
  EXPECT_EQ(Point::Parse("unobserved:step:1:1")->Class(), "unobserved");
}

TEST(PointTest, RefusesMalformed) {
  for (const char* text :
       {"", "crash-after-write", "crash-after-write:0", "crash-after-write:x",
        "error-418-on-write:1", "error-409-after-store-on-write:1",
        "error-409-on-read:1", "stale-view::step:1", "stale-view:pods:2",
        "unobserved:step:1", "explode:1"}) {
    EXPECT_FALSE(Point::Parse(text).ok()) << text;
  }
}

TEST(SelectionTest, RoundTripsAndRefuses) {
  auto s = Selection::Parse("nginx:crash-after-write:3:seed=42");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->scenario, "nginx");
  EXPECT_EQ(s->point.write, 3);
  EXPECT_EQ(s->seed, 42u);
  EXPECT_EQ(s->ToString(), "nginx:crash-after-write:3:seed=42");
  auto stale = Selection::Parse("planted-a:stale-view:secrets:step:1:seed=1");
  ASSERT_TRUE(stale.ok()) << stale.status();
  EXPECT_EQ(stale->point.resource, "secrets");
  EXPECT_FALSE(Selection::Parse("nginx:crash-after-write:3").ok());
  EXPECT_FALSE(Selection::Parse(":crash-after-write:3:seed=1").ok());
  EXPECT_FALSE(Selection::Parse("nginx:seed=1").ok());
}

}  // namespace
}  // namespace kcr::explorer
