#include "base/rw_mutex.h"

#include <thread>
#include <vector>

#include "base/mutex.h"
#include "gtest/gtest.h"

namespace kcr {
namespace {

TEST(RwMutexTest, WritersExcludeEachOther) {
  RwMutex mu;
  int counter = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        WriterMutexLock lock(&mu);
        ++counter;
      }
    });
  }
  for (auto& t : threads) t.join();
  ReaderMutexLock lock(&mu);
  EXPECT_EQ(counter, 40000);
}

// Each reader waits, holding the lock, until the other holds it too: this
// only finishes in time if readers share the lock. The first gives up after
// a generous bound (and then releases the lock, so the second gets in and
// the test ends with a failure instead of hanging).
TEST(RwMutexTest, ReadersHoldTheLockTogether) {
  RwMutex mu;
  Notification first_in, second_in;
  bool together = false;
  std::thread first([&] {
    ReaderMutexLock lock(&mu);
    first_in.Notify();
    together = second_in.WaitForNotificationWithTimeout(absl::Seconds(30));
  });
  std::thread second([&] {
    first_in.WaitForNotification();
    ReaderMutexLock lock(&mu);
    second_in.Notify();
  });
  first.join();
  second.join();
  EXPECT_TRUE(together) << "the second reader could not take the lock while "
                           "the first held it";
}

// Readers see every write made before they took the lock.
TEST(RwMutexTest, ReadersSeeCompletedWrites) {
  RwMutex mu;
  std::vector<int> values;
  std::thread writer([&] {
    for (int i = 0; i < 1000; ++i) {
      WriterMutexLock lock(&mu);
      values.push_back(i);
    }
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        ReaderMutexLock lock(&mu);
        for (size_t j = 0; j < values.size(); ++j) {
          ASSERT_EQ(values[j], static_cast<int>(j));
        }
      }
    });
  }
  writer.join();
  for (auto& t : readers) t.join();
  EXPECT_EQ(values.size(), 1000u);
}

}  // namespace
}  // namespace kcr
