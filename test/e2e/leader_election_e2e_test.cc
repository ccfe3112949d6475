// Two controller-manager replicas with --leader-elect against one API
// server, as the in-cluster Deployment runs them. Only the leader acts;
// when it is killed (SIGKILL: no release, its Lease must expire) the
// standby takes over, and what was asked during the handover is done
// exactly once: nothing missed, nothing doubled. A clean stop of the new
// leader releases the Lease, and the restarted first replica takes over at
// once.
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/e2e/manager_fixture.h"

namespace kcr::e2e {
namespace {

using apiserver::WaitFor;

constexpr char kReady[] = R"({.status.conditions[?(@.type=="Ready")].status})";

std::string NginxYaml(const std::string& name, int replicas) {
  return "apiVersion: example.org/v1\nkind: Nginx\nmetadata:\n  name: " + name +
         "\n  namespace: default\nspec:\n  replicas: " +
         std::to_string(replicas) + "\n";
}

class LeaderElectionE2eTest : public ManagerFixture {
 protected:
  ManagerProcess* StartReplica() {
    return StartManager({"--controllers=nginx", "--leader-elect",
                         "--leader-election-namespace=default",
                         "--leader-elect-lease-duration=4s",
                         "--leader-elect-renew-deadline=3s",
                         "--leader-elect-retry-period=500ms"});
  }

  static bool Leading(ManagerProcess* mgr) {
    return mgr->CountLogLines("manager: leading") > 0;
  }

  // The summed count of the Events with `reason` about Nginx `name`.
  int EventCount(const std::string& name, const std::string& reason) {
    std::optional<std::string> counts =
        Jsonpath({"events", "--field-selector",
                  "involvedObject.kind=Nginx,involvedObject.name=" + name +
                      ",reason=" + reason},
                 "{range .items[*]}{.count}{\"\\n\"}{end}");
    int total = 0;
    for (absl::string_view line :
         absl::StrSplit(counts.value_or(""), '\n', absl::SkipEmpty())) {
      int n = 0;
      total += absl::SimpleAtoi(line, &n) ? n : 1;
    }
    return total;
  }
};

TEST_F(LeaderElectionE2eTest, StandbyTakesOverWithoutMissingOrDoubling) {
  ASSERT_NO_FATAL_FAILURE(StartServerWithCrds("leader"));
  ManagerProcess* first = StartReplica();
  ASSERT_TRUE(WaitFor([&] { return Leading(first); }, absl::Seconds(60)))
      << first->Log();
  ManagerProcess* second = StartReplica();
  // The standby syncs its caches and reports ready, but does not lead.
  ASSERT_TRUE(WaitFor(
      [&] {
        return second->CountLogLines("manager: caches synced") > 0 &&
               second->CountLogLines("manager: leader is now") > 0;
      },
      absl::Seconds(60)))
      << second->Log();
  EXPECT_FALSE(Leading(second)) << second->Log();

  ASSERT_TRUE(Apply(NginxYaml("before", 1)));
  ASSERT_TRUE(WaitForJsonpath({"nginx", "before"}, kReady, "True"))
      << last_jsonpath_;
  EXPECT_TRUE(WaitFor([&] { return EventCount("before", "Created") == 1; }));
  // Only the leader acted.
  EXPECT_EQ(second->CountLogLines("name=before"), 0) << second->Log();

  // The leader crashes; while its Lease runs out, a new Nginx is asked
  // for and the old one changed.
  first->Kill();
  ASSERT_TRUE(Apply(NginxYaml("during", 1)));
  ASSERT_TRUE(Apply(NginxYaml("before", 3)));

  ASSERT_TRUE(WaitFor([&] { return Leading(second); }, absl::Seconds(60)))
      << second->Log();
  EXPECT_TRUE(
      WaitForJsonpath({"deployment", "during-deploy"}, "{.spec.replicas}", "1"))
      << last_jsonpath_ << second->Log();
  // Nobody led until the Lease ran out, so nothing acted before: the
  // standby (the only replica left) created the new Deployment only after
  // it took the lead. Checked by the order of its log lines, which no
  // slowness of kubectl or of the machine can change.
  EXPECT_TRUE(WaitFor([&] {
    return second->CountLogLines("created deployment=during-deploy") > 0;
  })) << second->Log();
  {
    const std::string log = second->Log();
    const size_t leading = log.find("manager: leading");
    const size_t acted = log.find("deployment=during-deploy");
    EXPECT_NE(acted, std::string::npos) << log;
    EXPECT_LT(leading, acted) << "acted while nobody led:\n" << log;
  }
  EXPECT_TRUE(
      WaitForJsonpath({"deployment", "before-deploy"}, "{.spec.replicas}", "3"))
      << last_jsonpath_ << second->Log();
  EXPECT_TRUE(WaitForJsonpath({"nginx", "during"}, kReady, "True"))
      << last_jsonpath_;
  EXPECT_TRUE(
      WaitForJsonpath({"nginx", "before"}, "{.status.readyReplicas}", "3"))
      << last_jsonpath_;
  // Exactly once each: one Created per Nginx, one Updated for the change.
  EXPECT_EQ(EventCount("before", "Created"), 1);
  EXPECT_EQ(EventCount("during", "Created"), 1);
  EXPECT_EQ(EventCount("before", "Updated"), 1);
  EXPECT_EQ(EventCount("before", "DriftRepaired"), 0);
  EXPECT_EQ(second->CountLogLines("AlreadyExists"), 0) << second->Log();

  // A clean stop releases the Lease: a new replica takes over at once
  // rather than after the lease duration, and acts.
  ManagerProcess* third = StartReplica();
  ASSERT_TRUE(WaitFor(
      [&] { return third->CountLogLines("manager: caches synced") > 0; },
      absl::Seconds(60)))
      << third->Log();
  EXPECT_EQ(second->Stop(), std::optional<int>(0)) << second->Log();
  ASSERT_TRUE(WaitFor([&] { return Leading(third); }, absl::Seconds(60)))
      << third->Log();
  EXPECT_EQ(Jsonpath({"lease", "kcr-controller-manager", "-n", "default"},
                     "{.spec.leaseTransitions}"),
            "2");
  ASSERT_TRUE(Apply(NginxYaml("after", 1)));
  EXPECT_TRUE(
      WaitForJsonpath({"deployment", "after-deploy"}, "{.spec.replicas}", "1"))
      << last_jsonpath_ << third->Log();
  EXPECT_EQ(EventCount("after", "Created"), 1);
}

}  // namespace
}  // namespace kcr::e2e
