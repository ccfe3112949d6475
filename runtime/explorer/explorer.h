// The controller explorer: runs a Scenario's controllers against the
// in-process local API server, first undisturbed (the reference run), then
// once per perturbation point enumerated from it (point.h): a crash right
// after each of the controllers' writes, an API error on each write, a
// stale view of each kind at each step, an unobserved intermediate state.
// Every run has a fresh server of its own and checks the oracles:
//   - converged: after every step the controllers go quiet (below) within
//     convergence_timeout;
//   - invariants: every Scenario invariant holds after every step;
//   - same states: the normalised state (end_state.h) after every step and
//     at the end equals the reference run's (after a step whose view was
//     stale, or until the user writes again an object whose event was
//     dropped, only later states are compared);
//   - no hot loop: once converged at the end, the controllers make at most
//     hot_loop_max_writes writes during hot_loop_window;
//   - no failure: every Manager's Start returns OK when stopped (one that
//     was crashed on purpose excepted).
//
//   auto report = explorer::Explore(MyScenario());
//   ASSERT_TRUE(report.ok()) << report.status();
//   EXPECT_TRUE(report->ok()) << report->ToString();
//
// Converged means: no write to the server (by anyone, Events and Leases
// left out) for `quiet`; the Manager leads (its controllers started);
// every watch of the Manager has delivered every write to its collection
// (its events or a later bookmark: explorer runs' servers send bookmarks
// every 50 ms); and every controller's queue is empty with no reconcile in
// flight (the Manager's workqueue_depth and
// controller_runtime_active_workers); with no watch held back.
//
// Identities: each Manager of a run gets its own User-Agent,
// "kcr-explorer/<scenario>/<run>/m<n> kcr" (n counts the Managers of the
// run, a crashed one's successor n+1), the user's steps
// "kcr-explorer/<scenario>/<run>/user"; the server's write log tells their
// writes apart from each other's and from its built-in controllers'. The
// controllers' writes are those of the run's Managers, Events and Leases
// left out (their timing is not the controllers' logic).
//
// Reproducing one point: every finding carries its Selection
// ("nginx:crash-after-write:3:seed=42"). With the environment variable
// KCR_EXPLORE set to one, Explore runs the reference run and that point
// alone (and nothing for another scenario), so
//   bazel test //my:test
//   --test_env=KCR_EXPLORE=nginx:crash-after-write:3:seed=42
// reruns exactly the failing point.
//
// Thread-safe (each call runs on its own servers).
#ifndef KCR_RUNTIME_EXPLORER_EXPLORER_H_
#define KCR_RUNTIME_EXPLORER_EXPLORER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "runtime/explorer/end_state.h"
#include "runtime/explorer/point.h"
#include "runtime/explorer/scenario.h"

namespace kcr::explorer {

// The environment variable that selects one point (point.h's Selection).
inline constexpr char kExploreEnv[] = "KCR_EXPLORE";

struct ExplorerOptions {
  // Fixes which points are sampled (max_points) and the order they run in.
  uint64_t seed = 1;
  // Runs at once, each on its own in-process server.
  int parallelism = 2;
  // 0: every point; else a sample of this many, drawn with `seed`.
  int max_points = 0;
  // The point classes to enumerate.
  bool crash = true;
  bool api_errors = true;
  bool stale_view = true;
  bool unobserved = true;
  // Run only this point (Point::ToString form); "" for all. KCR_EXPLORE,
  // when set and read_env, wins.
  std::string only;
  bool read_env = true;

  absl::Duration quiet = absl::Milliseconds(300);
  absl::Duration convergence_timeout = absl::Seconds(30);
  // How long a stale view lasts after the step that follows its own began.
  absl::Duration hold_for = absl::Seconds(1);
  absl::Duration hot_loop_window = absl::Milliseconds(500);
  int hot_loop_max_writes = 2;
  // Each Manager's graceful_shutdown_timeout.
  absl::Duration shutdown_timeout = absl::Seconds(5);
};

// One oracle that failed at one point.
struct Finding {
  Point point;
  // "not-converged", "invariant", "diverged", "hot-loop", "manager-failed",
  // "step-failed", "setup".
  std::string oracle;
  std::string message;
  // The Selection that reruns the point ("nginx:crash-after-write:3:seed=1").
  std::string selection;
  // A command line that reruns it (bazel test ... --test_env=KCR_EXPLORE=...
  // inside a Bazel test, else KCR_EXPLORE=... <program>).
  std::string reproduction;

  // "FAIL <point> [<oracle>] <message>\n  reproduce: <reproduction>"
  std::string ToString() const;
};

struct PointRun {
  Point point;
  absl::Duration wall;
  // Whether the perturbation happened (the K-th write came, the error rule
  // fired, ...).
  bool fired = false;
  int managers = 0;
  int controller_writes = 0;
  bool ok = true;
};

struct Report {
  std::string scenario;
  uint64_t seed = 0;
  // The reference run's controllers' writes, one line each
  // ("3 patch configmaps default/p by m1").
  std::vector<std::string> reference_writes;
  EndState reference_state;
  // The reference run first.
  std::vector<PointRun> runs;
  std::vector<Finding> findings;
  absl::Duration wall;
  // Set when KCR_EXPLORE selected another scenario: nothing ran.
  bool skipped = false;

  bool ok() const { return findings.empty(); }
  // The findings at points of `point_class` (Point::Class()).
  std::vector<Finding> FindingsOf(const std::string& point_class) const;
  // A summary line, then every finding.
  std::string ToString() const;
};

// Explores `scenario`. An error only when the scenario is malformed or the
// KCR_EXPLORE/`only` point does not parse; what goes wrong in a run is a
// Finding.
absl::StatusOr<Report> Explore(const Scenario& scenario,
                               ExplorerOptions options = {});

}  // namespace kcr::explorer

#endif  // KCR_RUNTIME_EXPLORER_EXPLORER_H_
