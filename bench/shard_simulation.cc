// Shard assignment at scale, simulated: replicas that run the coordinator's
// rounds (runtime/sharding/assignment.h, the same decisions) on virtual
// time against an in-memory table of Leases, with no server. Each replica
// judges Leases as the coordinator does: alive while they changed less
// than the lease duration ago as that replica observed (it observes at its
// own rounds, which run retry_period apart, jittered up to 20%, at
// random phases, and wakes early when a Lease it saw runs out).
//
// Scenarios (defaults: 100 replicas, 1,000,000 objects, 1,024 shards):
//   start:  all replicas start together on empty Leases; time until every
//           replica holds its fair share;
//   die:    from balance, 10 replicas die (stop renewing); time until every
//           shard is held by a live replica again, and until balance;
//   grow:   from balance, 10 replicas join (100 become 110); shards that
//           changed holder, against the minimum (1,024 / 11 = 93.1);
// and the largest/smallest number of objects per replica after each.
//
//   bazel run -c opt //bench:shard_simulation -- --seeds=5
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "runtime/sharding/assignment.h"
#include "runtime/sharding/shard_ownership.h"

namespace kcr::sharding {
namespace {

struct Config {
  int replicas = 100;
  int objects = 1000000;
  int shards = 1024;
  int die = 10;
  int grow = 10;
  double lease = 15;  // seconds
  double retry = 2;   // seconds
  double grace = 6;   // free_grace: 3 * retry
};

struct LeaseRow {
  int holder = -1;      // -1: free (never taken, or released)
  int64_t version = 0;  // bumped by every write
};

// One replica's view: when it last saw each Lease change.
struct Replica {
  std::string id;
  std::unique_ptr<Assigner> assigner;
  bool alive = true;
  double next_round = 0;
  std::vector<int64_t> seen_version;    // per shard
  std::vector<double> observed_at;      // per shard
  std::vector<double> free_since;       // per shard; +inf while alive
  std::vector<int64_t> seen_member;     // per member
  std::vector<double> member_observed;  // per member
};

class Simulation {
 public:
  Simulation(const Config& c, uint64_t seed) : c_(c), rng_(seed) {
    // Objects per shard, from uids hashed as the server does.
    load_.assign(c_.shards, 0);
    std::uniform_int_distribution<uint64_t> any;
    for (int i = 0; i < c_.objects; ++i) {
      const std::string uid =
          absl::StrCat(absl::Hex(any(rng_), absl::kZeroPad16), "-", i);
      ++load_[ShardOf(ShardBy::kUid, uid, "", c_.shards)];
    }
    table_.resize(c_.shards);
  }

  int AddReplica(double now) {
    auto r = std::make_unique<Replica>();
    r->id = absl::StrCat("replica-", absl::Hex(rng_(), absl::kZeroPad8));
    r->assigner =
        std::make_unique<Assigner>(c_.shards, r->id, absl::Seconds(c_.grace));
    r->next_round =
        now + std::uniform_real_distribution<double>(0, c_.retry)(rng_);
    r->seen_version.assign(c_.shards, -1);
    r->observed_at.assign(c_.shards, now);
    r->free_since.assign(c_.shards, now);
    replicas_.push_back(std::move(r));
    members_.push_back(0);
    for (auto& x : replicas_) {
      x->seen_member.resize(replicas_.size(), -1);
      x->member_observed.resize(replicas_.size(), now);
    }
    return static_cast<int>(replicas_.size()) - 1;
  }

  void Kill(int i) { replicas_[i]->alive = false; }

  // Runs rounds until `until` (virtual seconds), calling `check` after
  // every round; stops early when it returns true. Returns the time.
  template <typename F>
  double RunUntil(double until, F check) {
    while (true) {
      int next = -1;
      for (size_t i = 0; i < replicas_.size(); ++i) {
        if (!replicas_[i]->alive) continue;
        if (next < 0 ||
            replicas_[i]->next_round < replicas_[next]->next_round) {
          next = static_cast<int>(i);
        }
      }
      if (next < 0) return until;
      const double now = replicas_[next]->next_round;
      if (now > until) return until;
      const double expiry = Round(next, now);
      // As LeaseShardCoordinator::NextRound: the next round, or earlier
      // when another replica's Lease runs out.
      replicas_[next]->next_round = std::min(
          expiry,
          now + c_.retry * (1 + 0.2 * std::uniform_real_distribution<double>(
                                          0, 1)(rng_)));
      if (check(now)) return now;
    }
  }

  // Every shard held by a live replica.
  bool Covered() const {
    for (const LeaseRow& row : table_) {
      if (row.holder < 0 || !replicas_[row.holder]->alive) return false;
    }
    return true;
  }

