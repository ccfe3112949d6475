// Assignment: which shards one replica should take or give back, given what
// it knows of the live members and of every shard's Lease. Pure logic, with
// no Leases and no clock, so that the Lease coordinator
// (shard_coordinator.h) and a simulation (bench/) run the same decisions.
//
// The rule, the same in every replica:
//   - a member's target is its fair share: S / N shards for N live members,
//     and one more for the first S % N members in sorted identity order;
//   - each shard has a preferred owner: rendezvous hashing of (shard,
//     member), capped at each member's target (the pairs taken from the
//     highest score down, a shard going to the first member below its
//     cap), so every replica computes the same balanced map from the same
//     member list, and a change of members moves few preferences;
//   - a replica above its target gives back the extras, those preferred by
//     others first;
//   - a replica below its target takes free (or expired) shards: those it
//     is preferred for at once, those their preferred owner will not take
//     at once too (it holds its share, or lacks fewer than it is preferred
//     for and takes the best of those for it first), and any other once it
//     has been free for `free_grace` (so two replicas rarely race for one
//     shard, yet none is left free for long, and a dead member's shards
//     are all taken in one round);
//   - a replica at its target does nothing: shards move only to restore
//     balance, never to reach the preferred map, so a change of N members
//     moves about |the shares that change| shards and no more.
#ifndef KCR_RUNTIME_SHARDING_ASSIGNMENT_H_
#define KCR_RUNTIME_SHARDING_ASSIGNMENT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"

namespace kcr::sharding {

// What a replica knows of one shard's Lease.
struct ShardState {
  // This replica holds the shard (its renewals succeed).
  bool mine = false;
  // Another holder's Lease that has not run out as this replica measures
  // it (false when the Lease is free, expired or absent).
  bool taken = false;
  // When `taken`: its holder.
  std::string holder;
  // When not `mine` and not `taken`: how long it has been free or expired,
  // as this replica measured it.
  absl::Duration free_for = absl::ZeroDuration();
};

// The fair share of `member` among `sorted_members` (sorted, unique; a
// member not among them gets 0).
int FairShare(int shards, const std::vector<std::string>& sorted_members,
              std::string_view member);

// The rendezvous score of `member` for `shard`: higher is preferred.
uint64_t RendezvousScore(int shard, uint64_t member_hash);
uint64_t MemberHash(std::string_view member);

// The preferred owner of each shard: an index into `sorted_members` (empty
// members: every entry -1). Costs O(S * N log(S * N)).
std::vector<int> PreferredOwners(
    int shards, const std::vector<std::string>& sorted_members);

struct Decision {
  // This replica's fair share.
  int target = 0;
  // Shards to take, best first.
  std::vector<int> acquire;
  // Shards to give back, least wanted first.
  std::vector<int> release;
};

// Decides for one replica. Keeps the preferred map of the last member list
// so that a replica re-decides cheaply while the members stay the same.
// Not thread-safe.
class Assigner {
 public:
  Assigner(int shards, std::string self, absl::Duration free_grace);

  // `members`: the live members as this replica sees them, in any order,
  // with or without `self` (always counted). `states`: one per shard.
  Decision Decide(const std::vector<std::string>& members,
                  const std::vector<ShardState>& states);

  // The preferred owner of `shard` in the last Decide ("" before).
  const std::string& PreferredOwner(int shard) const;

  int shards() const { return shards_; }

 private:
  const int shards_;
  const std::string self_;
  const uint64_t self_hash_;
  const absl::Duration free_grace_;
  std::vector<std::string> members_;  // sorted, as of the last Decide
  std::vector<int> preferred_;
};

}  // namespace kcr::sharding

#endif  // KCR_RUNTIME_SHARDING_ASSIGNMENT_H_
