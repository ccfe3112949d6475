// The nginx controller sharded across controller-manager processes
// (--shards) against a local API server process with shardSelector:
//   - 3 replicas, 16 shards, 3,000 Nginx objects: every one gets its
//     Deployment;
//   - each replica receives about a third of the Nginx watch events;
//   - a fourth replica joins: about a quarter of the shards move, each once;
//   - one replica is SIGKILLed: its shards have new holders within the
//     lease duration plus a (jittered) retry period, and its objects are
//     reconciled by the others;
//   - the audit of every reconcile (object, replica, start, end) shows no
//     object reconciled by two replicas at once.
// The numbers it measures are printed (docs/benchmarks.md quotes them).
#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "api/object.h"
#include "base/context.h"
#include "gtest/gtest.h"
#include "runtime/client/rest_client.h"
#include "runtime/client/rest_config.h"
#include "test/e2e/manager_fixture.h"

namespace kcr::e2e {
namespace {

using apiserver::ReadFile;
using apiserver::WaitFor;

constexpr int kShards = 16;
constexpr int kObjects = 3000;
const Context kBg = Context::Background();
// Short Leases so that the test takes seconds.
constexpr absl::Duration kLease = absl::Seconds(3);
constexpr absl::Duration kRetry = absl::Milliseconds(500);
constexpr absl::Duration kSchedulingSlack = absl::Milliseconds(700);

const client::Resource kNginxes =
    client::Resource::Namespaced({"example.org", "v1", "nginxes"}, "default");
const client::Resource kDeployments =
    client::Resource::Namespaced({"apps", "v1", "deployments"}, "default");
const client::Resource kLeases = client::Resource::Namespaced(
    {"coordination.k8s.io", "v1", "leases"}, "default");

struct Interval {
  std::string replica;
  int64_t start = 0;
  int64_t end = 0;
};

class ShardedNginxE2eTest : public ManagerFixture {
 protected:
  void StartAll(std::vector<std::string> server_args = {}) {
    // No pods: the Deployments are what the controller makes.
    server_args.push_back("--simulate_node=false");
    server_args.push_back("--deployment_controller=false");
    ASSERT_NO_FATAL_FAILURE(
        StartServerWithCrds("sharded-nginx", std::move(server_args)));
    client::LoadingRules rules;
    rules.explicit_path = server_->kubeconfig();
    auto config = client::BuildConfig(rules);
    ASSERT_TRUE(config.ok()) << config.status();
    config->qps = -1;
    auto c = client::NewRestClient(*config);
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = *std::move(c);
  }

  ManagerProcess* Replica() {
    const int i = static_cast<int>(managers_.size());
    audits_.push_back(absl::StrCat(dir_, "/audit-", i, ".txt"));
    return StartManager(
        {"--controllers=nginx", "--shards=16", "--workers=4", "--qps=1000",
         "--burst=2000", "--shard-lease-duration=3s",
         "--shard-renew-deadline=2s", "--shard-retry-period=500ms",
         "--vmodule=shard_coordinator=2",
         "--reconcile-audit-file=" + audits_.back()});
  }

  // The replica identity a manager's shard coordinators use.
  static std::string Identity(ManagerProcess* m) {
    const std::string log = m->Log();
    const size_t at = log.find("identity=");
    if (at == std::string::npos) return "";
    const size_t end = log.find_first_of(" \n", at);
    return log.substr(at + 9, end - at - 9);
  }

  // Holder of each nginx shard Lease ("" when free or not listed).
  std::vector<std::string> Holders() {
    std::vector<std::string> holders(kShards);
    auto list = client_->List(kBg, kLeases);
    if (!list.ok()) return holders;
    for (const api::ObjectPtr& o : list->items) {
      std::string_view name = o->name();
      if (name.rfind("nginx-shard-", 0) != 0) continue;
      int shard;
      if (!absl::SimpleAtoi(std::string(name.substr(12)), &shard)) continue;
      if (shard < 0 || shard >= kShards) continue;
      const rapidjson::Value& obj = o->json();
      auto spec = obj.FindMember("spec");
      if (spec == obj.MemberEnd() || !spec->value.IsObject()) continue;
      auto h = spec->value.FindMember("holderIdentity");
      if (h != spec->value.MemberEnd() && h->value.IsString()) {
        holders[shard] = h->value.GetString();
      }
    }
    return holders;
  }

  // How many shards each identity holds.
  static std::map<std::string, int> Counts(
      const std::vector<std::string>& holders) {
    std::map<std::string, int> counts;
    for (const std::string& h : holders) {
      if (!h.empty()) ++counts[h];
    }
    return counts;
  }

