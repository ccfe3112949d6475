// The explorer against a controller with planted bugs: each bug is found
// by the class of perturbation that provokes it, reported with a
// reproduction that reruns exactly that point, and the controller with the
// bugs fixed passes every point.
#include "runtime/explorer/explorer.h"

#include <stdlib.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "test/runtime/explorer/planted_controller.h"

namespace kcr::explorer {
namespace {

using testing::PlantedBugs;
using testing::PlantedScenario;

ExplorerOptions Only(bool crash, bool api_errors, bool stale_view,
                     bool unobserved) {
  ExplorerOptions o;
  o.crash = crash;
  o.api_errors = api_errors;
  o.stale_view = stale_view;
  o.unobserved = unobserved;
  // The test decides what runs; a KCR_EXPLORE left in the environment for
  // another test must not narrow it.
  o.read_env = false;
  return o;
}

// Explores `scenario` and expects findings at points of `point_class`,
// among them one at `point` (the perturbation the bug is planted for), whose
// reproduction names the scenario, the point and the seed; then reruns that
// point alone, as KCR_EXPLORE would, and expects the same oracle to fail
// again. (Other findings may come from races a perturbation makes likely,
// not certain: those need not fail again on a rerun.)
void ExpectCaught(const Scenario& scenario, ExplorerOptions options,
                  const std::string& point_class, const std::string& point) {
  auto report = Explore(scenario, options);
  ASSERT_TRUE(report.ok()) << report.status();
  SCOPED_TRACE(report->ToString());
  // The reference run itself is clean: the bug needs the perturbation.
  ASSERT_FALSE(report->runs.empty());
  EXPECT_TRUE(report->runs[0].ok);
  EXPECT_GT(report->reference_writes.size(), 0u);
  // A finding of the class, by an oracle about the controller (not a run
  // that could not be set up).
  std::vector<Finding> found;
  for (const Finding& f : report->FindingsOf(point_class)) {
    EXPECT_NE(f.oracle, "setup") << f.ToString();
    if (f.oracle == "invariant" || f.oracle == "diverged" ||
        f.oracle == "not-converged") {
      found.push_back(f);
    }
  }
  ASSERT_FALSE(found.empty()) << "no " << point_class << " finding";
  const Finding* planted = nullptr;
  for (const Finding& f : found) {
    if (f.point.ToString() == point) planted = &f;
  }
  ASSERT_NE(planted, nullptr) << "no finding at " << point;
  const Finding& f = *planted;
  EXPECT_EQ(f.selection, absl::StrCat(scenario.name, ":", f.point.ToString(),
                                      ":seed=", options.seed));
  EXPECT_TRUE(absl::StrContains(f.reproduction,
                                absl::StrCat("KCR_EXPLORE=", f.selection)))
      << f.reproduction;
  EXPECT_TRUE(absl::StrContains(report->ToString(), f.reproduction));

  // The reproduction reruns exactly that point, and it fails again.
  ASSERT_EQ(setenv(kExploreEnv, f.selection.c_str(), 1), 0);
  ExplorerOptions rerun;
  auto again = Explore(scenario, rerun);
  unsetenv(kExploreEnv);
  ASSERT_TRUE(again.ok()) << again.status();
  SCOPED_TRACE(again->ToString());
  ASSERT_EQ(again->runs.size(), 2u);  // the reference, then the point
  EXPECT_EQ(again->runs[1].point.ToString(), f.point.ToString());
  ASSERT_FALSE(again->findings.empty());
  EXPECT_EQ(again->findings[0].point.ToString(), f.point.ToString());
  EXPECT_EQ(again->findings[0].oracle, f.oracle);
}

TEST(ExplorerTest, StaleViewCatchesAChildCreatedTwice) {
  PlantedBugs bugs;
  bugs.forget_created_child = true;
  ExpectCaught(PlantedScenario("planted-a", bugs),
               Only(false, false, true, false), "stale-view",
               "stale-view:secrets:step:1");
}

TEST(ExplorerTest, StaleViewAndUnobservedStateCatchADeleteOnAStaleList) {
  PlantedBugs bugs;
  bugs.delete_from_stale_list = true;
  ExpectCaught(PlantedScenario("planted-b", bugs),
               Only(false, false, true, false), "stale-view",
               "stale-view:configmaps:step:2");
  ExpectCaught(PlantedScenario("planted-b", bugs),
               Only(false, false, false, true), "unobserved",
               "unobserved:step:2:1");
}

TEST(ExplorerTest, CrashAfterWriteCatchesProgressKeptInMemory) {
  PlantedBugs bugs;
  bugs.progress_in_memory = true;
  ExpectCaught(PlantedScenario("planted-c", bugs),
               Only(true, false, false, false), "crash", "crash-after-write:1");
}

TEST(ExplorerTest, ApiErrorCatchesAConflictTakenAsFatal) {
  PlantedBugs bugs;
  bugs.conflict_is_fatal = true;
  ExpectCaught(PlantedScenario("planted-d", bugs),
               Only(false, true, false, false), "api-error",
               "error-409-on-write:2");
}

TEST(ExplorerTest, TheFixedControllerPassesEveryPoint) {
  ExplorerOptions options = Only(true, true, true, true);
  auto report = Explore(PlantedScenario("planted", {}), options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->ToString();
  // Every class had points, and they perturbed the runs.
  for (const char* c : {"crash", "api-error", "stale-view", "unobserved"}) {
    int points = 0, fired = 0;
    for (const PointRun& r : report->runs) {
      if (r.point.Class() != c) continue;
      ++points;
      fired += r.fired ? 1 : 0;
    }
    EXPECT_GT(points, 0) << c;
    EXPECT_EQ(fired, points) << c << "\n" << report->ToString();
  }
  // A crash point made a second Manager.
  bool restarted = false;
  for (const PointRun& r : report->runs) restarted |= r.managers > 1;
  EXPECT_TRUE(restarted);
}

TEST(ExplorerTest, AnotherScenarioSelectedRunsNothing) {
  ASSERT_EQ(setenv(kExploreEnv, "other:crash-after-write:1:seed=1", 1), 0);
  auto report = Explore(PlantedScenario("planted", {}));
  unsetenv(kExploreEnv);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->skipped);
  EXPECT_TRUE(report->runs.empty());
}

TEST(ExplorerTest, MalformedSelectionsAndScenariosAreErrors) {
  ASSERT_EQ(setenv(kExploreEnv, "planted:crash-after-write:0:seed=1", 1), 0);
  EXPECT_FALSE(Explore(PlantedScenario("planted", {})).ok());
  unsetenv(kExploreEnv);
  ExplorerOptions options;
  options.read_env = false;
  EXPECT_FALSE(Explore(PlantedScenario("Bad Name", {}), options).ok());
  Scenario none = PlantedScenario("planted", {});
  none.add_controllers = nullptr;
  EXPECT_FALSE(Explore(none, options).ok());
}

}  // namespace
}  // namespace kcr::explorer
