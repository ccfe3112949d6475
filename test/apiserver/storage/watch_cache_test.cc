// Watches through Storage and WatchCache, without HTTP: who is woken by a
// write, slow watchers, ordering under concurrent writers, history replay
// and expiry, and time on a fake clock. Runs under ThreadSanitizer:
//   bazel test --config=tsan //test/apiserver/storage:watch_cache_test
#include "apiserver/storage/watch_cache.h"

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/errors/errors.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "apiserver/storage/storage.h"
#include "base/mutex.h"
#include "gtest/gtest.h"
#include "test/fakes/fake_clock.h"
#include "test/util/eventually.h"

namespace kcr::apiserver {
namespace {

using ::kcr::testing::Eventually;

constexpr char kConfigMaps[] = "/configmaps";
constexpr char kSecrets[] = "/secrets";

// Creates or replaces an object; returns its resourceVersion.
int64_t Put(Storage* storage, const std::string& collection,
            const std::string& ns, const std::string& name,
            const std::map<std::string, std::string>& labels = {}) {
  absl::StatusOr<Storage::WriteResult> w = storage->Write(
      collection, ns, name,
      [&](const api::ObjectPtr&) -> absl::StatusOr<Storage::Mutation> {
        api::ObjectBuilder b("v1", "Thing");
        b.SetName(name).SetNamespace(ns);
        if (!labels.empty()) b.SetLabels(labels);
        return Storage::Mutation::Put(std::move(b));
      });
  EXPECT_TRUE(w.ok()) << w.status();
  return w.ok() ? std::stoll(std::string(w->object->resource_version())) : 0;
}

int64_t Remove(Storage* storage, const std::string& collection,
               const std::string& ns, const std::string& name) {
  absl::StatusOr<Storage::WriteResult> w = storage->Write(
      collection, ns, name,
      [](const api::ObjectPtr&) -> absl::StatusOr<Storage::Mutation> {
        return Storage::Mutation::Remove();
      });
  EXPECT_TRUE(w.ok()) << w.status();
  return w.ok() ? std::stoll(std::string(w->object->resource_version())) : 0;
}

WatchFilter InNamespace(const std::string& ns) {
  WatchFilter f;
  f.ns = ns;
  return f;
}

WatchFilter WithLabel(const std::string& key, const std::string& value) {
  WatchFilter f;
  f.selects = [key, value](const api::Object& o) {
    std::optional<std::string_view> v = o.Label(key);
    return v.has_value() && *v == value;
  };
  return f;
}

std::unique_ptr<CacheWatcher> MustWatch(Storage* storage,
                                        const std::string& collection,
                                        int64_t after,
                                        WatchFilter filter = {}) {
  auto w = storage->Watch(collection, after, std::move(filter));
  EXPECT_TRUE(w.ok()) << w.status();
  return w.ok() ? std::move(*w) : nullptr;
}

// Reads from `w` on the real clock until `n` events arrived or 20 s passed.
std::vector<WatchEvent> Collect(CacheWatcher* w, size_t n) {
  std::vector<WatchEvent> out;
  const absl::Time give_up = absl::Now() + absl::Seconds(20);
  while (out.size() < n && absl::Now() < give_up) {
    CacheWatcher::Batch b =
        w->Next(absl::Now() + absl::Milliseconds(100), n - out.size());
    EXPECT_FALSE(b.terminated);
    if (b.terminated) break;
    for (WatchEvent& e : b.events) out.push_back(std::move(e));
  }
  return out;
}

StorageOptions OnClock(const Clock* clock) {
  StorageOptions o;
  o.clock = clock;
  return o;
}

TEST(WatchCacheTest, WriteToOneCollectionWakesNoWatcherOfAnother) {
  testing::FakeClock clock;
  Storage storage(OnClock(&clock));
  const int64_t from = storage.CurrentResourceVersion();
  std::unique_ptr<CacheWatcher> cms = MustWatch(&storage, kConfigMaps, from);
  std::unique_ptr<CacheWatcher> secrets = MustWatch(&storage, kSecrets, from);
  std::unique_ptr<CacheWatcher> other_ns =
      MustWatch(&storage, kConfigMaps, from, InNamespace("other"));
  std::unique_ptr<CacheWatcher> labelled =
      MustWatch(&storage, kConfigMaps, from, WithLabel("app", "x"));

  // Each idle watcher waits in Next, as a connection thread does.
  std::vector<std::thread> idle;
  std::vector<CacheWatcher::Batch> idle_batches(3);
  std::vector<CacheWatcher*> idle_watchers = {secrets.get(), other_ns.get(),
                                              labelled.get()};
  for (size_t i = 0; i < idle_watchers.size(); ++i) {
    idle.emplace_back([&, i] {
      idle_batches[i] = idle_watchers[i]->Next(absl::InfiniteFuture(), 100);
    });
  }
  clock.BlockUntilWaiters(3);

  for (int i = 0; i < 100; ++i) {
    Put(&storage, kConfigMaps, "default", absl::StrCat("cm-", i));
  }
  std::vector<WatchEvent> got = Collect(cms.get(), 100);
  ASSERT_EQ(got.size(), 100u);
  EXPECT_EQ(got.front().type, EventType::kAdded);
  EXPECT_GE(cms->events_queued(), 100);

  for (CacheWatcher* w : idle_watchers) {
    EXPECT_EQ(w->events_queued(), 0);
    EXPECT_EQ(w->wakeups(), 0);
  }

  // A write each of them wants wakes each of them, once.
  Put(&storage, kSecrets, "default", "s");
  Put(&storage, kConfigMaps, "other", "cm");
  Put(&storage, kConfigMaps, "default", "x", {{"app", "x"}});
  for (std::thread& t : idle) t.join();
  for (size_t i = 0; i < idle_watchers.size(); ++i) {
    ASSERT_EQ(idle_batches[i].events.size(), 1u) << i;
    EXPECT_EQ(idle_watchers[i]->events_queued(), 1) << i;
    EXPECT_EQ(idle_watchers[i]->wakeups(), 1) << i;
  }
  EXPECT_EQ(idle_batches[0].events[0].object->name(), "s");
  EXPECT_EQ(idle_batches[1].events[0].object->namespace_(), "other");
  EXPECT_EQ(idle_batches[2].events[0].object->name(), "x");
}

TEST(WatchCacheTest, SlowWatcherNeitherBlocksWritesNorOtherWatchers) {
  StorageOptions options;
  options.watch_queue_size = 10;
  Storage storage(options);
  const int64_t from = storage.CurrentResourceVersion();
  std::unique_ptr<CacheWatcher> slow = MustWatch(&storage, kConfigMaps, from);
  std::unique_ptr<CacheWatcher> fast = MustWatch(&storage, kConfigMaps, from);

  // The fast one keeps within its queue: the writer lets it get at most 5
  // events behind. The slow one never reads.
  std::vector<WatchEvent> got;
  std::atomic<int> received{0};
  std::thread reader([&] {
    const absl::Time give_up = absl::Now() + absl::Seconds(20);
    while (got.size() < 100 && absl::Now() < give_up) {
      CacheWatcher::Batch b =
          fast->Next(absl::Now() + absl::Milliseconds(100), 100);
      if (b.terminated) {
        ADD_FAILURE() << "the fast watcher was terminated";
        break;
      }
      for (WatchEvent& e : b.events) got.push_back(std::move(e));
      received = static_cast<int>(got.size());
    }
    received = 1000;  // never leave the writer waiting
  });
  for (int i = 0; i < 100; ++i) {
    while (received < i - 5) std::this_thread::yield();
    Put(&storage, kConfigMaps, "default", absl::StrCat("cm-", i));
  }
  reader.join();
  ASSERT_EQ(got.size(), 100u);
  for (size_t i = 1; i < got.size(); ++i) {
    EXPECT_LT(got[i - 1].resource_version, got[i].resource_version);
  }

  // The slow one was cut off once its queue was full; its events are gone
  // and it says so at once. The history still reaches where it stopped, so
  // its client may resume: no error.
  ASSERT_TRUE(Eventually([&] { return slow->terminated(); }));
  CacheWatcher::Batch b = slow->Next(absl::InfiniteFuture(), 1000);
  EXPECT_TRUE(b.terminated);
  EXPECT_TRUE(b.events.empty());
  EXPECT_TRUE(b.error.ok()) << b.error;
  EXPECT_EQ(b.resource_version, from);
  EXPECT_EQ(slow->events_queued(), 10);
  // Resuming from there replays what it missed.
  std::unique_ptr<CacheWatcher> resumed =
      MustWatch(&storage, kConfigMaps, b.resource_version);
  EXPECT_EQ(Collect(resumed.get(), 100).size(), 100u);
}

TEST(WatchCacheTest, SlowWatcherBeyondTheHistoryGetsExpired) {
  StorageOptions options;
  options.watch_queue_size = 10;
  options.history_size = 20;
  Storage storage(options);
  const int64_t from = storage.CurrentResourceVersion();
  std::unique_ptr<CacheWatcher> slow = MustWatch(&storage, kConfigMaps, from);
  for (int i = 0; i < 50; ++i) {
    Put(&storage, kConfigMaps, "default", absl::StrCat("cm-", i));
  }
  ASSERT_TRUE(Eventually([&] { return slow->terminated(); }));
  CacheWatcher::Batch b = slow->Next(absl::InfiniteFuture(), 1000);
  EXPECT_TRUE(b.terminated);
  api::StatusError e = api::StatusError::FromStatus(b.error);
  EXPECT_EQ(e.code, 410) << b.error;
  EXPECT_EQ(e.reason, "Expired");
  EXPECT_NE(e.message.find("too old resource version"), std::string::npos)
      << e.message;
}

TEST(WatchCacheTest, OrderUnderConcurrentWriters) {
  Storage storage;
  const int64_t from = storage.CurrentResourceVersion();
  constexpr int kWriters = 4;
  constexpr int kWrites = 200;
  std::unique_ptr<CacheWatcher> all = MustWatch(&storage, kConfigMaps, from);
  std::unique_ptr<CacheWatcher> ns1 =
      MustWatch(&storage, kConfigMaps, from, InNamespace("ns-1"));
  std::unique_ptr<CacheWatcher> even =
      MustWatch(&storage, kConfigMaps, from, WithLabel("parity", "even"));
  std::unique_ptr<CacheWatcher> secrets = MustWatch(&storage, kSecrets, from);

  std::vector<WatchEvent> got_all, got_ns1, got_even, got_secrets;
  std::vector<std::thread> threads;
  threads.emplace_back(
      [&] { got_all = Collect(all.get(), kWriters * kWrites); });
  threads.emplace_back([&] { got_ns1 = Collect(ns1.get(), kWrites); });
  threads.emplace_back(
      [&] { got_even = Collect(even.get(), kWriters * kWrites / 2); });
  threads.emplace_back([&] { got_secrets = Collect(secrets.get(), kWrites); });
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      const std::string ns = absl::StrCat("ns-", w);
      for (int i = 0; i < kWrites; ++i) {
        Put(&storage, kConfigMaps, ns, absl::StrCat("cm-", i),
            {{"parity", i % 2 == 0 ? "even" : "odd"}});
        // Another collection written meanwhile.
        if (w == 0) Put(&storage, kSecrets, "default", absl::StrCat("s-", i));
      }
    });
  }
  for (std::thread& t : threads) t.join();

  ASSERT_EQ(got_all.size(), static_cast<size_t>(kWriters * kWrites));
  ASSERT_EQ(got_ns1.size(), static_cast<size_t>(kWrites));
  ASSERT_EQ(got_even.size(), static_cast<size_t>(kWriters * kWrites / 2));
  ASSERT_EQ(got_secrets.size(), static_cast<size_t>(kWrites));
  for (const auto* got : {&got_all, &got_ns1, &got_even, &got_secrets}) {
    for (size_t i = 1; i < got->size(); ++i) {
      ASSERT_LT((*got)[i - 1].resource_version, (*got)[i].resource_version);
    }
  }
  for (const WatchEvent& e : got_ns1) EXPECT_EQ(e.object->namespace_(), "ns-1");
  for (const WatchEvent& e : got_even) {
    EXPECT_EQ(e.object->Label("parity"), "even");
  }
  // The same order as the history, which a watch from the start replays.
  std::unique_ptr<CacheWatcher> replay = MustWatch(&storage, kConfigMaps, from);
  std::vector<WatchEvent> replayed = Collect(replay.get(), got_all.size());
  ASSERT_EQ(replayed.size(), got_all.size());
  for (size_t i = 0; i < got_all.size(); ++i) {
    EXPECT_EQ(replayed[i].resource_version, got_all[i].resource_version);
    EXPECT_EQ(replayed[i].object, got_all[i].object);
  }
}