  int DeploymentsReady(const std::string& replicas) {
    auto list = client_->List(kBg, kDeployments);
    if (!list.ok()) return -1;
    int n = 0;
    for (const api::ObjectPtr& o : list->items) {
      auto spec = o->json().FindMember("spec");
      if (spec == o->json().MemberEnd()) continue;
      auto r = spec->value.FindMember("replicas");
      if (r != spec->value.MemberEnd() && r->value.IsInt() &&
          absl::StrCat(r->value.GetInt()) == replicas) {
        ++n;
      }
    }
    return n;
  }

  // reflector_events_total of the nginx informer, summed over types.
  static double NginxEvents(ManagerProcess* m) {
    return NginxMetric(m, "reflector_events_total{");
  }
  static double NginxMetric(ManagerProcess* m, absl::string_view prefix) {
    const std::string body =
        ManagerProcess::HttpGet(m->MetricsUrl(), "/metrics");
    double sum = 0;
    for (absl::string_view line : absl::StrSplit(body, '\n')) {
      if (!absl::StartsWith(line, prefix) ||
          line.find("name=\"nginxes.example.org\"") ==
              absl::string_view::npos) {
        continue;
      }
      double v;
      if (absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &v)) sum += v;
    }
    return sum;
  }

  void PatchAll(const std::string& patch, int from, int to) {
    for (int i = from; i < to; ++i) {
      auto p = client_->Patch(kBg, kNginxes, absl::StrCat("n-", i),
                              client::PatchType::kMerge, patch);
      ASSERT_TRUE(p.ok()) << p.status();
    }
  }

  // The audit lines of every replica, by object.
  std::map<std::string, std::vector<Interval>> Audit() {
    std::map<std::string, std::vector<Interval>> by_key;
    for (const std::string& path : audits_) {
      for (absl::string_view line : absl::StrSplit(ReadFile(path), '\n')) {
        std::vector<std::string> f = absl::StrSplit(line, ' ');
        if (f.size() != 5) continue;  // a line cut by SIGKILL
        Interval i;
        i.replica = f[2];
        if (!absl::SimpleAtoi(f[3], &i.start) ||
            !absl::SimpleAtoi(f[4], &i.end)) {
          continue;
        }
        by_key[f[1]].push_back(i);
      }
    }
    return by_key;
  }

  // Reconciles audited so far, of every replica.
  size_t AuditedReconciles() {
    size_t n = 0;
    for (const auto& [key, intervals] : Audit()) n += intervals.size();
    return n;
  }

  // Objects reconciled by two replicas at once (each one a test failure).
  static int Overlaps(std::map<std::string, std::vector<Interval>>* audit) {
    int overlaps = 0;
    for (auto& [key, intervals] : *audit) {
      std::sort(intervals.begin(), intervals.end(),
                [](const Interval& a, const Interval& b) {
                  return a.start < b.start;
                });
      // The interval that ends last among those started so far.
      const Interval* latest = nullptr;
      for (const Interval& i : intervals) {
        if (latest != nullptr && i.start < latest->end &&
            i.replica != latest->replica) {
          ++overlaps;
          ADD_FAILURE() << key << " reconciled by " << latest->replica
                        << " and " << i.replica << " at once";
        }
        if (latest == nullptr || i.end > latest->end) latest = &i;
      }
    }
    return overlaps;
  }

  void CreateNginxes(int n) {
    for (int i = 0; i < n; ++i) {
      auto o = api::Object::Parse(absl::StrCat(
          R"({"apiVersion":"example.org/v1","kind":"Nginx","metadata":{"name":"n-)",
          i, R"(","namespace":"default"},"spec":{"replicas":1}})"));
      ASSERT_TRUE(o.ok());
      auto created = client_->Create(kBg, kNginxes, **o);
      ASSERT_TRUE(created.ok()) << created.status();
    }
  }

  std::unique_ptr<client::RestClient> client_;
  std::vector<std::string> audits_;
};

