#include "runtime/sharding/assignment.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "api/selector/shard_selector.h"

namespace kcr::sharding {
namespace {

// splitmix64's finalizer: a bijection that spreads every input bit.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

const std::string kNobody;

}  // namespace

int FairShare(int shards, const std::vector<std::string>& sorted_members,
              std::string_view member) {
  auto it =
      std::lower_bound(sorted_members.begin(), sorted_members.end(), member);
  if (it == sorted_members.end() || *it != member) return 0;
  const int n = static_cast<int>(sorted_members.size());
  const int rank = static_cast<int>(it - sorted_members.begin());
  return shards / n + (rank < shards % n ? 1 : 0);
}

uint64_t MemberHash(std::string_view member) { return api::Fnv1a64(member); }

uint64_t RendezvousScore(int shard, uint64_t member_hash) {
  return Mix(member_hash ^ Mix(static_cast<uint64_t>(shard) + 1));
}

std::vector<int> PreferredOwners(
    int shards, const std::vector<std::string>& sorted_members) {
  std::vector<int> owner(shards, -1);
  const int n = static_cast<int>(sorted_members.size());
  if (n == 0) return owner;
  std::vector<uint64_t> hashes;
  std::vector<int> room;
  hashes.reserve(n);
  room.reserve(n);
  for (const std::string& m : sorted_members) {
    hashes.push_back(MemberHash(m));
    room.push_back(FairShare(shards, sorted_members, m));
  }
  // (score, shard, member), highest score first; ties (a 64-bit collision)
  // broken by shard then member so every replica orders alike.
  std::vector<std::tuple<uint64_t, int, int>> pairs;
  pairs.reserve(static_cast<size_t>(shards) * n);
  for (int s = 0; s < shards; ++s) {
    for (int m = 0; m < n; ++m) {
      pairs.emplace_back(RendezvousScore(s, hashes[m]), s, m);
    }
  }
  std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) {
    if (std::get<0>(a) != std::get<0>(b))
      return std::get<0>(a) > std::get<0>(b);
    return std::make_pair(std::get<1>(a), std::get<2>(a)) <
           std::make_pair(std::get<1>(b), std::get<2>(b));
  });
  int left = shards;
  for (const auto& [score, s, m] : pairs) {
    if (left == 0) break;
    if (owner[s] != -1 || room[m] == 0) continue;
    owner[s] = m;
    --room[m];
    --left;
  }
  return owner;
}

Assigner::Assigner(int shards, std::string self, absl::Duration free_grace)
    : shards_(shards),
      self_(std::move(self)),
      self_hash_(MemberHash(self_)),
      free_grace_(free_grace) {}

Decision Assigner::Decide(const std::vector<std::string>& members,
                          const std::vector<ShardState>& states) {
  std::vector<std::string> sorted = members;
  sorted.push_back(self_);
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  if (sorted != members_) {
    members_ = std::move(sorted);
    preferred_ = PreferredOwners(shards_, members_);
  }
  const int me = static_cast<int>(
      std::lower_bound(members_.begin(), members_.end(), self_) -
      members_.begin());

  Decision d;
  d.target = FairShare(shards_, members_, self_);
  std::vector<int> held;
  for (int s = 0; s < shards_ && s < static_cast<int>(states.size()); ++s) {
    if (states[s].mine) held.push_back(s);
  }
  const int count = static_cast<int>(held.size());
  auto score = [this](int s) { return RendezvousScore(s, self_hash_); };

  if (count > d.target) {
    // Least wanted first: preferred by another member, then lower score.
    std::sort(held.begin(), held.end(), [&](int a, int b) {
      const bool pa = preferred_[a] == me, pb = preferred_[b] == me;
      if (pa != pb) return !pa;
      return score(a) < score(b);
    });
    d.release.assign(held.begin(), held.begin() + (count - d.target));
    return d;
  }
  if (count == d.target) return d;

  // What each member holds, as far as this replica can tell.
  std::vector<int> holds(members_.size(), 0);
  holds[me] = count;
  for (const ShardState& st : states) {
    if (!st.taken) continue;
    auto it = std::lower_bound(members_.begin(), members_.end(), st.holder);
    if (it != members_.end() && *it == st.holder)
      ++holds[it - members_.begin()];
  }
  // The free shards each other member is preferred for. A member below
  // its share takes the best of them for it, as many as it lacks (this
  // rule, run there); the rest it leaves, and they may be taken at once.
  std::vector<std::vector<int>> free_preferred(members_.size());
  for (int s = 0; s < shards_ && s < static_cast<int>(states.size()); ++s) {
    const ShardState& st = states[s];
    if (st.mine || st.taken || preferred_[s] == me) continue;
    free_preferred[preferred_[s]].push_back(s);
  }
  std::vector<bool> left(shards_, false);
  for (size_t p = 0; p < members_.size(); ++p) {
    std::vector<int>& free = free_preferred[p];
    const size_t lacks = static_cast<size_t>(
        std::max(0, FairShare(shards_, members_, members_[p]) - holds[p]));
    if (free.size() <= lacks) continue;
    const uint64_t hash = MemberHash(members_[p]);
    std::sort(free.begin(), free.end(), [hash](int a, int b) {
      return RendezvousScore(a, hash) > RendezvousScore(b, hash);
    });
    for (size_t i = lacks; i < free.size(); ++i) left[free[i]] = true;
  }
  std::vector<int> mine_first, others;
  for (int s = 0; s < shards_ && s < static_cast<int>(states.size()); ++s) {
    const ShardState& st = states[s];
    if (st.mine || st.taken) continue;
    if (preferred_[s] == me) {
      mine_first.push_back(s);
    } else if (st.free_for >= free_grace_ || left[s]) {
      others.push_back(s);
    }
  }
  auto by_score = [&](int a, int b) { return score(a) > score(b); };
  std::sort(mine_first.begin(), mine_first.end(), by_score);
  std::sort(others.begin(), others.end(), by_score);
  const size_t want = static_cast<size_t>(d.target - count);
  for (int s : mine_first) {
    if (d.acquire.size() == want) break;
    d.acquire.push_back(s);
  }
  for (int s : others) {
    if (d.acquire.size() == want) break;
    d.acquire.push_back(s);
  }
  return d;
}

const std::string& Assigner::PreferredOwner(int shard) const {
  if (shard < 0 || shard >= static_cast<int>(preferred_.size()) ||
      preferred_[shard] < 0) {
    return kNobody;
  }
  return members_[preferred_[shard]];
}

}  // namespace kcr::sharding
