#include "apiserver/kube_controllers/controller_runner.h"

#include <atomic>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/object_builder.h"
#include "apiserver/storage/storage.h"
#include "gtest/gtest.h"
#include "test/util/eventually.h"

namespace kcr::apiserver {
namespace {

using ::kcr::testing::Eventually;

class CountingController : public SyncedController {
 public:
  absl::Time Sync() override {
    ++syncs;
    return next.load() == 0 ? absl::InfiniteFuture()
                            : absl::Now() + absl::Milliseconds(next.load());
  }
  std::string Name() const override { return "counting"; }
  bool Wants(const StoredEvent& e) const override {
    return e.collection == "/configmaps";
  }
  std::atomic<int> syncs{0};
  std::atomic<int> next{0};  // ms until the next due pass; 0: never
};

absl::Status Put(Storage* storage, const std::string& collection,
                 const std::string& name) {
  return storage
      ->Write(collection, "default", name,
              [&](const api::ObjectPtr&) -> absl::StatusOr<Storage::Mutation> {
                api::ObjectBuilder b("v1", "Thing");
                b.SetName(name).SetNamespace("default");
                return Storage::Mutation::Put(std::move(b));
              })
      .status();
}

ControllerRunnerOptions Quick() {
  ControllerRunnerOptions o;
  o.min_interval = absl::Milliseconds(1);
  o.resync = absl::Hours(1);
  return o;
}

TEST(ControllerRunnerTest, SyncsOnWantedWritesOnly) {
  Storage storage;
  CountingController c;
  ControllerRunner runner(&storage, Clock::Real(), &c, Quick());
  runner.Start();
  ASSERT_TRUE(Eventually([&] { return c.syncs >= 1; }));  // the first pass
  const int before = c.syncs;
  ASSERT_TRUE(Put(&storage, "/secrets", "s").ok());
  ASSERT_TRUE(Put(&storage, "/configmaps", "cm").ok());
  ASSERT_TRUE(Eventually([&] { return c.syncs > before; }));
  runner.Stop();
  // The unwanted write alone never woke it: one pass for the configmap
  // (both writes may be seen together).
  EXPECT_EQ(c.syncs, before + 1);
}

TEST(ControllerRunnerTest, SyncsAgainWhenDue) {
  Storage storage;
  CountingController c;
  c.next = 10;
  ControllerRunner runner(&storage, Clock::Real(), &c, Quick());
  runner.Start();
  EXPECT_TRUE(Eventually([&] { return c.syncs >= 3; }));
  runner.Stop();
}

TEST(ControllerRunnerTest, LooksAtTheStoreOncePerIntervalUnderABurst) {
  Storage storage;
  CountingController c;
  ControllerRunnerOptions o = Quick();
  o.min_interval = absl::Milliseconds(50);
  ControllerRunner runner(&storage, Clock::Real(), &c, o);
  runner.Start();
  ASSERT_TRUE(Eventually([&] { return c.syncs >= 1; }));
  const int64_t before = runner.looks();
  const absl::Time start = absl::Now();
  // 100 unwanted writes, one a millisecond: each would have woken the
  // runner.
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(Put(&storage, "/secrets", "s" + std::to_string(i)).ok());
    absl::SleepFor(absl::Milliseconds(1));
  }
  const absl::Duration took = absl::Now() - start;
  const int64_t looks = runner.looks() - before;
  runner.Stop();
  EXPECT_LE(looks, took / o.min_interval + 2) << "took " << took;
  // None of them called for a pass.
  EXPECT_EQ(c.syncs, 1);
}

TEST(ControllerRunnerTest, WantedWriteAfterABurstIsSeen) {
  Storage storage;
  CountingController c;
  ControllerRunnerOptions o = Quick();
  o.min_interval = absl::Milliseconds(30);
  ControllerRunner runner(&storage, Clock::Real(), &c, o);
  runner.Start();
  ASSERT_TRUE(Eventually([&] { return c.syncs >= 1; }));
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(Put(&storage, "/secrets", "s" + std::to_string(i)).ok());
  }
  ASSERT_TRUE(Put(&storage, "/configmaps", "cm").ok());
  EXPECT_TRUE(Eventually([&] { return c.syncs >= 2; }));
  runner.Stop();
}

TEST(ControllerRunnerTest, StopIsIdempotentAndWorksWithoutStart) {
  Storage storage;
  CountingController c;
  {
    ControllerRunner never_started(&storage, Clock::Real(), &c, Quick());
    never_started.Stop();
  }
  ControllerRunner runner(&storage, Clock::Real(), &c, Quick());
  runner.Start();
  runner.Stop();
  runner.Stop();
  EXPECT_EQ(c.syncs, 1);
}

}  // namespace
}  // namespace kcr::apiserver
