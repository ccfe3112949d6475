// Finalizers written to the local API server over HTTP.
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/errors/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/controller/controllerutil/finalizer.h"
#include "test/runtime/controller/controllerutil/apiserver_fixture.h"

namespace kcr::controller::controllerutil {
namespace {

using ::testing::ElementsAre;
using testing::kConfigMaps;
using ::testing::UnorderedElementsAreArray;

class FinalizerTest : public testing::ApiServerTest {};

TEST_F(FinalizerTest, AddTwiceWritesOnce) {
  api::ObjectPtr cm = CreateConfigMap("settings");
  EXPECT_FALSE(ContainsFinalizer(*cm, "example.org/cleanup"));
  auto added = AddFinalizer(ctx_, client_.get(), kConfigMaps, cm,
                            "example.org/cleanup", Retry());
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_TRUE(ContainsFinalizer(**added, "example.org/cleanup"));
  EXPECT_NE((*added)->resource_version(), cm->resource_version());

  auto again = AddFinalizer(ctx_, client_.get(), kConfigMaps, *added,
                            "example.org/cleanup", Retry());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->get(), added->get());  // no request at all
  api::ObjectPtr stored = Get(kConfigMaps, "settings");
  EXPECT_EQ(stored->resource_version(), (*added)->resource_version());
  EXPECT_THAT(stored->finalizers(), ElementsAre("example.org/cleanup"));
}

TEST_F(FinalizerTest, RemoveKeepsOthersAndWritesNothingWhenAbsent) {
  api::ObjectPtr cm = CreateConfigMap("settings");
  auto a = AddFinalizer(ctx_, client_.get(), kConfigMaps, cm, "a", Retry());
  ASSERT_TRUE(a.ok()) << a.status();
  auto ab = AddFinalizer(ctx_, client_.get(), kConfigMaps, *a, "b", Retry());
  ASSERT_TRUE(ab.ok()) << ab.status();
  auto b = RemoveFinalizer(ctx_, client_.get(), kConfigMaps, *ab, "a", Retry());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_THAT((*b)->finalizers(), ElementsAre("b"));
  auto same =
      RemoveFinalizer(ctx_, client_.get(), kConfigMaps, *b, "a", Retry());
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->get(), b->get());
}

TEST_F(FinalizerTest, StaleObjectIsReadAgainAndBothWritersWin) {
  api::ObjectPtr stale = CreateConfigMap("settings");
  // Another writer adds its finalizer after `stale` was read.
  auto other =
      AddFinalizer(ctx_, client_.get(), kConfigMaps, stale, "other", Retry());
  ASSERT_TRUE(other.ok()) << other.status();
  auto mine =
      AddFinalizer(ctx_, client_.get(), kConfigMaps, stale, "mine", Retry());
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_EQ(retries(), 1);  // one conflict, then a re-read
  EXPECT_THAT(Get(kConfigMaps, "settings")->finalizers(),
              ElementsAre("other", "mine"));
}

TEST_F(FinalizerTest, ConcurrentWritersAllEndUpApplied) {
  api::ObjectPtr cm = CreateConfigMap("settings");
  constexpr int kWriters = 4;
  RetryOptions retry = Retry();
  retry.backoff.steps = 50;  // four writers on one object conflict a lot
  std::vector<absl::Status> results(kWriters);
  std::vector<std::thread> threads;
  std::vector<std::string> names;
  for (int i = 0; i < kWriters; ++i) {
    names.push_back(absl::StrCat("writer-", i));
    threads.emplace_back([&, i] {
      results[i] = AddFinalizer(ctx_, client_.get(), kConfigMaps, cm,
                                absl::StrCat("writer-", i), retry)
                       .status();
    });
  }
  for (std::thread& t : threads) t.join();
  for (const absl::Status& s : results) EXPECT_TRUE(s.ok()) << s;
  std::vector<std::string> finalizers;
  api::ObjectPtr stored = Get(kConfigMaps, "settings");
  for (std::string_view f : stored->finalizers()) {
    finalizers.emplace_back(f);
  }
  EXPECT_THAT(finalizers, UnorderedElementsAreArray(names));
}

TEST_F(FinalizerTest, RemovingTheLastFinalizerOfADeletedObjectDeletesIt) {
  api::ObjectPtr cm = CreateConfigMap("settings");
  auto held =
      AddFinalizer(ctx_, client_.get(), kConfigMaps, cm, "hold", Retry());
  ASSERT_TRUE(held.ok());
  ASSERT_TRUE(client_->Delete(ctx_, kConfigMaps, "settings").ok());
  api::ObjectPtr deleting = Get(kConfigMaps, "settings");
  ASSERT_TRUE(deleting->being_deleted());
  auto released = RemoveFinalizer(ctx_, client_.get(), kConfigMaps, deleting,
                                  "hold", Retry());
  ASSERT_TRUE(released.ok()) << released.status();
  EXPECT_TRUE(
      api::IsNotFound(client_->Get(ctx_, kConfigMaps, "settings").status()));
}

TEST_F(FinalizerTest, GoneObjectIsNotFound) {
  api::ObjectPtr cm = CreateConfigMap("settings");
  ASSERT_TRUE(client_->Delete(ctx_, kConfigMaps, "settings").ok());
  auto added = AddFinalizer(ctx_, client_.get(), kConfigMaps, cm, "a", Retry());
  // The patch conflicts or finds nothing; either way, the re-read says 404.
  EXPECT_TRUE(api::IsNotFound(added.status())) << added.status();
}

}  // namespace
}  // namespace kcr::controller::controllerutil
