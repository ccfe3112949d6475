#include "runtime/client/request.h"

#include "absl/status/status.h"
#include "api/object.h"
#include "gtest/gtest.h"

namespace kcr::client {
namespace {

const Resource kPods = Resource::Namespaced({"", "v1", "pods"}, "default");

TEST(RequestTest, TargetEscapesTheQuery) {
  Request r{"GET", "/api/v1/pods"};
  r.query = {{"labelSelector", "app in (a,b)"}, {"limit", "5"}};
  EXPECT_EQ(r.Target(),
            "/api/v1/pods?labelSelector=app%20in%20%28a%2Cb%29"
            "&limit=5");
}

TEST(RequestTest, WatchAsksForEventsAndOutlivesTheServerTimeout) {
  ListOptions options;
  options.timeout_seconds = 30;
  options.allow_watch_bookmarks = true;
  absl::StatusOr<Request> r = WatchRequest(kPods, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->Target(),
            "/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=30"
            "&allowWatchBookmarks=true");
  EXPECT_TRUE(r->watch);
  EXPECT_TRUE(r->idempotent);
  EXPECT_EQ(r->watch_timeout, absl::Seconds(90));
}

TEST(RequestTest, ApplyNeedsAFieldManager) {
  absl::StatusOr<Request> r =
      PatchRequest(kPods, "web", PatchType::kApply, "{}", {}, "");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(RequestTest, GetRawNeedsAnAbsolutePath) {
  EXPECT_FALSE(GetRawRequest("version").ok());
  EXPECT_EQ(GetRawRequest("/version")->path, "/version");
}

TEST(RequestTest, DecodeListFillsTheKindOfItems) {
  absl::StatusOr<ObjectList> list = DecodeList(
      R"({"kind":"PodList","apiVersion":"v1","metadata":{"continue":"c"},)"
      R"("items":[{"metadata":{"name":"a"}}]})",
      {});
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->continue_token, "c");
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0]->kind(), "Pod");
}

}  // namespace
}  // namespace kcr::client
