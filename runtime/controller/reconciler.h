// Reconciler: what a controller calls for every object that needs attention
// (controller-runtime's pkg/reconcile).
//
// A reconciler is level-triggered: it is told only which object to look at
// (a Request), reads the object's current state (from the cache), makes the
// world match it, and returns what should happen next (a Result):
//
//   Result::Done()             nothing more; the rate limiter forgets the key
//   Result::Requeue()          again, after the rate limiter's backoff
//   Result::RequeueAfter(d)    again after `d` (the backoff is reset)
//   an error Status            again, after the rate limiter's backoff
//
// A key is never reconciled by two workers of one controller at once.
#ifndef KCR_RUNTIME_CONTROLLER_RECONCILER_H_
#define KCR_RUNTIME_CONTROLLER_RECONCILER_H_

#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "base/context.h"

namespace kcr::controller {

// The object to reconcile: its namespace ("" when cluster-scoped) and name.
struct Request {
  std::string namespace_;
  std::string name;

  // The object's key in the cache: "namespace/name", or "name" when the
  // namespace is empty (client-go's MetaNamespaceKey; controller-runtime's
  // NamespacedName would print "/name"), so a lister finds the object by
  // it.
  std::string ToString() const;

  // The Request for `object`.
  static Request For(const api::Object& object) {
    return Request{std::string(object.namespace_()),
                   std::string(object.name())};
  }

  friend bool operator==(const Request& a, const Request& b) {
    return a.namespace_ == b.namespace_ && a.name == b.name;
  }
  friend bool operator!=(const Request& a, const Request& b) {
    return !(a == b);
  }
  friend bool operator<(const Request& a, const Request& b) {
    return std::tie(a.namespace_, a.name) < std::tie(b.namespace_, b.name);
  }
  template <typename H>
  friend H AbslHashValue(H h, const Request& r) {
    return H::combine(std::move(h), r.namespace_, r.name);
  }
  friend std::ostream& operator<<(std::ostream& os, const Request& r) {
    return os << r.ToString();
  }
};

// What happens after a successful reconcile.
struct Result {
  // Reconcile again after the rate limiter's delay.
  bool requeue = false;
  // When > 0: reconcile again after this long (wins over `requeue`).
  absl::Duration requeue_after = absl::ZeroDuration();

  static Result Done() { return Result{}; }
  static Result Requeue() { return Result{true, absl::ZeroDuration()}; }
  static Result RequeueAfter(absl::Duration after) {
    return Result{false, after};
  }

  bool IsZero() const {
    return !requeue && requeue_after == absl::ZeroDuration();
  }
  friend bool operator==(const Result& a, const Result& b) {
    return a.requeue == b.requeue && a.requeue_after == b.requeue_after;
  }
};

// What a reconcile runs with: the stop signal and the names for its logs.
// Valid for the duration of one Reconcile call. Not thread-safe beyond
// that one call; `ctx()` itself may be handed to other threads.
class ReconcileContext {
 public:
  ReconcileContext(Context ctx, std::string_view controller,
                   const Request& request, std::string reconcile_id);

  // Done when the controller gives up waiting for in-flight reconciles
  // (its shutdown deadline passed). Pass it to every blocking call.
  const Context& ctx() const { return ctx_; }
  // The controller's name.
  const std::string& controller() const { return controller_; }
  // A random UUID naming this reconcile in logs.
  const std::string& reconcile_id() const { return reconcile_id_; }
  // "controller=<name> namespace=<ns> name=<name> reconcileID=<uuid>", to
  // start every log line of the reconcile with.
  const std::string& log_prefix() const { return log_prefix_; }

 private:
  Context ctx_;
  std::string controller_;
  std::string reconcile_id_;
  std::string log_prefix_;
};

// The seam a controller calls. Implementations must be thread-safe when
// the controller runs more than one worker (different Requests may be
// reconciled at once; one Request never is). An exception escaping
// Reconcile is caught by the controller, counted as a panic and treated as
// an error.
class Reconciler {
 public:
  virtual ~Reconciler() = default;
  virtual absl::StatusOr<Result> Reconcile(const Request& request,
                                           ReconcileContext& ctx) = 0;
};

// A Reconciler from a function (controller-runtime's reconcile.Func).
class ReconcilerFunc final : public Reconciler {
 public:
  using Func =
      std::function<absl::StatusOr<Result>(const Request&, ReconcileContext&)>;
  explicit ReconcilerFunc(Func fn) : fn_(std::move(fn)) {}
  absl::StatusOr<Result> Reconcile(const Request& request,
                                   ReconcileContext& ctx) override {
    return fn_(request, ctx);
  }

 private:
  Func fn_;
};

// A random version-4 UUID, as controller-runtime's reconcileID.
std::string NewReconcileId();

}  // namespace kcr::controller

#endif  // KCR_RUNTIME_CONTROLLER_RECONCILER_H_