TEST(WatchCacheTest, ReplaysTheHistoryAndExpiresWhatLeftIt) {
  StorageOptions options;
  options.history_size = 5;
  Storage storage(options);
  const int64_t first = Put(&storage, kConfigMaps, "default", "a");
  // Other collections share the history but not a collection's window.
  const int64_t quiet = Put(&storage, kSecrets, "default", "s");
  for (int i = 0; i < 3; ++i) {
    Put(&storage, kConfigMaps, "default", absl::StrCat("b-", i));
  }
  std::unique_ptr<CacheWatcher> w = MustWatch(&storage, kConfigMaps, first);
  std::vector<WatchEvent> got = Collect(w.get(), 3);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].object->name(), "b-0");

  for (int i = 0; i < 5; ++i) Put(&storage, kConfigMaps, "default", "c");
  absl::StatusOr<std::unique_ptr<CacheWatcher>> old =
      storage.Watch(kConfigMaps, first, {});
  ASSERT_FALSE(old.ok());
  api::StatusError e = api::StatusError::FromStatus(old.status());
  EXPECT_EQ(e.code, 410);
  EXPECT_NE(
      e.message.find(absl::StrCat("too old resource version: ", first, " (")),
      std::string::npos)
      << e.message;
  // Nothing of /secrets after `quiet` ever left the history.
  EXPECT_TRUE(storage.Watch(kSecrets, quiet, {}).ok());

  // Compaction: before now is gone, now is fine.
  storage.Compact();
  const int64_t now = storage.CurrentResourceVersion();
  EXPECT_FALSE(storage.Watch(kSecrets, quiet, {}).ok());
  EXPECT_FALSE(storage.Watch("/never-written", now - 1, {}).ok());
  ASSERT_TRUE(storage.Watch("/never-written", now, {}).ok());
  std::unique_ptr<CacheWatcher> live = MustWatch(&storage, kConfigMaps, now);
  Put(&storage, kConfigMaps, "default", "d");
  got = Collect(live.get(), 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].object->name(), "d");
}