TEST_F(ShardedNginxE2eTest, ReplicasSplitTheObjectsAndNeverOverlap) {
  ASSERT_NO_FATAL_FAILURE(StartAll());
  ASSERT_NO_FATAL_FAILURE(CreateNginxes(kObjects));
  const absl::Time start = absl::Now();
  std::vector<ManagerProcess*> replicas;
  for (int i = 0; i < 3; ++i) {
    replicas.push_back(Replica());
    ASSERT_TRUE(replicas.back()->started());
  }

  // 1. Every object converges; every replica holds its share.
  ASSERT_TRUE(WaitFor([&] { return DeploymentsReady("1") == kObjects; },
                      absl::Seconds(120)))
      << DeploymentsReady("1") << " of " << kObjects << "\n"
      << replicas[0]->Log().substr(0, 4000);
  const absl::Duration converged = absl::Now() - start;
  ASSERT_TRUE(WaitFor([&] {
    std::map<std::string, int> counts = Counts(Holders());
    return counts.size() == 3 && counts.begin()->second >= 5 &&
           std::all_of(counts.begin(), counts.end(),
                       [](const auto& c) { return c.second <= 6; });
  }));
  for (ManagerProcess* m : replicas) {
    ASSERT_TRUE(WaitFor([&] {
      return ManagerProcess::HttpGet(m->HealthUrl(), "/readyz") == "ok";
    })) << ManagerProcess::HttpGet(m->HealthUrl(), "/readyz?verbose");
  }

  // Each object is created, its Deployment made and its status written:
  // two reconciles. Shard changes while the replicas start move objects
  // but do not hand the unchanged ones to the handlers again.
  const double per_object_converged =
      static_cast<double>(AuditedReconciles()) / kObjects;
  double relists = 0;
  for (ManagerProcess* m : replicas) {
    relists += NginxMetric(m, "reflector_relists_total{");
  }
  std::cout << "reconciles per object until converged and settled: "
            << per_object_converged << "; nginx relists in all: " << relists
            << std::endl;
  EXPECT_LE(per_object_converged, 2.5);

  // 2. Watch events: each replica receives those of its shards.
  std::vector<double> before;
  for (ManagerProcess* m : replicas) before.push_back(NginxEvents(m));
  ASSERT_NO_FATAL_FAILURE(
      PatchAll(R"({"metadata":{"annotations":{"touched":"1"}}})", 0, kObjects));
  std::vector<double> deltas(3);
  double total = 0;
  ASSERT_TRUE(WaitFor([&] {
    total = 0;
    for (int i = 0; i < 3; ++i) {
      deltas[i] = NginxEvents(replicas[i]) - before[i];
      total += deltas[i];
    }
    return total >= kObjects;
  })) << total;
  std::cout << "watch events per replica for " << kObjects
            << " updates: " << deltas[0] << " " << deltas[1] << " " << deltas[2]
            << std::endl;
  for (double d : deltas) {
    EXPECT_LT(d, 0.5 * kObjects);  // unsharded: every replica gets all
    EXPECT_GT(d, 0.15 * kObjects);
  }

  // 3. A fourth replica: about a quarter of the shards move, each once.
  const size_t reconciles_before_join = AuditedReconciles();
  const std::vector<std::string> held_by_three = Holders();
  replicas.push_back(Replica());
  ASSERT_TRUE(replicas.back()->started());
  std::vector<std::vector<std::string>> history(kShards);
  for (int s = 0; s < kShards; ++s) history[s].push_back(held_by_three[s]);
  const absl::Time joined = absl::Now();
  absl::Time stable_since = absl::Now();
  std::vector<std::string> last = held_by_three;
  while (absl::Now() - joined < absl::Seconds(60)) {
    std::vector<std::string> now = Holders();
    for (int s = 0; s < kShards; ++s) {
      if (!now[s].empty() && now[s] != history[s].back()) {
        history[s].push_back(now[s]);
      }
    }
    if (now != last) stable_since = absl::Now();
    last = now;
    std::map<std::string, int> counts = Counts(now);
    if (counts.size() == 4 && absl::Now() - stable_since > 3 * kLease &&
        std::all_of(counts.begin(), counts.end(),
                    [](const auto& c) { return c.second == 4; })) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  int moved = 0;
  for (int s = 0; s < kShards; ++s) {
    EXPECT_LE(history[s].size(), 2u) << "shard " << s << " moved twice";
    if (history[s].size() > 1) ++moved;
  }
  const double per_object_join =
      static_cast<double>(AuditedReconciles() - reconciles_before_join) /
      kObjects;
  std::cout << "shards moved when a fourth replica joined: " << moved << " of "
            << kShards
            << "; reconciles per object meanwhile: " << per_object_join
            << std::endl;
  // A quarter of the objects change hands, each reconciled once by its new
  // owner; the others are not reconciled again.
  EXPECT_LE(per_object_join, 0.5);
  EXPECT_EQ(Counts(last).size(), 4u);
  EXPECT_GE(moved, 3);
  EXPECT_LE(moved, 6);

  // 4. SIGKILL one: its shards get new holders within lease + retry
  //    (plus a round's jitter), and its objects are reconciled again.
  const std::string dead = Identity(replicas[1]);
  ASSERT_FALSE(dead.empty());
  replicas[1]->Kill();
  const absl::Time killed = absl::Now();
  ASSERT_TRUE(WaitFor(
      [&] {
        std::vector<std::string> h = Holders();
        return std::none_of(h.begin(), h.end(), [&](const std::string& x) {
          return x.empty() || x == dead;
        });
      },
      absl::Seconds(30)));
  const absl::Duration taken_over = absl::Now() - killed;
  const absl::Time patched = absl::Now();
  ASSERT_NO_FATAL_FAILURE(PatchAll(R"({"spec":{"replicas":2}})", 0, kObjects));
  ASSERT_TRUE(WaitFor([&] { return DeploymentsReady("2") == kObjects; },
                      absl::Seconds(120)))
      << DeploymentsReady("2");
  const absl::Duration reconverged = absl::Now() - patched;
  std::cout
      << "converged: " << converged
      << "; a killed replica's shards taken over after " << taken_over
      << "; 3,000 updates (sent one by one) reconciled by the others after "
      << reconverged << std::endl;
  // A survivor sees the last write within a (jittered) round and takes
  // the shards when that Lease runs out; the slack is for scheduling the
  // processes on a loaded machine only.
  EXPECT_LE(taken_over, kLease + kRetry * 1.2 + kSchedulingSlack);

  // 5. No object was reconciled by two replicas at once.
  std::map<std::string, std::vector<Interval>> audit = Audit();
  size_t reconciles = 0;
  for (const auto& [key, intervals] : audit) reconciles += intervals.size();
  const int overlaps = Overlaps(&audit);
  std::cout << "audited reconciles: " << reconciles << " of " << audit.size()
            << " objects, overlaps: " << overlaps << std::endl;
  EXPECT_GE(audit.size(), static_cast<size_t>(kObjects));
}

// A server without the ShardedListAndWatch gate ignores shardSelector:
// every replica lists and watches every object, and the client-side
// filter alone keeps each object on one replica at a time.
TEST_F(ShardedNginxE2eTest, ServerIgnoringShardSelectorCostsOnlyBandwidth) {
  constexpr int kFew = 600;
  ASSERT_NO_FATAL_FAILURE(StartAll({"--fault-ignore-shard-selector"}));
  ASSERT_NO_FATAL_FAILURE(CreateNginxes(kFew));
  std::vector<ManagerProcess*> replicas;
  for (int i = 0; i < 3; ++i) {
    replicas.push_back(Replica());
    ASSERT_TRUE(replicas.back()->started());
  }
  ASSERT_TRUE(
      WaitFor([&] { return DeploymentsReady("1") == kFew; }, absl::Seconds(60)))
      << DeploymentsReady("1") << " of " << kFew;
  // Settled: each holds its share, and nothing moves for a few rounds.
  std::vector<std::string> settled;
  ASSERT_TRUE(WaitFor([&] {
    std::vector<std::string> h = Holders();
    std::map<std::string, int> counts = Counts(h);
    const bool fair = counts.size() == 3 &&
                      std::all_of(counts.begin(), counts.end(),
                                  [](const auto& c) { return c.second >= 5; });
    if (!fair || h != settled) {
      settled = h;
      return false;
    }
    return true;
  }));
  absl::SleepFor(4 * kRetry);
  ASSERT_EQ(Holders(), settled);

  // Every replica receives every update.
  std::vector<double> before;
  for (ManagerProcess* m : replicas) before.push_back(NginxEvents(m));
  const int64_t patched = absl::ToUnixNanos(absl::Now());
  ASSERT_NO_FATAL_FAILURE(PatchAll(R"({"spec":{"replicas":2}})", 0, kFew));
  std::vector<double> deltas(3);
  ASSERT_TRUE(WaitFor([&] {
    for (int i = 0; i < 3; ++i) {
      deltas[i] = NginxEvents(replicas[i]) - before[i];
    }
    return std::all_of(deltas.begin(), deltas.end(),
                       [](double d) { return d >= kFew; });
  })) << deltas[0]
      << " " << deltas[1] << " " << deltas[2];
  std::cout << "watch events per replica for " << kFew
            << " updates, shardSelector ignored: " << deltas[0] << " "
            << deltas[1] << " " << deltas[2] << std::endl;

  // Everything converges, each object on one replica: after the shares
  // settled, on the holder of its shard only; never two at once.
  ASSERT_TRUE(
      WaitFor([&] { return DeploymentsReady("2") == kFew; }, absl::Seconds(60)))
      << DeploymentsReady("2");
  std::map<std::string, std::vector<Interval>> audit = Audit();
  EXPECT_EQ(Overlaps(&audit), 0);
  int reconciled_after = 0;
  for (const auto& [key, intervals] : audit) {
    std::set<std::string> by;
    for (const Interval& i : intervals) {
      if (i.start >= patched) by.insert(i.replica);
    }
    EXPECT_LE(by.size(), 1u) << key << " reconciled by " << by.size();
    if (!by.empty()) ++reconciled_after;
  }
  EXPECT_EQ(reconciled_after, kFew);
}

}  // namespace
}  // namespace kcr::e2e
