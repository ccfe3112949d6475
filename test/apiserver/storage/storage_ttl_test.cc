// Storage's time to live (kube-apiserver's --event-ttl): objects of a
// collection with a TTL are deleted that long after their last write, as a
// DELETED event watchers see; other collections keep theirs. Time runs on
// a fake clock; the expiry thread is real. Runs under ThreadSanitizer.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "apiserver/storage/storage.h"
#include "gtest/gtest.h"
#include "test/fakes/fake_clock.h"
#include "test/util/eventually.h"

namespace kcr::apiserver {
namespace {

using ::kcr::testing::Eventually;
using ::kcr::testing::FakeClock;

constexpr char kEvents[] = "/events";
constexpr char kConfigMaps[] = "/configmaps";

void Put(Storage* storage, const std::string& collection,
         const std::string& name, const std::string& message = "") {
  absl::StatusOr<Storage::WriteResult> w = storage->Write(
      collection, "ns", name,
      [&](const api::ObjectPtr&) -> absl::StatusOr<Storage::Mutation> {
        api::ObjectBuilder b("v1", "Thing");
        b.SetName(name).SetNamespace("ns");
        (void)b.SetString("/message", message);
        return Storage::Mutation::Put(std::move(b));
      });
  ASSERT_TRUE(w.ok()) << w.status();
}

class StorageTtlTest : public ::testing::Test {
 protected:
  StorageTtlTest() {
    StorageOptions options;
    options.clock = &clock_;
    options.ttl[kEvents] = absl::Seconds(60);
    storage_ = std::make_unique<Storage>(options);
  }

  bool Exists(const std::string& collection, const std::string& name) {
    return storage_->Get(collection, "ns", name) != nullptr;
  }

  FakeClock clock_;
  std::unique_ptr<Storage> storage_;
};

TEST_F(StorageTtlTest, ObjectsGoTheirTtlAfterTheLastWriteOthersStay) {
  Put(storage_.get(), kEvents, "a");
  Put(storage_.get(), kEvents, "b");
  Put(storage_.get(), kConfigMaps, "a");
  auto watcher = storage_->Watch(kEvents, storage_->CurrentResourceVersion(),
                                 WatchFilter{});
  ASSERT_TRUE(watcher.ok()) << watcher.status();

  clock_.Advance(absl::Seconds(30));
  Put(storage_.get(), kEvents, "a", "again");  // a's TTL starts over
  clock_.Advance(absl::Seconds(31));           // b is 61 s old, a 31 s

  ASSERT_TRUE(Eventually([&] { return !Exists(kEvents, "b"); }));
  EXPECT_TRUE(Exists(kEvents, "a"));
  EXPECT_TRUE(Exists(kConfigMaps, "a"));

  // Watchers see a's update, then b's deletion.
  std::vector<WatchEvent> seen;
  ASSERT_TRUE(Eventually([&] {
    CacheWatcher::Batch batch = (*watcher)->Next(clock_.Now(), 10);
    seen.insert(seen.end(), batch.events.begin(), batch.events.end());
    return seen.size() >= 2;
  }));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].type, EventType::kModified);
  EXPECT_EQ(seen[0].object->name(), "a");
  EXPECT_EQ(seen[1].type, EventType::kDeleted);
  EXPECT_EQ(seen[1].object->name(), "b");

  clock_.Advance(absl::Seconds(30));  // a is 61 s past its update
  ASSERT_TRUE(Eventually([&] { return !Exists(kEvents, "a"); }));
  EXPECT_TRUE(Exists(kConfigMaps, "a"));
  EXPECT_EQ(storage_->PendingExpiries(), 0u);
}

TEST_F(StorageTtlTest, UpdatesKeepOneDeadlinePerObject) {
  for (int i = 0; i < 100; ++i) {
    Put(storage_.get(), kEvents, absl::StrCat("e", i % 10), absl::StrCat(i));
  }
  EXPECT_EQ(storage_->PendingExpiries(), 10u);
}

TEST_F(StorageTtlTest, ADeletedObjectLeavesTheQueue) {
  Put(storage_.get(), kEvents, "a");
  ASSERT_EQ(storage_->PendingExpiries(), 1u);
  absl::StatusOr<Storage::WriteResult> w = storage_->Write(
      kEvents, "ns", "a",
      [](const api::ObjectPtr&) -> absl::StatusOr<Storage::Mutation> {
        return Storage::Mutation::Remove();
      });
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(storage_->PendingExpiries(), 0u);
  // Recreated later, it lives a full TTL from then.
  clock_.Advance(absl::Seconds(50));
  Put(storage_.get(), kEvents, "a");
  clock_.Advance(absl::Seconds(50));
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_TRUE(Exists(kEvents, "a"));
}

TEST(StorageWithoutTtlTest, KeepsEverything) {
  FakeClock clock;
  StorageOptions options;
  options.clock = &clock;
  Storage storage(options);
  Put(&storage, kEvents, "a");
  clock.Advance(absl::Hours(24 * 365));
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_NE(storage.Get(kEvents, "ns", "a"), nullptr);
  EXPECT_EQ(storage.PendingExpiries(), 0u);
}

}  // namespace
}  // namespace kcr::apiserver