TEST(WatchCacheTest, SelectorTransitionsComeAsAddedAndDeleted) {
  Storage storage;
  const int64_t from = storage.CurrentResourceVersion();
  std::unique_ptr<CacheWatcher> w =
      MustWatch(&storage, kConfigMaps, from, WithLabel("app", "x"));
  Put(&storage, kConfigMaps, "default", "a", {{"app", "y"}});
  const int64_t in = Put(&storage, kConfigMaps, "default", "a", {{"app", "x"}});
  Put(&storage, kConfigMaps, "default", "a", {{"app", "x"}, {"v", "2"}});
  const int64_t out =
      Put(&storage, kConfigMaps, "default", "a", {{"app", "y"}});
  Put(&storage, kConfigMaps, "default", "a", {{"app", "x"}});
  const int64_t gone = Remove(&storage, kConfigMaps, "default", "a");
  std::vector<WatchEvent> got = Collect(w.get(), 5);
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0].type, EventType::kAdded);
  EXPECT_EQ(got[0].resource_version, in);
  EXPECT_EQ(got[1].type, EventType::kModified);
  EXPECT_EQ(got[2].type, EventType::kDeleted);
  EXPECT_EQ(got[2].resource_version, out);
  // Its state before, at the resourceVersion of the write that moved it out.
  EXPECT_EQ(got[2].object->Label("v"), "2");
  EXPECT_EQ(got[2].object->resource_version(), std::to_string(out));
  EXPECT_EQ(got[3].type, EventType::kAdded);
  EXPECT_EQ(got[4].type, EventType::kDeleted);
  EXPECT_EQ(got[4].resource_version, gone);
}

