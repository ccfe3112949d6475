#include "runtime/cache/real_fifo.h"

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/fakes/fake_cache_metrics.h"

namespace kcr::cache {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

api::ObjectPtr Obj(std::string_view name, std::string_view rv = "1",
                   std::string_view ns = "default") {
  std::string json =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":")";
  json.append(ns).append(R"(","name":")").append(name);
  json.append(R"(","resourceVersion":")").append(rv).append(R"("}})");
  return *api::Object::Parse(json);
}

// A plain map standing in for the informer's indexer.
class MapStore final : public Store {
 public:
  absl::Status Add(api::ObjectPtr object) override {
    MutexLock lock(&mu_);
    items_[object->Key()] = object;
    return absl::OkStatus();
  }
  absl::Status Update(api::ObjectPtr object) override {
    return Add(std::move(object));
  }
  absl::Status Delete(api::ObjectPtr object) override {
    MutexLock lock(&mu_);
    items_.erase(object->Key());
    return absl::OkStatus();
  }
  std::vector<api::ObjectPtr> List() const override {
    MutexLock lock(&mu_);
    std::vector<api::ObjectPtr> out;
    for (const auto& [k, v] : items_) out.push_back(v);
    return out;
  }
  std::vector<std::string> ListKeys() const override {
    MutexLock lock(&mu_);
    std::vector<std::string> out;
    for (const auto& [k, v] : items_) out.push_back(k);
    return out;
  }
  api::ObjectPtr GetByKey(std::string_view key) const override {
    MutexLock lock(&mu_);
    auto it = items_.find(std::string(key));
    return it == items_.end() ? nullptr : it->second;
  }
  absl::Status Replace(std::vector<api::ObjectPtr> objects,
                       std::string) override {
    MutexLock lock(&mu_);
    items_.clear();
    for (auto& o : objects) items_[o->Key()] = o;
    return absl::OkStatus();
  }
  absl::Status Resync() override { return absl::OkStatus(); }

 private:
  mutable Mutex mu_;
  std::map<std::string, api::ObjectPtr> items_ ABSL_GUARDED_BY(mu_);
};

// "Type name@rv", with "!" for final_state_unknown.
std::string Describe(const Delta& d) {
  std::string out(DeltaTypeName(d.type));
  out.append(d.final_state_unknown ? "!" : "").append(" ");
  out.append(d.object->name()).append("@").append(d.object->resource_version());
  return out;
}

struct Popped {
  std::vector<std::string> deltas;
  bool initial = false;
};