  // Every live replica holds its fair share among the live ones.
  bool Balanced() const {
    std::vector<std::string> live = LiveIds();
    std::vector<int> held(replicas_.size(), 0);
    for (const LeaseRow& row : table_) {
      if (row.holder >= 0) ++held[row.holder];
    }
    for (size_t i = 0; i < replicas_.size(); ++i) {
      if (!replicas_[i]->alive) continue;
      if (held[i] != FairShare(c_.shards, live, replicas_[i]->id)) return false;
    }
    return Covered();
  }

  // Largest / smallest objects per live replica.
  double LoadRatio() const {
    std::vector<int64_t> objects(replicas_.size(), 0);
    for (int s = 0; s < c_.shards; ++s) {
      if (table_[s].holder >= 0) objects[table_[s].holder] += load_[s];
    }
    int64_t lo = INT64_MAX, hi = 0;
    for (size_t i = 0; i < replicas_.size(); ++i) {
      if (!replicas_[i]->alive) continue;
      lo = std::min(lo, objects[i]);
      hi = std::max(hi, objects[i]);
    }
    return lo == 0 ? 0 : static_cast<double>(hi) / lo;
  }

  // The fair shares of replicas [first, end) among the live ones: the
  // fewest shards that must move to them.
  int SharesFrom(int first) const {
    std::vector<std::string> live = LiveIds();
    int sum = 0;
    for (size_t i = first; i < replicas_.size(); ++i) {
      sum += FairShare(c_.shards, live, replicas_[i]->id);
    }
    return sum;
  }

  int64_t acquisitions() const { return acquisitions_; }
  int64_t conflicts() const { return conflicts_; }

 private:
  std::vector<std::string> LiveIds() const {
    std::vector<std::string> live;
    for (const auto& r : replicas_) {
      if (r->alive) live.push_back(r->id);
    }
    std::sort(live.begin(), live.end());
    return live;
  }

  // One round of replica `me`; returns the earliest future moment at
  // which a shard Lease another replica holds, and that replica's
  // membership, have both run out as `me` judges them.
  double Round(int me, double now) {
    Replica& r = *replicas_[me];
    // Renew what it holds and its membership.
    for (LeaseRow& row : table_) {
      if (row.holder == me) ++row.version;
    }
    ++members_[me];
    // Observe the members.
    std::vector<std::string> live;
    for (size_t m = 0; m < replicas_.size(); ++m) {
      if (r.seen_member[m] != members_[m]) {
        r.seen_member[m] = members_[m];
        r.member_observed[m] = now;
      }
      if (members_[m] > 0 && r.member_observed[m] + c_.lease > now) {
        live.push_back(replicas_[m]->id);
      }
    }
    // Observe the shards.
    std::vector<ShardState> states(c_.shards);
    for (int s = 0; s < c_.shards; ++s) {
      const LeaseRow& row = table_[s];
      if (r.seen_version[s] != row.version) {
        r.seen_version[s] = row.version;
        r.observed_at[s] = now;
      }
      ShardState& st = states[s];
      st.mine = row.holder == me;
      if (st.mine) continue;
      const bool alive = row.holder >= 0 && r.observed_at[s] + c_.lease > now;
      if (alive) {
        st.taken = true;
        st.holder = replicas_[row.holder]->id;
        r.free_since[s] = 1e300;
      } else {
        if (r.free_since[s] > now) {
          r.free_since[s] =
              row.holder < 0 ? r.observed_at[s] : r.observed_at[s] + c_.lease;
        }
        st.free_for = absl::Seconds(std::max(0.0, now - r.free_since[s]));
      }
    }
    const Decision d = r.assigner->Decide(live, states);
    for (int s : d.release) {
      table_[s].holder = -1;
      ++table_[s].version;
    }
    for (int s : d.acquire) {
      // The write is conditional on the version listed.
      if (table_[s].version != r.seen_version[s]) {
        ++conflicts_;
        continue;
      }
      table_[s].holder = me;
      ++table_[s].version;
      ++acquisitions_;
    }
    double expiry = 1e300;
    for (int s = 0; s < c_.shards; ++s) {
      const int holder = table_[s].holder;
      if (!states[s].taken || holder < 0 || holder == me) continue;
      const double at = std::max(r.observed_at[s] + c_.lease,
                                 r.member_observed[holder] + c_.lease);
      if (at > now) expiry = std::min(expiry, at);
    }
    return expiry;
  }

