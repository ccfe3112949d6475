// Engine: the Reconciler behind one resource's handlers. Each reconcile
// takes the object from the cache, finds why it changed (kopf's
// detect_changing_cause), runs at most one of the handlers due for that
// cause (kopf's default lifecycle, asap), stores what came of it on the
// object (progress, results, the last handled state, the finalizer) in as
// few merge patches as it can, and returns when to look again.
//
// The controller around it gives what kopf's per-object queues give: one
// reconcile of an object at a time, backoff on errors, and the wake-ups
// the engine asks for (Result::RequeueAfter, the earliest delayed
// handler). A write of the engine's wakes the object again through the
// watch.
//
// Thread-safe: the controller's workers reconcile different objects at
// once.
#ifndef KCR_RUNTIME_HANDLERS_INTERNAL_ENGINE_H_
#define KCR_RUNTIME_HANDLERS_INTERNAL_ENGINE_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "base/clock.h"
#include "base/context.h"
#include "base/mutex.h"
#include "runtime/client/rest_client.h"
#include "runtime/controller/reconciler.h"
#include "runtime/events/event_recorder.h"
#include "runtime/handlers/internal/entry.h"
#include "runtime/handlers/internal/state.h"
#include "runtime/handlers/registry.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace kcr::handlers::internal {

// What discovery says about the resource.
struct ResourceInfo {
  api::GroupVersionResource gvr;
  bool namespaced = true;
  // Status is written through /status (and ignored by the main endpoint).
  bool status_subresource = false;
};

// kopf's causes of a change (GONE, FREE and NOOP run no handlers).
enum class Cause { kGone, kFree, kDelete, kCreate, kResume, kNoop, kUpdate };
std::string_view CauseName(Cause cause);

// kopf's detect_changing_cause, on what the engine read from the object:
// whether it is being deleted and holds the finalizer, whether it has a
// last handled state, whether its essence differs from it, and whether
// this is the first sight of it since the operator started.
Cause DetectCause(bool exists, bool being_deleted, bool has_finalizer,
                  bool has_last_handled, bool changed, bool initial);

struct EngineOptions {
  OperatorOptions operator_options;
  // Not owned. Null: the real clock.
  const Clock* clock = nullptr;
  // Not owned; writes the patches. Required.
  client::RestClient* client = nullptr;
  // May be null (no Events).
  std::shared_ptr<events::EventRecorder> recorder;
  // The object of a key as the cache has it (null when absent). Required.
  std::function<api::ObjectPtr(const controller::Request&)> get;
  // Not owned; may be null (no metrics). Families are shared by every
  // engine that records into the registry.
  prometheus::Registry* metrics = nullptr;
};

class Engine final : public controller::Reconciler {
 public:
  // `handlers` must outlive the engine. InvalidArgument for a duplicate
  // handler id or a missing client or getter.
  static absl::StatusOr<std::unique_ptr<Engine>> New(
      const ResourceHandlers& handlers, ResourceInfo info,
      EngineOptions options);
  ~Engine() override;

  absl::StatusOr<controller::Result> Reconcile(
      const controller::Request& request,
      controller::ReconcileContext& ctx) override;

  // What Reconcile does once it has the object (null: gone).
  absl::StatusOr<controller::Result> Process(const controller::Request& request,
                                             const api::ObjectPtr& object,
                                             const Context& ctx);

  // Whether any handler needs the finalizer for `object` (a non-optional
  // delete handler, or a daemon, whose filters match).
  bool RequiresFinalizer(const api::Object& object) const;

  // How a daemon that returned wakes its object (so that the finalizer it
  // held can go): the controller's queue. Null: the engine polls.
  void SetEnqueue(std::function<void(const controller::Request&)> enqueue)
      ABSL_LOCKS_EXCLUDED(enqueue_mu_);
  // Asks every daemon to stop, cancels their contexts after their
  // cancellation timeouts, and waits for them to return; no daemon starts
  // afterwards. For the operator's stop (and the destructor).
  void StopDaemons() ABSL_LOCKS_EXCLUDED(mu_, enqueue_mu_);
  // Daemons of `key` that have not returned (for tests).
  int RunningDaemons(const std::string& key) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Metrics;
  struct RunResult;
  // A timer of an object (kept in memory only, as kopf's).
  struct TimerState {
    bool seen = false;
    // When it is due (the idle time aside).
    absl::Time next;
    // Of the current series of failed tries.
    int retries = 0;
    std::optional<absl::Time> started;
  };
  // What the engine remembers of an object between reconciles.
  struct Memory {
    std::string uid;
    // Every cause of the first sight has been handled (kopf's
    // fully_handled_once): resume handlers are no longer mixed in.
    bool fully_handled_once = false;
    // The stale-cache guard: the version the engine's last write returned,
    // and the versions it wrote over; a cache copy older than the write
    // (or, for versions that are not numbers, one of those it wrote over)
    // is skipped.
    std::string written_version;
    std::vector<std::string> overwritten_versions;
    // Timers by handler id, and when the essence last changed (for idle).
    absl::flat_hash_map<std::string, TimerState> timers;
    bool essence_seen = false;
    size_t essence_hash = 0;
    absl::Time last_change;
  };
  class ObjectLogger;
  class DaemonRun;

