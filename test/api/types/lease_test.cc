#include "api/types/lease.h"

#include "gtest/gtest.h"

namespace kcr {
namespace api {
namespace {

ObjectPtr Parse(std::string_view json) {
  absl::StatusOr<ObjectPtr> obj = Object::Parse(json);
  EXPECT_TRUE(obj.ok()) << obj.status();
  return obj.ok() ? *obj : nullptr;
}

TEST(LeaseViewTest, ReadsLeaderElectionRecord) {
  auto lease = LeaseView::Create(Parse(
      R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease",)"
      R"("metadata":{"name":"kcr-leader","namespace":"kube-system","resourceVersion":"12"},)"
      R"("spec":{"holderIdentity":"pod-a_1234","leaseDurationSeconds":15,)"
      R"("acquireTime":"2026-11-22T10:00:00.000000Z",)"
      R"("renewTime":"2026-11-22T10:00:10.250000Z","leaseTransitions":3}})"));
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(lease->holder_identity(), "pod-a_1234");
  EXPECT_EQ(lease->lease_duration_seconds(), 15);
  EXPECT_EQ(lease->acquire_time(), absl::FromUnixSeconds(1795341600));
  EXPECT_EQ(lease->renew_time(),
            absl::FromUnixSeconds(1795341610) + absl::Milliseconds(250));
  EXPECT_EQ(lease->renew_time_text(), "2026-11-22T10:00:10.250000Z");
  EXPECT_EQ(lease->lease_transitions(), 3);
}

TEST(LeaseViewTest, EmptyAndBadSpec) {
  auto empty = LeaseView::Create(Parse(R"({"kind":"Lease","metadata":{}})"));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->holder_identity(), "");
  EXPECT_FALSE(empty->lease_duration_seconds().has_value());
  EXPECT_FALSE(empty->acquire_time().has_value());
  EXPECT_EQ(empty->lease_transitions(), 0);
  auto bad = LeaseView::Create(Parse(
      R"({"metadata":{},"spec":{"holderIdentity":1,"leaseDurationSeconds":"15",)"
      R"("renewTime":"not a time","leaseTransitions":1.5}})"));
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->holder_identity(), "");
  EXPECT_FALSE(bad->lease_duration_seconds().has_value());
  EXPECT_EQ(bad->renew_time_text(), "not a time");
  EXPECT_FALSE(bad->renew_time().has_value());
  EXPECT_EQ(bad->lease_transitions(), 0);
}

TEST(LeaseBuilderTest, AcquireAndRenew) {
  const absl::Time t0 = absl::FromUnixMicros(1795341600123456);
  LeaseBuilder b("kube-system", "kcr-leader");
  b.SetHolderIdentity("pod-a")
      .SetLeaseDurationSeconds(15)
      .SetAcquireTime(t0)
      .SetRenewTime(t0)
      .SetLeaseTransitions(0);
  absl::StatusOr<ObjectPtr> built = b.Build();
  ASSERT_TRUE(built.ok());
  EXPECT_EQ(
      (*built)->ToJson(),
      R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease",)"
      R"("metadata":{"name":"kcr-leader","namespace":"kube-system"},)"
      R"("spec":{"holderIdentity":"pod-a","leaseDurationSeconds":15,)"
      R"("acquireTime":"2026-11-22T10:00:00.123456Z",)"
      R"("renewTime":"2026-11-22T10:00:00.123456Z","leaseTransitions":0}})");
  LeaseBuilder renew(**built);
  renew.SetRenewTime(t0 + absl::Seconds(2));
  auto view = LeaseView::Create(*renew.Build());
  EXPECT_EQ(view->renew_time(), t0 + absl::Seconds(2));
  EXPECT_EQ(view->acquire_time(), t0);
}

}  // namespace
}  // namespace api
}  // namespace kcr
