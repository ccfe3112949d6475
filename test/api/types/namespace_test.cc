#include "api/types/namespace.h"

#include "gtest/gtest.h"

namespace kcr {
namespace api {
namespace {

ObjectPtr Parse(std::string_view json) {
  absl::StatusOr<ObjectPtr> obj = Object::Parse(json);
  EXPECT_TRUE(obj.ok()) << obj.status();
  return obj.ok() ? *obj : nullptr;
}

TEST(NamespaceViewTest, Phases) {
  auto active = NamespaceView::Create(Parse(
      R"({"kind":"Namespace","metadata":{"name":"a"},"status":{"phase":"Active"}})"));
  ASSERT_TRUE(active.ok());
  EXPECT_EQ(active->phase(), "Active");
  EXPECT_TRUE(active->active());
  EXPECT_FALSE(active->terminating());
  auto terminating = NamespaceView::Create(Parse(
      R"({"kind":"Namespace","metadata":{"name":"b"},"status":{"phase":"Terminating"}})"));
  EXPECT_TRUE(terminating->terminating());
  EXPECT_FALSE(terminating->active());
  auto deleting = NamespaceView::Create(Parse(
      R"({"metadata":{"name":"c","deletionTimestamp":"2026-11-22T10:00:00Z"},"status":{"phase":"Active"}})"));
  EXPECT_TRUE(deleting->terminating());
  EXPECT_FALSE(deleting->active());
}

TEST(NamespaceViewTest, MissingOrBadStatus) {
  auto fresh = NamespaceView::Create(Parse(R"({"metadata":{"name":"d"}})"));
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(fresh->phase(), "");
  EXPECT_TRUE(fresh->active());
  auto bad = NamespaceView::Create(
      Parse(R"({"metadata":{"name":"e"},"status":{"phase":1}})"));
  EXPECT_EQ(bad->phase(), "");
  auto odd = NamespaceView::Create(
      Parse(R"({"metadata":{"name":"f"},"status":"Active"})"));
  EXPECT_EQ(odd->phase(), "");
  EXPECT_FALSE(NamespaceView::Create(nullptr).ok());
  EXPECT_FALSE(
      NamespaceView::Create(Parse(R"({"kind":"Pod","metadata":{}})")).ok());
}

}  // namespace
}  // namespace api
}  // namespace kcr
