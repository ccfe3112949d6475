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