TEST(WatchCacheTest, TimeoutsAndProgressFollowTheClock) {
  testing::FakeClock clock;
  Storage storage(OnClock(&clock));
  const int64_t from = Put(&storage, kConfigMaps, "default", "a");
  std::unique_ptr<CacheWatcher> w = MustWatch(&storage, kConfigMaps, from);
  CacheWatcher::Batch b;
  std::thread t([&] { b = w->Next(clock.Now() + absl::Seconds(30), 100); });
  clock.BlockUntilWaiters(1);
  // Writes elsewhere move the resourceVersion a bookmark may carry, without
  // waking the watcher.
  const int64_t elsewhere = Put(&storage, kSecrets, "default", "s");
  clock.Advance(absl::Seconds(29));
  clock.BlockUntilWaiters(1);
  clock.Advance(absl::Seconds(1));
  t.join();
  EXPECT_TRUE(b.events.empty());
  EXPECT_FALSE(b.terminated);
  EXPECT_EQ(b.resource_version, elsewhere);
  EXPECT_EQ(w->wakeups(), 0);

  // A deadline already passed returns at once.
  b = w->Next(clock.Now(), 100);
  EXPECT_TRUE(b.events.empty());
  EXPECT_EQ(b.resource_version, elsewhere);
  // An event ends the wait long before the deadline.
  const int64_t next = Put(&storage, kConfigMaps, "default", "b");
  b = w->Next(clock.Now() + absl::Hours(1), 100);
  ASSERT_EQ(b.events.size(), 1u);
  EXPECT_EQ(b.resource_version, next);
  // Woken once, unless the event was queued before the wait began.
  EXPECT_LE(w->wakeups(), 1);
}

