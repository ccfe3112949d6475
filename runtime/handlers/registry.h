// Registry: kopf's programming model on kcr. Handlers are registered per
// resource and per kind of event; the engine runs them on kcr's shared
// informers and work queues, stores their progress on the objects
// themselves, and retries them as kopf does.
//
//   handlers::Registry registry;
//   auto& sd = registry.For({"example.org", "v1", "simpledeployments"});
//   sd.OnCreate("create_fn", [](handlers::HandlerContext& ctx) {
//     ...                                   // make the children
//     return handlers::Outcome::Value(R"({"children": ["..."]})");
//   });
//   sd.OnField("sleepytime_fn", "spec.sleepytime", UpdateFn);
//   sd.OnDelete("delete_fn", DeleteFn);     // the object keeps a finalizer
//                                           // until this succeeds
//   registry.OnStartup("configure", ConfigureFn);
//   KCR_RETURN_IF_ERROR(handlers::AddToManager(registry, mgr));
//   mgr.Start(ctx);
//
// or, as `kopf run`, handlers::RunOperator(registry, options, ctx), which
// logs in, runs the startup handlers, then everything else, then the
// cleanup handlers.
//
// Semantics (docs/handlers.md has kopf's, row by row):
//  - create: the object has no last handled state; update: its essence (all
//    but status and the metadata that is not labels or annotations) differs
//    from the last handled one; delete: it is being deleted and carries the
//    operator's finalizer; resume: the first sight of an already handled
//    object after the operator started (mixed in with update handlers when
//    it also changed, as kopf does). Field handlers run on create and on
//    update when their field changed.
//  - The handlers of one cause run in registration order, one at a time per
//    object (never two handlers of one object at once); a handler that
//    failed is retried (after its delay or backoff) without running again
//    the ones that succeeded. When all succeeded (or failed for good), the
//    object's new state is stored as its last handled state and their
//    progress is dropped.
//  - The progress (started, retries, delayed, success, failure, message)
//    and the last handled state are stored on the object (annotations under
//    OperatorOptions::prefix, or its status), so a restarted operator
//    neither repeats a handler that succeeded nor loses a pending retry.
//  - Handlers that return a value (change handlers, timers and daemons, as
//    kopf's results delivery) have it stored under status.<handler id>.
#ifndef KCR_RUNTIME_HANDLERS_REGISTRY_H_
#define KCR_RUNTIME_HANDLERS_REGISTRY_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/meta/group_version.h"
#include "api/object.h"
#include "base/context.h"
#include "runtime/client/rest_config.h"
#include "runtime/controller/manager.h"
#include "runtime/handlers/context.h"
#include "runtime/handlers/outcome.h"

namespace kcr::handlers {

// A label or annotation filter: the key is present, absent, or has a value.
class MetaFilter {
 public:
  static MetaFilter Present() { return MetaFilter(Kind::kPresent, ""); }
  static MetaFilter Absent() { return MetaFilter(Kind::kAbsent, ""); }
  static MetaFilter Equals(std::string value) {
    return MetaFilter(Kind::kEquals, std::move(value));
  }
  bool Matches(std::optional<std::string_view> value) const;

 private:
  enum class Kind { kPresent, kAbsent, kEquals };
  MetaFilter(Kind kind, std::string value)
      : kind_(kind), value_(std::move(value)) {}
  Kind kind_;
  std::string value_;
};

// Which objects a handler runs for; every condition must hold.
struct Filters {
  std::map<std::string, MetaFilter> labels;
  std::map<std::string, MetaFilter> annotations;
  // kopf's `when=`: a predicate on the object. Null: any.
  std::function<bool(const api::Object&)> when;

