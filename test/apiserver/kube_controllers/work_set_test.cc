#include "apiserver/kube_controllers/work_set.h"

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace kcr::apiserver {
namespace {

std::vector<std::string> Drain(WorkSet* w, absl::Time now) {
  std::vector<std::string> out;
  std::string key;
  while (w->Next(now, &key)) out.push_back(key);
  return out;
}

const absl::Time kT0 = absl::FromUnixSeconds(1000);

TEST(WorkSetTest, KeysComeOutOnceInTheOrderAdded) {
  WorkSet w;
  w.Add("b");
  w.Add("a");
  w.Add("b");
  EXPECT_EQ(w.ready(), 2u);
  EXPECT_EQ(Drain(&w, kT0), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(w.NextDue(), absl::InfiniteFuture());
  // Handed out, a key can be added again.
  w.Add("b");
  EXPECT_EQ(Drain(&w, kT0), (std::vector<std::string>{"b"}));
}

TEST(WorkSetTest, LaterKeysComeDueAtTheEarliestTimeAskedFor) {
  WorkSet w;
  w.AddAt("x", kT0 + absl::Seconds(10));
  w.AddAt("x", kT0 + absl::Seconds(5));
  w.AddAt("x", kT0 + absl::Seconds(20));
  w.AddAt("y", kT0 + absl::Seconds(7));
  EXPECT_EQ(w.NextDue(), kT0 + absl::Seconds(5));
  EXPECT_TRUE(Drain(&w, kT0 + absl::Seconds(4)).empty());
  EXPECT_EQ(Drain(&w, kT0 + absl::Seconds(5)), (std::vector<std::string>{"x"}));
  EXPECT_EQ(w.NextDue(), kT0 + absl::Seconds(7));
  EXPECT_EQ(Drain(&w, kT0 + absl::Seconds(30)),
            (std::vector<std::string>{"y"}));
  EXPECT_EQ(w.waiting(), 0u);
}

TEST(WorkSetTest, AReadyKeyIgnoresLaterTimes) {
  WorkSet w;
  w.Add("k");
  w.AddAt("k", kT0 + absl::Seconds(1));
  EXPECT_EQ(w.waiting(), 0u);
  EXPECT_EQ(w.NextDue(), absl::InfinitePast());
  EXPECT_EQ(Drain(&w, kT0), (std::vector<std::string>{"k"}));
  EXPECT_TRUE(Drain(&w, kT0 + absl::Seconds(2)).empty());
}

TEST(WorkSetTest, ADueKeyAddedNowKeepsOnePlace) {
  WorkSet w;
  w.AddAt("k", kT0);
  w.Add("j");
  EXPECT_EQ(Drain(&w, kT0), (std::vector<std::string>{"j", "k"}));
}

}  // namespace
}  // namespace kcr::apiserver
