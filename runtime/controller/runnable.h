// Runnable: something the Manager runs for as long as it runs (a
// controller, a leader-elected loop, a server), controller-runtime's
// manager.Runnable with its LeaderElectionRunnable.
#ifndef KCR_RUNTIME_CONTROLLER_RUNNABLE_H_
#define KCR_RUNTIME_CONTROLLER_RUNNABLE_H_

#include <functional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "base/context.h"

namespace kcr::controller {

class Runnable {
 public:
  virtual ~Runnable() = default;

  // Runs until `ctx` is done, then stops what it started and returns OK.
  // An error return before that (or after, from a failed shutdown) stops
  // the Manager, which returns the error. Called at most once.
  virtual absl::Status Start(const Context& ctx) = 0;

  // Whether to run only while this process is the leader. Controllers say
  // yes; servers and caches say no.
  virtual bool NeedLeaderElection() const { return true; }

  // For logs and errors.
  virtual std::string name() const { return "runnable"; }
};

// A Runnable from a function.
class RunnableFunc final : public Runnable {
 public:
  using Func = std::function<absl::Status(const Context&)>;
  RunnableFunc(std::string name, Func fn, bool need_leader_election = false)
      : name_(std::move(name)),
        fn_(std::move(fn)),
        need_leader_election_(need_leader_election) {}

  absl::Status Start(const Context& ctx) override { return fn_(ctx); }
  bool NeedLeaderElection() const override { return need_leader_election_; }
  std::string name() const override { return name_; }

 private:
  const std::string name_;
  const Func fn_;
  const bool need_leader_election_;
};

}  // namespace kcr::controller

#endif  // KCR_RUNTIME_CONTROLLER_RUNNABLE_H_