Popped PopOne(RealFifo& fifo, size_t max_batch = 1000) {
  Popped out;
  absl::Status s = fifo.Pop(Context::Background(), max_batch,
                            [&](absl::Span<const Delta> batch, bool initial) {
                              for (const Delta& d : batch) {
                                out.deltas.push_back(Describe(d));
                              }
                              out.initial = initial;
                              return absl::OkStatus();
                            });
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

TEST(RealFifoTest, QueuesEveryChangeInOrderWithoutCoalescing) {
  RealFifo fifo;
  ASSERT_TRUE(fifo.Add(Obj("a", "1")).ok());
  ASSERT_TRUE(fifo.Update(Obj("a", "2")).ok());
  ASSERT_TRUE(fifo.Delete(Obj("a", "3")).ok());
  ASSERT_TRUE(fifo.Add(Obj("b", "4")).ok());
  EXPECT_EQ(fifo.Len(), 4u);

  EXPECT_THAT(PopOne(fifo, 3).deltas,
              ElementsAre("Added a@1", "Updated a@2", "Deleted a@3"));
  EXPECT_THAT(PopOne(fifo, 3).deltas, ElementsAre("Added b@4"));
  EXPECT_EQ(fifo.Len(), 0u);
}

TEST(RealFifoTest, RejectsAnObjectWithoutAKey) {
  RealFifo fifo;
  EXPECT_EQ(fifo.Add(Obj("")).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(fifo.Len(), 0u);
}

TEST(RealFifoTest, ListAndGetShowTheNewestWaitingState) {
  RealFifo fifo;
  ASSERT_TRUE(fifo.Add(Obj("a", "1")).ok());
  ASSERT_TRUE(fifo.Update(Obj("a", "2")).ok());
  ASSERT_TRUE(fifo.Add(Obj("b", "3")).ok());
  ASSERT_TRUE(fifo.Delete(Obj("b", "4")).ok());
  EXPECT_EQ(fifo.GetByKey("default/a")->resource_version(), "2");
  EXPECT_EQ(fifo.GetByKey("default/b"), nullptr);
  EXPECT_THAT(fifo.ListKeys(), ElementsAre("default/a"));
}

TEST(RealFifoTest, ReplaceQueuesReplacedThenTombstonesForMissingKeys) {
  MapStore known;
  ASSERT_TRUE(known.Add(Obj("a", "1")).ok());
  ASSERT_TRUE(known.Add(Obj("b", "2")).ok());
  RealFifo fifo(RealFifoOptions{&known});
  // Only queued, not yet in the known objects: still known.
  ASSERT_TRUE(fifo.Add(Obj("c", "3")).ok());

  ASSERT_TRUE(fifo.Replace({Obj("a", "5")}, "9").ok());
  EXPECT_THAT(PopOne(fifo).deltas, ElementsAre("Added c@3", "Replaced a@5",
                                               "Deleted! c@3", "Deleted! b@2"));
}

TEST(RealFifoTest, ReplaceTombstoneCarriesTheNewestQueuedState) {
  MapStore known;
  ASSERT_TRUE(known.Add(Obj("a", "1")).ok());
  RealFifo fifo(RealFifoOptions{&known});
  ASSERT_TRUE(fifo.Update(Obj("a", "2")).ok());
  ASSERT_TRUE(fifo.Replace({}, "9").ok());
  EXPECT_THAT(PopOne(fifo).deltas, ElementsAre("Updated a@2", "Deleted! a@2"));
}

TEST(RealFifoTest, ReplaceSkipsKeysAlreadyDeletedInTheQueue) {
  MapStore known;
  ASSERT_TRUE(known.Add(Obj("a", "1")).ok());
  RealFifo fifo(RealFifoOptions{&known});
  ASSERT_TRUE(fifo.Delete(Obj("a", "2")).ok());
  ASSERT_TRUE(fifo.Replace({}, "9").ok());
  EXPECT_THAT(PopOne(fifo).deltas, ElementsAre("Deleted a@2"));
}

TEST(RealFifoTest, ReplaceWithoutKnownObjectsUsesTheQueueOnly) {
  RealFifo fifo;
  ASSERT_TRUE(fifo.Add(Obj("a", "1")).ok());
  ASSERT_TRUE(fifo.Replace({Obj("b", "2")}, "9").ok());
  EXPECT_THAT(PopOne(fifo).deltas,
              ElementsAre("Added a@1", "Replaced b@2", "Deleted! a@1"));
}

TEST(RealFifoTest, ReplaceSeesTheBatchBeingProcessed) {
  MapStore known;
  RealFifo fifo(RealFifoOptions{&known});
  ASSERT_TRUE(fifo.Add(Obj("x", "1")).ok());
  // The relist lands while the informer is still applying Added x: x is in
  // neither the indexer nor the waiting deltas, but must still be deleted.
  ASSERT_TRUE(fifo.Pop(Context::Background(), 10,
                       [&](absl::Span<const Delta>, bool) {
                         EXPECT_TRUE(fifo.Replace({}, "9").ok());
                         return known.Add(Obj("x", "1"));
                       })
                  .ok());
  EXPECT_THAT(PopOne(fifo).deltas, ElementsAre("Deleted! x@1"));
}

TEST(RealFifoTest, HasSyncedAfterTheFirstListIsPoppedAndProcessed) {
  RealFifo fifo;
  EXPECT_FALSE(fifo.HasSynced());
  // Queued before the list: part of the initial population, as client-go.
  ASSERT_TRUE(fifo.Add(Obj("early")).ok());
  ASSERT_TRUE(fifo.Replace({Obj("early"), Obj("a"), Obj("b")}, "1").ok());
  ASSERT_TRUE(fifo.Add(Obj("d")).ok());
  EXPECT_FALSE(fifo.HasSynced());

  Popped first = PopOne(fifo, 2);
  EXPECT_THAT(first.deltas, ElementsAre("Added early@1", "Replaced early@1"));
  EXPECT_TRUE(first.initial);
  EXPECT_FALSE(fifo.HasSynced());

  // The batch stops at the end of the initial list, and HasSynced waits for
  // the callback to return.
  bool synced_inside = true;
  ASSERT_TRUE(fifo.Pop(Context::Background(), 1000,
                       [&](absl::Span<const Delta> batch, bool initial) {
                         EXPECT_EQ(batch.size(), 2u);
                         EXPECT_TRUE(initial);
                         synced_inside = fifo.HasSynced();
                         return absl::OkStatus();
                       })
                  .ok());
  EXPECT_FALSE(synced_inside);
  EXPECT_TRUE(fifo.HasSynced());

  Popped after = PopOne(fifo);
  EXPECT_THAT(after.deltas, ElementsAre("Added d@1"));
  EXPECT_FALSE(after.initial);

  // A later Replace does not unsync.
  ASSERT_TRUE(fifo.Replace({Obj("z")}, "2").ok());
  EXPECT_TRUE(fifo.HasSynced());
  EXPECT_FALSE(PopOne(fifo).initial);
}

TEST(RealFifoTest, AnEmptyFirstListSyncsAtOnce) {
  RealFifo fifo;
  ASSERT_TRUE(fifo.Replace({}, "1").ok());
  EXPECT_TRUE(fifo.HasSynced());
}

TEST(RealFifoTest, AProcessingErrorIsNotRequeued) {
  RealFifo fifo;
  ASSERT_TRUE(fifo.Add(Obj("a")).ok());
  EXPECT_TRUE(fifo.Pop(Context::Background(), 10,
                       [](absl::Span<const Delta>, bool) {
                         return absl::InternalError("boom");
                       })
                  .ok());
  EXPECT_EQ(fifo.Len(), 0u);
}

TEST(RealFifoTest, ResyncQueuesSyncForKnownKeysWithNothingPending) {
  MapStore known;
  ASSERT_TRUE(known.Add(Obj("a", "1")).ok());
  ASSERT_TRUE(known.Add(Obj("b", "2")).ok());
  ASSERT_TRUE(known.Add(Obj("c", "3")).ok());
  RealFifo fifo(RealFifoOptions{&known});
  ASSERT_TRUE(fifo.Update(Obj("a", "4")).ok());
  ASSERT_TRUE(fifo.Add(Obj("b", "5")).ok());
  // Processing a and b; while it runs, a resync must skip both (the
  // indexer may still hold their older state) and sync only c.
  ASSERT_TRUE(fifo.Pop(Context::Background(), 1,
                       [&](absl::Span<const Delta>, bool) {
                         EXPECT_TRUE(fifo.Resync().ok());
                         return absl::OkStatus();
                       })
                  .ok());
  EXPECT_THAT(PopOne(fifo).deltas, ElementsAre("Added b@5", "Sync c@3"));
}

TEST(RealFifoTest, ResyncWithoutKnownObjectsQueuesNothing) {
  RealFifo fifo;
  ASSERT_TRUE(fifo.Resync().ok());
  EXPECT_EQ(fifo.Len(), 0u);
}

TEST(RealFifoTest, CloseDrainsThenEndsPop) {
  RealFifo fifo;
  ASSERT_TRUE(fifo.Add(Obj("a")).ok());
  fifo.Close();
  ASSERT_TRUE(fifo.Add(Obj("ignored")).ok());
  EXPECT_THAT(PopOne(fifo).deltas, ElementsAre("Added a@1"));
  EXPECT_EQ(fifo.Pop(Context::Background(), 1,
                     [](absl::Span<const Delta>, bool) {
                       ADD_FAILURE() << "nothing to process";
                       return absl::OkStatus();
                     })
                .code(),
            absl::StatusCode::kCancelled);
}

TEST(RealFifoTest, CloseWakesABlockedPop) {
  RealFifo fifo;
  absl::Status popped;
  std::thread popper([&] {
    popped = fifo.Pop(
        Context::Background(), 1,
        [](absl::Span<const Delta>, bool) { return absl::OkStatus(); });
  });
  fifo.Close();
  popper.join();
  EXPECT_EQ(popped.code(), absl::StatusCode::kCancelled);
}

TEST(RealFifoTest, HeldWakeupsStillQueueAtOnce) {
  RealFifo fifo;
  fifo.HoldWakeups();
  ASSERT_TRUE(fifo.Add(Obj("a")).ok());
  ASSERT_TRUE(fifo.Update(Obj("a", "2")).ok());
  // Visible to readers while held, and a Pop that finds them takes them.
  EXPECT_EQ(fifo.Len(), 2u);
  EXPECT_THAT(PopOne(fifo).deltas, ElementsAre("Added a@1", "Updated a@2"));
  fifo.ReleaseWakeups();
}

TEST(RealFifoTest, TheLastReleaseWakesAWaitingPop) {
  RealFifo fifo;
  Notification popped;
  Popped out;
  std::thread popper([&] {
    out = PopOne(fifo);
    popped.Notify();
  });
  // Nested holds: the popper may be waiting already, or not yet; either
  // way it gets the whole run once the holds are released.
  fifo.HoldWakeups();
  fifo.HoldWakeups();
  ASSERT_TRUE(fifo.Add(Obj("a")).ok());
  ASSERT_TRUE(fifo.Add(Obj("b")).ok());
  fifo.ReleaseWakeups();
  ASSERT_TRUE(fifo.Add(Obj("c")).ok());
  fifo.ReleaseWakeups();
  EXPECT_TRUE(popped.WaitForNotificationWithTimeout(absl::Seconds(60)));
  popper.join();
  EXPECT_FALSE(out.deltas.empty());
  EXPECT_EQ(out.deltas.front(), "Added a@1");
}

TEST(RealFifoTest, PopEndsWithItsContext) {
  RealFifo fifo;
  auto [ctx, cancel] = WithCancel(Context::Background());
  absl::Status popped;
  std::thread popper([&, ctx = ctx] {
    popped = fifo.Pop(
        ctx, 1, [](absl::Span<const Delta>, bool) { return absl::OkStatus(); });
  });
  cancel();
  popper.join();
  EXPECT_EQ(popped.code(), absl::StatusCode::kCancelled);
}

TEST(RealFifoTest, TransformAppliesToQueuedObjectsNotToTombstonesOrSync) {
  testing::FakeCacheMetrics metrics;
  MapStore known;
  ASSERT_TRUE(known.Add(Obj("k", "1")).ok());
  ASSERT_TRUE(known.Add(Obj("gone", "1")).ok());
  int calls = 0;
  RealFifoOptions options;
  options.known_objects = &known;
  options.name = "cms";
  options.metrics = &metrics;
  options.transform = [&](api::ObjectPtr o) -> absl::StatusOr<api::ObjectPtr> {
    ++calls;
    if (o->name() == "bad") return absl::InvalidArgumentError("bad object");
    return Obj(o->name(), std::string(o->resource_version()) + "t");
  };
  RealFifo fifo(options);

  ASSERT_TRUE(fifo.Add(Obj("a", "1")).ok());
  ASSERT_TRUE(fifo.Add(Obj("bad", "1")).ok());  // dropped, not an error
  ASSERT_TRUE(
      fifo.Replace({Obj("a", "2"), Obj("bad", "2"), Obj("k", "2")}, "2").ok());
  EXPECT_EQ(calls, 5);
  EXPECT_THAT(PopOne(fifo).deltas,
              ElementsAre("Added a@1t", "Replaced a@2t", "Replaced k@2t",
                          "Deleted! gone@1"));
  ASSERT_TRUE(fifo.Resync().ok());
  EXPECT_THAT(PopOne(fifo).deltas,
              UnorderedElementsAre("Sync k@1", "Sync gone@1"));
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(metrics.Value(testing::FakeCacheMetrics::kDropped, "cms",
                          kDropTransformError),
            2);
}

TEST(RealFifoTest, ConcurrentProducerAndConsumerSeeEveryDeltaInOrder) {
  MapStore known;
  RealFifo fifo(RealFifoOptions{&known});
  constexpr int kObjects = 2000;
  std::thread producer([&] {
    for (int i = 0; i < kObjects; ++i) {
      EXPECT_TRUE(fifo.Add(Obj(absl::StrCat("o", i), absl::StrCat(i))).ok());
      if (i % 500 == 0) {
        EXPECT_TRUE(fifo.Resync().ok());
      }
    }
    fifo.Close();
  });
  std::vector<int> seen;
  int syncs = 0;
  while (true) {
    absl::Status s = fifo.Pop(
        Context::Background(), 64, [&](absl::Span<const Delta> batch, bool) {
          for (const Delta& d : batch) {
            if (d.type == DeltaType::kSync) {
              ++syncs;
              continue;
            }
            EXPECT_TRUE(known.Add(d.object).ok());
            seen.push_back(
                std::stoi(std::string(d.object->resource_version())));
          }
          return absl::OkStatus();
        });
    if (!s.ok()) {
      EXPECT_EQ(s.code(), absl::StatusCode::kCancelled);
      break;
    }
  }
  producer.join();
  ASSERT_EQ(seen.size(), static_cast<size_t>(kObjects));
  for (int i = 0; i < kObjects; ++i) ASSERT_EQ(seen[i], i);
  EXPECT_THAT(fifo.ListKeys(), IsEmpty());
  // Four resyncs, each of at most every object.
  EXPECT_LE(syncs, 4 * kObjects);
}

}  // namespace
}  // namespace kcr::cache
