// ExpiryQueue: one deadline per object, moved by each Set, popped in order.
#include "apiserver/storage/expiry_queue.h"

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kcr::apiserver {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

const absl::Time kT0 = absl::FromUnixSeconds(1700000000);

TEST(ExpiryQueueTest, PopsWhatIsDueEarliestFirst) {
  ExpiryQueue q;
  q.Set("/events", "ns/b", kT0 + absl::Seconds(2));
  q.Set("/events", "ns/a", kT0 + absl::Seconds(1));
  q.Set("/events", "ns/c", kT0 + absl::Seconds(3));
  EXPECT_EQ(q.NextDeadline(), kT0 + absl::Seconds(1));
  EXPECT_THAT(q.PopDue(kT0), IsEmpty());
  EXPECT_THAT(q.PopDue(kT0 + absl::Seconds(2)),
              ElementsAre(Pair("/events", "ns/a"), Pair("/events", "ns/b")));
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.NextDeadline(), kT0 + absl::Seconds(3));
}

TEST(ExpiryQueueTest, SetAgainMovesTheDeadlineAndKeepsOneEntry) {
  ExpiryQueue q;
  for (int i = 1; i <= 1000; ++i) {
    q.Set("/events", "ns/a", kT0 + absl::Seconds(i));
  }
  EXPECT_EQ(q.size(), 1u);
  EXPECT_THAT(q.PopDue(kT0 + absl::Seconds(999)), IsEmpty());
  EXPECT_THAT(q.PopDue(kT0 + absl::Seconds(1000)),
              ElementsAre(Pair("/events", "ns/a")));
  EXPECT_EQ(q.size(), 0u);
  EXPECT_EQ(q.NextDeadline(), std::nullopt);
}

TEST(ExpiryQueueTest, EraseForgetsTheObject) {
  ExpiryQueue q;
  q.Set("/events", "ns/a", kT0);
  q.Set("events.k8s.io/events", "ns/a", kT0);
  q.Erase("/events", "ns/a");
  q.Erase("/events", "ns/absent");
  EXPECT_THAT(q.PopDue(kT0), ElementsAre(Pair("events.k8s.io/events", "ns/a")));
}

}  // namespace
}  // namespace kcr::apiserver