  bool Matches(const api::Object& object) const;
};

// What a handler does with an arbitrary error (not a Temporary or Permanent
// one): kopf's ErrorsMode.
enum class ErrorsMode {
  kTemporary,  // retry after the backoff (kopf's default)
  kPermanent,  // fail for good
  kIgnored,    // log it and count the handler as done
};

struct HandlerOptions {
  // Tries before the handler fails for good; unset: no limit (kopf's).
  std::optional<int> retries;
  // Since the first try; past it the handler fails for good. Unset: none.
  std::optional<absl::Duration> timeout;
  // The delay before retrying an arbitrary error. Unset: the operator's
  // default (60 s, kopf's settings.execution.default_backoff).
  std::optional<absl::Duration> backoff;
  ErrorsMode errors = ErrorsMode::kTemporary;
  Filters filters;
  // Delete handlers only: run when the object is deleted, but do not hold
  // it with a finalizer (kopf's optional=True).
  bool optional = false;
};

struct TimerOptions {
  // Between the end of one run and the next (kopf's interval).
  absl::Duration interval = absl::Seconds(60);
  // Run only after the object has not changed for this long (kopf's idle).
  absl::Duration idle = absl::ZeroDuration();
  // Before the first run after the object is seen.
  absl::Duration initial_delay = absl::ZeroDuration();
  Filters filters;
};

struct DaemonOptions {
  // Before the daemon starts after the object is seen.
  absl::Duration initial_delay = absl::ZeroDuration();
  // After the stop flag is raised, how long the daemon may take before its
  // ctx() is cancelled; then the engine waits for it to return.
  absl::Duration cancellation_timeout = absl::Seconds(60);
  // Restart the daemon after it returned (with this delay), while the
  // object exists (kopf's daemons that exit are not restarted unless they
  // fail: a failed daemon is restarted after the backoff).
  absl::Duration backoff = absl::Seconds(60);
  Filters filters;
};

struct ActivityOptions {
  // Tries before giving up (then the operator does not start); unset: no
  // limit.
  std::optional<int> retries;
  absl::Duration backoff = absl::Seconds(60);
};

using Handler = std::function<Outcome(HandlerContext&)>;
using EventHandler = std::function<void(EventContext&)>;
using Daemon = std::function<Outcome(DaemonContext&)>;
using Activity = std::function<Outcome(ActivityContext&)>;
// A login handler returns the connection to use (kopf's ConnectionInfo).
using LoginHandler =
    std::function<absl::StatusOr<client::Config>(ActivityContext&)>;
// A probe returns a JSON value shown under its id in /healthz's detail.
using Probe = std::function<absl::StatusOr<std::string>(ActivityContext&)>;

// The handlers of one resource.
class ResourceHandlers {
 public:
  // Ids name the handler in its progress record, in status.<id> and in
  // logs; unique per resource (AddToManager fails on a duplicate).
  ResourceHandlers& OnCreate(std::string id, Handler fn,
                             HandlerOptions options = {});
  ResourceHandlers& OnUpdate(std::string id, Handler fn,
                             HandlerOptions options = {});
  ResourceHandlers& OnDelete(std::string id, Handler fn,
                             HandlerOptions options = {});
  ResourceHandlers& OnResume(std::string id, Handler fn,
                             HandlerOptions options = {});
  // When `field` (dotted: "spec.sleepytime") changed, on create or update;
  // old_value() and new_value() are the field's.
  ResourceHandlers& OnField(std::string id, std::string field, Handler fn,
                            HandlerOptions options = {});
  // Every watch event, as it comes; no state, no retries; errors logged.
  ResourceHandlers& OnEvent(std::string id, EventHandler fn,
                            Filters filters = {});
  ResourceHandlers& OnTimer(std::string id, Handler fn,
                            TimerOptions options = {});
  ResourceHandlers& OnDaemon(std::string id, Daemon fn,
                             DaemonOptions options = {});

  struct Entry;  // the engine's
  const std::vector<Entry>& entries() const { return entries_; }
  const api::GroupVersionResource& gvr() const { return gvr_; }

  explicit ResourceHandlers(api::GroupVersionResource gvr);
  ~ResourceHandlers();
  ResourceHandlers(ResourceHandlers&&) noexcept;