  Engine(const ResourceHandlers& handlers, ResourceInfo info,
         EngineOptions options);

  using Entry = ResourceHandlers::Entry;
  // The change handlers of `cause` for `object` (kopf's
  // ChangingRegistry.iter_handlers): by kind, resume handlers mixed into
  // the first sight, field handlers when their field changed, filters.
  std::vector<const Entry*> SelectHandlers(Cause cause, bool initial,
                                           const rapidjson::Value* old_root,
                                           const rapidjson::Value* new_root,
                                           const api::Object& object) const;
  // What a cycle of change handlers came to.
  struct ChangeCycle {
    // Every handler of the cause finished (the state was stored, the
    // progress purged).
    bool done = false;
    // A handler ran.
    bool ran = false;
    // Until each unfinished handler is due (zero: now).
    std::vector<absl::Duration> delays;
  };
  // kopf's process_changing_cause for `selected` (not empty): loads their
  // progress (a malformed record reset), drops the records of handlers
  // not selected, runs the due one with the fewest retries (kopf's asap),
  // stores the records that changed and the result, and when all are
  // finished purges them; all of it into `patch`.
  ChangeCycle RunChangeHandlers(
      const Context& ctx, const api::ObjectPtr& object, Reason reason,
      const std::vector<const Entry*>& selected,
      const std::shared_ptr<const rapidjson::Document>& old_essence,
      const std::shared_ptr<const rapidjson::Document>& new_essence,
      absl::Time now, Logger& logger, rapidjson::Document& patch);
  // Runs `e` once (kopf's execute_handler_once): the strict timeout and
  // retries checks, the call (exceptions caught), the outcome with its
  // look-ahead checks; logs it and counts it in the metrics.
  RunResult Execute(const ResourceHandlers::Entry& e, HandlerContext& hctx,
                    Logger& logger, int retries_so_far, absl::Duration runtime);
  // Runs the first due timer of `object` when `may_run` and nothing ran
  // yet (sets *ran), merging its patch into `patch`; returns how long until
  // the next timer is due (nullopt: no timers).
  std::optional<absl::Duration> RunTimers(
      const Context& ctx, const std::string& key, const api::ObjectPtr& object,
      const std::shared_ptr<const rapidjson::Document>& essence, absl::Time now,
      bool may_run, Logger& logger, rapidjson::Document& patch, bool* ran);
  // `own` (a handler's patch: metadata and status only) under `patch`.
  static void MergeHandlerPatch(const Patch& own, rapidjson::Document& patch);
  client::Resource ObjectResource(const api::Object& object) const;
  // Starts the daemons `object` should have and stops those whose filters
  // no longer match; reaps the threads of daemons that returned.
  void SpawnDaemons(const std::string& key, const api::ObjectPtr& object)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Asks the daemons of `key` to stop; returns how many have not returned.
  int StopObjectDaemons(const std::string& key) ABSL_LOCKS_EXCLUDED(mu_);
  void Enqueue(const controller::Request& request)
      ABSL_LOCKS_EXCLUDED(enqueue_mu_);
  // Whether `object` is older than the engine's last write to it.
  bool IsStale(const api::Object& object) ABSL_LOCKS_EXCLUDED(mu_);
  // Records a write from `from` to `to` (versions).
  void RememberWrite(const std::string& key, const std::string& uid,
                     std::vector<std::string> from, const std::string& to)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Sends `patch` ({"metadata":..., "status":...}): status through /status
  // when the resource has the subresource. Returns the object after it
  // (null when it is gone). `finalizers`: the list to set, computed from
  // the latest object (written with its resourceVersion as a
  // precondition), or nullopt to leave them.
  absl::StatusOr<api::ObjectPtr> ApplyPatch(
      const Context& ctx, const api::ObjectPtr& object,
      rapidjson::Document& patch,
      const std::function<std::optional<std::vector<std::string>>(
          const api::Object&)>& finalizers);

  const ResourceHandlers& handlers_;
  const ResourceInfo info_;
  const EngineOptions options_;
  const Clock* const clock_;
  const StateStorage storage_;
  const std::string resource_name_;  // "<plural>.<group>", for logs/metrics
  std::unique_ptr<Metrics> metrics_;

  Mutex mu_;
  absl::flat_hash_map<std::string, Memory> memory_ ABSL_GUARDED_BY(mu_);
  // Daemons by "<key>\n<handler id>", running or returned and not reaped.
  absl::flat_hash_map<std::string, std::shared_ptr<DaemonRun>> daemons_
      ABSL_GUARDED_BY(mu_);
  // Asked to stop (the object went away or the operator stops), not yet
  // joined.
  std::vector<std::shared_ptr<DaemonRun>> stopping_ ABSL_GUARDED_BY(mu_);
  bool daemons_stopped_ ABSL_GUARDED_BY(mu_) = false;

  Mutex enqueue_mu_;
  std::function<void(const controller::Request&)> enqueue_
      ABSL_GUARDED_BY(enqueue_mu_);
};

}  // namespace kcr::handlers::internal

#endif  // KCR_RUNTIME_HANDLERS_INTERNAL_ENGINE_H_
