#include "runtime/sharding/assignment.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace kcr::sharding {
namespace {

constexpr absl::Duration kGrace = absl::Seconds(6);

std::vector<std::string> Members(int n, int from = 0) {
  std::vector<std::string> m;
  for (int i = from; i < from + n; ++i)
    m.push_back(absl::StrCat("replica-", i));
  std::sort(m.begin(), m.end());
  return m;
}

TEST(FairShareTest, SharesSumToShardsAndDifferByAtMostOne) {
  for (int shards : {1, 3, 7, 32, 1024}) {
    for (int n = 1; n <= 12; ++n) {
      std::vector<std::string> members = Members(n);
      int sum = 0, lo = shards, hi = 0;
      for (const std::string& m : members) {
        const int share = FairShare(shards, members, m);
        sum += share;
        lo = std::min(lo, share);
        hi = std::max(hi, share);
      }
      EXPECT_EQ(sum, shards) << shards << " shards, " << n << " members";
      EXPECT_LE(hi - lo, 1);
    }
  }
  EXPECT_EQ(FairShare(32, Members(2), "stranger"), 0);
}

TEST(PreferredOwnersTest, GivesEachMemberItsFairShare) {
  for (int n = 1; n <= 10; ++n) {
    std::vector<std::string> members = Members(n);
    std::vector<int> owner = PreferredOwners(32, members);
    std::vector<int> count(n, 0);
    for (int o : owner) {
      ASSERT_GE(o, 0);
      ++count[o];
    }
    for (int m = 0; m < n; ++m) {
      EXPECT_EQ(count[m], FairShare(32, members, members[m]));
    }
  }
  EXPECT_EQ(PreferredOwners(4, {}), std::vector<int>(4, -1));
}

TEST(PreferredOwnersTest, AnotherMemberMovesFewPreferences) {
  std::vector<std::string> before = Members(10);
  std::vector<std::string> after = Members(11);
  std::vector<int> a = PreferredOwners(1024, before);
  std::vector<int> b = PreferredOwners(1024, after);
  int moved = 0;
  for (int s = 0; s < 1024; ++s) moved += before[a[s]] != after[b[s]];
  // 1024 / 11 = 93 must move to the new member; rendezvous keeps the rest
  // mostly in place.
  EXPECT_GE(moved, 93);
  EXPECT_LT(moved, 2 * 93);
}

std::vector<ShardState> States(int shards, const std::set<int>& mine,
                               const std::set<int>& taken,
                               absl::Duration free_for) {
  std::vector<ShardState> st(shards);
  for (int s = 0; s < shards; ++s) {
    st[s].mine = mine.count(s) > 0;
    st[s].taken = taken.count(s) > 0;
    st[s].free_for = free_for;
  }
  return st;
}

TEST(AssignerTest, AloneTakesEveryFreeShard) {
  Assigner a(8, "a", kGrace);
  Decision d = a.Decide({}, States(8, {}, {}, absl::ZeroDuration()));
  EXPECT_EQ(d.target, 8);
  EXPECT_EQ(d.acquire.size(), 8u);
  EXPECT_TRUE(d.release.empty());
}

TEST(AssignerTest, AboveTargetGivesBackWhatOthersPrefer) {
  Assigner a(8, "a", kGrace);
  Decision d =
      a.Decide({"a", "b"}, States(8, {0, 1, 2, 3, 4, 5, 6, 7}, {}, {}));
  EXPECT_EQ(d.target, 4);
  ASSERT_EQ(d.release.size(), 4u);
  for (int s : d.release) EXPECT_EQ(a.PreferredOwner(s), "b") << s;
  EXPECT_TRUE(d.acquire.empty());
}

TEST(AssignerTest, BelowTargetTakesItsOwnAtOnceAndOthersAfterGrace) {
  Assigner b(8, "b", kGrace);
  // "a" holds nothing; every shard is free, just now.
  Decision d = b.Decide({"a", "b"}, States(8, {}, {}, absl::ZeroDuration()));
  EXPECT_EQ(d.target, 4);
  ASSERT_EQ(d.acquire.size(), 4u);
  for (int s : d.acquire) EXPECT_EQ(b.PreferredOwner(s), "b");

  // b's preferred shards are all taken; the others are free but fresh.
  std::set<int> b_pref;
  for (int s = 0; s < 8; ++s) {
    if (b.PreferredOwner(s) == "b") b_pref.insert(s);
  }
  d = b.Decide({"a", "b"}, States(8, {}, b_pref, absl::ZeroDuration()));
  EXPECT_TRUE(d.acquire.empty());
  d = b.Decide({"a", "b"}, States(8, {}, b_pref, kGrace));
  EXPECT_EQ(d.acquire.size(), 4u);
  for (int s : d.acquire) EXPECT_EQ(b_pref.count(s), 0u);
}

TEST(AssignerTest, TakesAtOnceWhatAFullPreferredOwnerWillNotTake) {
  Assigner a(4, "a", kGrace);
  a.Decide({"a", "b"}, States(4, {}, {}, {}));
  std::vector<int> b_pref;
  for (int s = 0; s < 4; ++s) {
    if (a.PreferredOwner(s) == "b") b_pref.push_back(s);
  }
  ASSERT_EQ(b_pref.size(), 2u);
  std::vector<int> a_pref;
  for (int s = 0; s < 4; ++s) {
    if (a.PreferredOwner(s) == "a") a_pref.push_back(s);
  }
  // b holds a's two preferred shards (its share); b's own two are free,
  // just now: b will not take them, so a does at once.
  std::vector<ShardState> st = States(4, {}, {}, absl::ZeroDuration());
  for (int s : a_pref) {
    st[s].taken = true;
    st[s].holder = "b";
  }
  Decision d = a.Decide({"a", "b"}, st);
  std::sort(d.acquire.begin(), d.acquire.end());
  EXPECT_EQ(d.acquire, b_pref);
  // Held by someone that is no member: b is not full, so a waits.
  for (int s : a_pref) st[s].holder = "ghost";
  d = a.Decide({"a", "b"}, st);
  EXPECT_TRUE(d.acquire.empty());
}

TEST(AssignerTest, TakesAtOnceWhatAPreferredOwnerBelowItsShareWillLeave) {
  Assigner a(8, "a", kGrace);
  a.Decide({"a", "b"}, States(8, {}, {}, {}));
  std::vector<int> a_pref, b_pref;
  for (int s = 0; s < 8; ++s) {
    (a.PreferredOwner(s) == "a" ? a_pref : b_pref).push_back(s);
  }
  ASSERT_EQ(a_pref.size(), 4u);
  ASSERT_EQ(b_pref.size(), 4u);
  // b holds three of a's preferred shards and lacks one: it will take the
  // best of its four free ones for it, and leave three.
  std::vector<ShardState> st = States(8, {}, {}, absl::ZeroDuration());
  for (int i = 0; i < 3; ++i) {
    st[a_pref[i]].taken = true;
    st[a_pref[i]].holder = "b";
  }
  const uint64_t b_hash = MemberHash("b");
  const int b_best =
      *std::max_element(b_pref.begin(), b_pref.end(), [&](int x, int y) {
        return RendezvousScore(x, b_hash) < RendezvousScore(y, b_hash);
      });
  std::vector<int> want = {a_pref[3]};
  for (int s : b_pref) {
    if (s != b_best) want.push_back(s);
  }
  std::sort(want.begin(), want.end());
  Decision d = a.Decide({"a", "b"}, st);
  std::sort(d.acquire.begin(), d.acquire.end());
  EXPECT_EQ(d.acquire, want);
}

TEST(AssignerTest, AtTargetDoesNothing) {
  Assigner a(4, "a", kGrace);
  // a holds two shards b would prefer: still nothing moves.
  Decision d = a.Decide({"a", "b"}, States(4, {0, 1}, {2, 3}, kGrace));
  EXPECT_EQ(d.target, 2);
  EXPECT_TRUE(d.acquire.empty());
  EXPECT_TRUE(d.release.empty());
}

// A table of holders and rounds in which every member decides on the
// table as it is; a release frees a shard at once, an acquire takes it if
// still free. Converges to the fair shares for 1..10 members.
TEST(AssignerTest, RoundsConvergeToFairShares) {
  for (int n = 1; n <= 10; ++n) {
    const int shards = 32;
    std::vector<std::string> members = Members(n);
    std::map<std::string, std::unique_ptr<Assigner>> assigners;
    for (const std::string& m : members) {
      assigners[m] = std::make_unique<Assigner>(shards, m, kGrace);
    }
    std::vector<std::string> holder(shards);
    int moves = 0;
    for (int round = 0; round < 10; ++round) {
      for (const std::string& m : members) {
        std::vector<ShardState> st(shards);
        for (int s = 0; s < shards; ++s) {
          st[s].mine = holder[s] == m;
          st[s].taken = !holder[s].empty() && holder[s] != m;
          st[s].free_for = kGrace;
        }
        Decision d = assigners[m]->Decide(members, st);
        for (int s : d.release) holder[s].clear();
        for (int s : d.acquire) {
          if (holder[s].empty()) {
            holder[s] = m;
            ++moves;
          }
        }
      }
    }
    std::map<std::string, int> count;
    for (const std::string& h : holder) {
      ASSERT_FALSE(h.empty()) << n << " members";
      ++count[h];
    }
    for (const std::string& m : members) {
      EXPECT_EQ(count[m], FairShare(shards, members, m)) << n << " " << m;
    }
    // From empty, every shard is taken once.
    EXPECT_EQ(moves, shards);
  }
}

}  // namespace
}  // namespace kcr::sharding