 private:
  api::GroupVersionResource gvr_;
  std::vector<Entry> entries_;
};

// Where the handlers' state lives and how the operator behaves.
struct OperatorOptions {
  // The prefix of the annotations that hold the last handled state
  // ("<prefix>/last-handled-configuration") and each handler's progress
  // ("<prefix>/<handler id>"), and the finalizer's name
  // ("<prefix>/handlers"). Two operators with different prefixes may
  // handle the same objects.
  std::string prefix = "kcr.dev";
  // Keep the progress in status.<status_field>.progress instead of
  // annotations (the last handled state stays an annotation, as kopf's).
  bool progress_in_status = false;
  std::string status_field = "kcr";
  // Worker threads per resource (objects handled at once).
  int workers = 4;
  // Delay before retrying an arbitrary error, unless the handler says.
  absl::Duration default_backoff = absl::Seconds(60);
  // The least level of the per-object logger that is posted as an Event.
  Logger::Level posting_level = Logger::Level::kInfo;
  // Only these namespaces ("" = all), as `kopf run --namespace`.
  std::string namespace_;
  // The name of the controllers and the Event source ("kcr-handlers").
  std::string name = "kcr-handlers";
};

class Registry {
 public:
  explicit Registry(OperatorOptions options = {});
  ~Registry();

  // The handlers of `gvr` (made on first use). The resource's scope comes
  // from discovery when the operator starts.
  ResourceHandlers& For(const api::GroupVersionResource& gvr);
  // The handlers of T's resource (T::kGroup, kVersion, kPlural).
  template <typename T>
  ResourceHandlers& For() {
    return For(api::GroupVersionResource{T::kGroup, T::kVersion, T::kPlural});
  }

  // Run before any watch starts; every one must succeed (retried as its
  // options say) or the operator does not start.
  Registry& OnStartup(std::string id, Activity fn,
                      ActivityOptions options = {});
  // The first that returns a Config wins; none: the runtime's default chain
  // (kubeconfig, in-cluster, exec plugins). Used by RunOperator only.
  Registry& OnLogin(std::string id, LoginHandler fn);
  // Named checks served in /healthz (kopf's liveness endpoint).
  Registry& OnProbe(std::string id, Probe fn);
  // Run once when the operator stops (SIGTERM included), before it exits.
  Registry& OnCleanup(std::string id, Activity fn,
                      ActivityOptions options = {});

  const OperatorOptions& options() const { return options_; }

  struct Activities;  // the engine's
  const Activities& activities() const { return *activities_; }
  const std::map<std::string, ResourceHandlers>& resources() const {
    return resources_;
  }

 private:
  OperatorOptions options_;
  std::map<std::string, ResourceHandlers> resources_;
  std::unique_ptr<Activities> activities_;
};

// Runs the startup handlers (before returning: the Manager has not started
// its informers yet), then adds a controller per resource, the probes, and
// a Runnable that runs the cleanup handlers when the Manager stops. A
// resource that discovery does not find (its CRD not installed yet, the
// server unreachable) is no error: it is logged once, and a Runnable asks
// again with backoff (1 s doubling to 30 s, on the Manager's clock) until
// it is served, then adds its controller, or returns when the Manager
// stops. The registry must outlive the Manager. Errors: a startup handler
// that failed for good, a duplicate handler id, and `ctx`'s error
// (kCancelled, kDeadlineExceeded) when it ends first.
// `ctx` bounds the discovery and the startup handlers' retries (a startup
// handler that never succeeds cannot hold a stopping process), and is the
// startup handlers' ActivityContext::ctx(); pass the one the Manager will
// be started with.
absl::Status AddToManager(const Registry& registry, controller::Manager& mgr,
                          const Context& ctx = Context::Background());

struct RunOptions {
  // The connection; unset: the login handlers', else the runtime's default
  // chain (client::BuildConfig).
  std::optional<client::Config> config;
  controller::ManagerOptions manager;
};

// `kopf run`: logs in, makes a Manager, AddToManager (which runs the
// startup handlers, bounded by `ctx`), runs until `ctx` ends or the
// Manager fails, and returns Start's status. Once the startup handlers all
// succeeded, the cleanup handlers run exactly once when it stops, also
// when it stops before the caches synced (AddToManager alone runs them
// only from a Runnable, which then never starts). When a startup handler
// fails or `ctx` ends during startup, they do not run (kopf's too).
absl::Status RunOperator(const Registry& registry, const RunOptions& options,
                         const Context& ctx);

}  // namespace kcr::handlers

#endif  // KCR_RUNTIME_HANDLERS_REGISTRY_H_
