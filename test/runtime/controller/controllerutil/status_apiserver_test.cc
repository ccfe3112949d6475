// UpdateStatus against the local API server over HTTP.
#include <string>

#include "api/errors/errors.h"
#include "api/types/condition.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/controller/controllerutil/conditions.h"
#include "runtime/controller/controllerutil/status.h"
#include "test/runtime/controller/controllerutil/apiserver_fixture.h"

namespace kcr::controller::controllerutil {
namespace {

using testing::kDeployments;

const absl::Time kNow = absl::FromUnixSeconds(1700000000);

api::Condition True(std::string type) {
  api::Condition c;
  c.type = std::move(type);
  c.status = "True";
  c.reason = "Done";
  return c;
}

MutateFunc SetCondition(std::string type) {
  return [type](api::ObjectBuilder& o) {
    return SetStatusCondition(o, True(type), kNow).status();
  };
}

class UpdateStatusTest : public testing::ApiServerTest {
 protected:
  absl::StatusOr<api::ObjectPtr> Update(const MutateFunc& mutate) {
    return UpdateStatus(ctx_, client_.get(), kDeployments, "web", mutate,
                        Retry());
  }
};

TEST_F(UpdateStatusTest, WritesStatusOnly) {
  CreateDeployment("web");
  auto updated = Update([](api::ObjectBuilder& o) {
    (void)o.SetInt("/spec/replicas", 7);  // not the status: not stored
    return o.SetInt("/status/readyReplicas", 1);
  });
  ASSERT_TRUE(updated.ok()) << updated.status();
  api::ObjectPtr stored = Get(kDeployments, "web");
  EXPECT_EQ(stored->resource_version(), (*updated)->resource_version());
  EXPECT_EQ(stored->Find("/status/readyReplicas")->GetInt(), 1);
  EXPECT_EQ(stored->Find("/spec/replicas")->GetInt(), 1);
}

TEST_F(UpdateStatusTest, UnchangedWritesNothing) {
  CreateDeployment("web");
  auto first = Update(SetCondition("Ready"));
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = Update(SetCondition("Ready"));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ((*second)->resource_version(), (*first)->resource_version());
  EXPECT_EQ(Get(kDeployments, "web")->resource_version(),
            (*first)->resource_version());
}

TEST_F(UpdateStatusTest, RacingWritersBothApply) {
  CreateDeployment("web");
  // Writer A's first attempt lets writer B write in between its read and
  // its write: A's write conflicts, A reads again and applies on top.
  int a_calls = 0;
  auto a = Update([&](api::ObjectBuilder& o) -> absl::Status {
    if (++a_calls == 1) {
      auto b = Update(SetCondition("Available"));
      if (!b.ok()) return b.status();
    }
    return SetStatusCondition(o, True("Progressing"), kNow).status();
  });
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a_calls, 2);
  EXPECT_EQ(retries(), 1);
  std::vector<api::Condition> conditions =
      api::ConditionsOf(*Get(kDeployments, "web"));
  EXPECT_TRUE(api::IsStatusConditionTrue(conditions, "Available"));
  EXPECT_TRUE(api::IsStatusConditionTrue(conditions, "Progressing"));
}

TEST_F(UpdateStatusTest, GivesUpAfterDefaultRetrySteps) {
  CreateDeployment("web");
  int calls = 0;
  auto result = Update([&](api::ObjectBuilder& o) -> absl::Status {
    ++calls;
    // Someone else always writes in between.
    auto other = Update([&](api::ObjectBuilder& p) {
      return p.SetInt("/status/observedGeneration", 100 + calls);
    });
    if (!other.ok()) return other.status();
    return o.SetInt("/status/readyReplicas", 1);
  });
  EXPECT_TRUE(api::IsConflict(result.status())) << result.status();
  EXPECT_EQ(calls, 5);
}

TEST_F(UpdateStatusTest, ErrorsAreReturned) {
  auto missing = Update(SetCondition("Ready"));
  EXPECT_TRUE(api::IsNotFound(missing.status())) << missing.status();
  CreateDeployment("web");
  auto refused = Update([](api::ObjectBuilder&) {
    return absl::FailedPreconditionError("not now");
  });
  EXPECT_EQ(refused.status().message(), "not now");
}

TEST_F(UpdateStatusTest, FromTheCacheUnchangedSendsNothing) {
  CreateDeployment("web");
  auto first = Update(SetCondition("Ready"));
  ASSERT_TRUE(first.ok()) << first.status();
  const api::ObjectPtr cached = *first;
  auto again = UpdateStatus(ctx_, client_.get(), kDeployments, cached,
                            SetCondition("Ready"), Retry());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, cached);
}

TEST_F(UpdateStatusTest, FromTheCacheAStaleObjectIsWrittenOver) {
  CreateDeployment("web");
  const api::ObjectPtr stale = Get(kDeployments, "web");
  ASSERT_TRUE(Update(SetCondition("Available")).ok());
  auto written = UpdateStatus(ctx_, client_.get(), kDeployments, stale,
                              SetCondition("Progressing"), Retry());
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(retries(), 0);
  std::vector<api::Condition> conditions =
      api::ConditionsOf(*Get(kDeployments, "web"));
  EXPECT_TRUE(api::IsStatusConditionTrue(conditions, "Available"));
  EXPECT_TRUE(api::IsStatusConditionTrue(conditions, "Progressing"));
}

}  // namespace
}  // namespace kcr::controller::controllerutil