TEST(WatchCacheTest, InterruptEndsAWait) {
  Storage storage;
  std::unique_ptr<CacheWatcher> w =
      MustWatch(&storage, kConfigMaps, storage.CurrentResourceVersion());
  std::atomic<bool> returned{false};
  std::thread t([&] {
    w->Next(absl::InfiniteFuture(), 100);
    returned = true;
  });
  storage.Interrupt();
  t.join();
  EXPECT_TRUE(returned);
  // Sticky until the next Next: an interrupt before the wait is not lost.
  storage.Interrupt();
  CacheWatcher::Batch b = w->Next(absl::InfiniteFuture(), 100);
  EXPECT_TRUE(b.events.empty());
}

TEST(WatchCacheTest, WatchersComeAndGoWhileWritesRun) {
  Storage storage;
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int i = 0; !stop; ++i) {
      Put(&storage, kConfigMaps, absl::StrCat("ns-", i % 3), "cm");
    }
  });
  for (int round = 0; round < 50; ++round) {
    const int64_t from = storage.CurrentResourceVersion();
    std::unique_ptr<CacheWatcher> w =
        MustWatch(&storage, kConfigMaps, from,
                  InNamespace(absl::StrCat("ns-", round % 3)));
    std::vector<WatchEvent> got = Collect(w.get(), 3);
    EXPECT_EQ(got.size(), 3u);
    if (got.size() != 3u) break;
    EXPECT_GT(got[0].resource_version, from);
  }
  stop = true;
  writer.join();
}

// Watchers that register from one resourceVersion while writes run (as
// HTTP watches do when their requests race the writes) each get every
// event after it, once, in order.
TEST(WatchCacheTest, RegisteringWhileWritesRunMissesNothing) {
  Storage storage;
  const int64_t from = storage.CurrentResourceVersion();
  constexpr int kWatchers = 50;
  constexpr int kWrites = 500;
  std::thread writer([&] {
    for (int i = 0; i < kWrites; ++i) {
      Put(&storage, kConfigMaps, "default", absl::StrCat("cm-", i % 7));
    }
  });
  std::vector<std::vector<WatchEvent>> got(kWatchers);
  std::vector<std::thread> watchers;
  for (int i = 0; i < kWatchers; ++i) {
    watchers.emplace_back([&, i] {
      WatchFilter filter;
      if (i % 2 == 1) filter = InNamespace("default");
      std::unique_ptr<CacheWatcher> w =
          MustWatch(&storage, kConfigMaps, from, std::move(filter));
      got[i] = Collect(w.get(), kWrites);
    });
  }
  writer.join();
  for (std::thread& t : watchers) t.join();
  for (int i = 0; i < kWatchers; ++i) {
    ASSERT_EQ(got[i].size(), static_cast<size_t>(kWrites)) << i;
    for (int j = 0; j < kWrites; ++j) {
      ASSERT_EQ(got[i][j].resource_version, from + 1 + j) << i;
    }
  }
}

}  // namespace
}  // namespace kcr::apiserver