  const Config c_;
  std::mt19937_64 rng_;
  std::vector<int64_t> load_;
  std::vector<LeaseRow> table_;
  std::vector<int64_t> members_;  // membership Lease versions
  std::vector<std::unique_ptr<Replica>> replicas_;
  int64_t acquisitions_ = 0;
  int64_t conflicts_ = 0;
};

struct Result {
  double start_balanced;  // s
  double start_ratio;
  double die_covered;   // s after the deaths
  double die_balanced;  // s after the deaths
  double die_ratio;
  int64_t grow_moved;
  int grow_minimum;      // the new replicas' fair shares
  double grow_balanced;  // s after the joins
  double grow_ratio;
  double wall;  // s of real time
};

Result RunOnce(const Config& c, uint64_t seed) {
  const absl::Time wall = absl::Now();
  Result res{};
  Simulation sim(c, seed);
  for (int i = 0; i < c.replicas; ++i) sim.AddReplica(0);
  res.start_balanced =
      sim.RunUntil(600, [&](double) { return sim.Balanced(); });
  res.start_ratio = sim.LoadRatio();
  // Settle, then kill.
  double t =
      sim.RunUntil(res.start_balanced + 30, [](double) { return false; });
  for (int i = 0; i < c.die; ++i) sim.Kill(i * (c.replicas / c.die));
  const double died = t;
  res.die_covered =
      sim.RunUntil(died + 600, [&](double) { return sim.Covered(); }) - died;
  res.die_balanced =
      sim.RunUntil(died + 600, [&](double) { return sim.Balanced(); }) - died;
  res.die_ratio = sim.LoadRatio();
  // A fresh 100, balanced, then 10 join.
  Simulation grow(c, seed + 1000);
  for (int i = 0; i < c.replicas; ++i) grow.AddReplica(0);
  t = grow.RunUntil(600, [&](double) { return grow.Balanced(); });
  t = grow.RunUntil(t + 30, [](double) { return false; });
  const int64_t before = grow.acquisitions();
  for (int i = 0; i < c.grow; ++i) grow.AddReplica(t);
  bool seen_unbalanced = false;
  const double joined = t;
  res.grow_balanced = grow.RunUntil(joined + 600, [&](double) {
    if (!grow.Balanced()) seen_unbalanced = true;
    return seen_unbalanced && grow.Balanced();
  }) - joined;
  grow.RunUntil(joined + res.grow_balanced + 30, [](double) { return false; });
  res.grow_moved = grow.acquisitions() - before;
  res.grow_minimum = grow.SharesFrom(c.replicas);
  res.grow_ratio = grow.LoadRatio();
  res.wall = absl::ToDoubleSeconds(absl::Now() - wall);
  return res;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2]
                      : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace
}  // namespace kcr::sharding

int main(int argc, char** argv) {
  using namespace kcr::sharding;
  Config c;
  int seeds = 5;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      const std::string f = std::string(flag) + "=";
      return a.rfind(f, 0) == 0 ? argv[i] + f.size() : nullptr;
    };
    if (const char* v = value("--seeds")) seeds = std::atoi(v);
    if (const char* v = value("--replicas")) c.replicas = std::atoi(v);
    if (const char* v = value("--objects")) c.objects = std::atoi(v);
    if (const char* v = value("--shards")) c.shards = std::atoi(v);
  }
  std::printf(
      "replicas=%d objects=%d shards=%d lease=%.0fs retry=%.0fs grace=%.0fs\n",
      c.replicas, c.objects, c.shards, c.lease, c.retry, c.grace);
  std::printf("%-5s %9s %7s | %9s %9s %7s | %6s %6s %9s %7s | %6s\n", "seed",
              "start_s", "ratio", "cover_s", "balance_s", "ratio", "moved",
              "min", "balance_s", "ratio", "wall_s");
  std::vector<double> cols[10];
  for (int s = 1; s <= seeds; ++s) {
    Result r = RunOnce(c, s);
    std::printf(
        "%-5d %9.1f %7.3f | %9.1f %9.1f %7.3f | %6lld %6d %9.1f %7.3f | "
        "%6.2f\n",
        s, r.start_balanced, r.start_ratio, r.die_covered, r.die_balanced,
        r.die_ratio, static_cast<long long>(r.grow_moved), r.grow_minimum,
        r.grow_balanced, r.grow_ratio, r.wall);
    const double v[10] = {r.start_balanced, r.start_ratio,
                          r.die_covered,    r.die_balanced,
                          r.die_ratio,      double(r.grow_moved),
                          r.grow_balanced,  r.grow_ratio,
                          r.wall,           0};
    for (int k = 0; k < 10; ++k) cols[k].push_back(v[k]);
  }
  std::printf(
      "%-5s %9.1f %7.3f | %9.1f %9.1f %7.3f | %6.0f %6s %9.1f %7.3f | "
      "%6.2f\n",
      "med", Median(cols[0]), Median(cols[1]), Median(cols[2]), Median(cols[3]),
      Median(cols[4]), Median(cols[5]), "", Median(cols[6]), Median(cols[7]),
      Median(cols[8]));
  std::printf("1/%d of %d shards when %d become %d: %.1f\n",
              (c.replicas + c.grow) / c.grow, c.shards, c.replicas,
              c.replicas + c.grow,
              static_cast<double>(c.shards) * c.grow / (c.replicas + c.grow));
  return 0;
}
