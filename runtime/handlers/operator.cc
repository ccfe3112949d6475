// AddToManager and RunOperator: the handlers on a controller::Manager.
#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "api/errors/errors.h"
#include "api/json/json_util.h"
#include "base/status_macros.h"
#include "base/str_cat.h"
#include "base/string_view.h"
#include "glog/logging.h"
#include "rapidjson/document.h"
#include "runtime/cache/processor_listener.h"
#include "runtime/controller/builder.h"
#include "runtime/controller/runnable.h"
#include "runtime/handlers/internal/engine.h"
#include "runtime/handlers/internal/entry.h"
#include "runtime/handlers/registry.h"

namespace kcr::handlers {
namespace {

using internal::Engine;
using internal::ResourceInfo;

// The resource's scope and status subresource, from the server's
// discovery document of its group version.
absl::StatusOr<ResourceInfo> Discover(client::RestClient& client,
                                      const api::GroupVersionResource& gvr,
                                      const Context& ctx) {
  const std::string path = gvr.group.empty()
                               ? Cat("/api/", gvr.version)
                               : Cat("/apis/", gvr.group, "/", gvr.version);
  absl::StatusOr<std::string> body = client.GetRaw(ctx, path);
  if (!body.ok()) {
    return absl::Status(body.status().code(),
                        Cat("discovery of ", gvr.resource, " at ", path, ": ",
                            ToStd(body.status().message())));
  }
  rapidjson::Document doc;
  KCR_RETURN_IF_ERROR(json::ParseJson(*body, &doc));
  ResourceInfo info;
  info.gvr = gvr;
  bool found = false;
  auto resources =
      doc.IsObject() ? doc.FindMember("resources") : doc.MemberEnd();
  if (doc.IsObject() && resources != doc.MemberEnd() &&
      resources->value.IsArray()) {
    const std::string status_name = Cat(gvr.resource, "/status");
    for (const rapidjson::Value& r : resources->value.GetArray()) {
      const std::string name = json::StringMember(r, "name");
      if (name == gvr.resource) {
        found = true;
        auto ns = r.FindMember("namespaced");
        info.namespaced =
            ns == r.MemberEnd() || !ns->value.IsBool() || ns->value.GetBool();
      } else if (name == status_name) {
        info.status_subresource = true;
      }
    }
  }
  if (!found) {
    return absl::NotFoundError(
        Cat("the server does not serve ", gvr.resource, " in ", path));
  }
  return info;
}

// Runs `fn` until it succeeds, as kopf runs activities: a temporary error
// after its delay, any other error after the backoff, up to the retries;
// a permanent error (or the retries exhausted) fails for good.
// `ctx` ends the retries (its error is returned) and is the handler's.
absl::Status RunActivity(const Registry::Activities::Activity& activity,
                         client::RestClient* client, const Clock* clock,
                         const Context& ctx) {
  for (int retry = 0;; ++retry) {
    if (ctx.done()) return ctx.Err();
    if (activity.options.retries && retry >= *activity.options.retries) {
      return absl::DeadlineExceededError(
          Cat("activity '", activity.id, "' has exceeded ", retry, " retries"));
    }
    ActivityContext actx(client, ctx, retry);
    Outcome outcome;
    try {
      outcome = activity.fn(actx);
    } catch (const TemporaryError& e) {
      outcome = Outcome::Temporary(e.what(), e.delay());
    } catch (const PermanentError& e) {
      outcome = Outcome::Permanent(e.what());
    } catch (const std::exception& e) {
      outcome = Outcome(absl::UnknownError(e.what()));
    } catch (...) {
      outcome = Outcome(absl::UnknownError("an unknown exception"));
    }
    absl::Duration delay = activity.options.backoff;
    switch (outcome.kind()) {
      case Outcome::Kind::kSuccess:
        LOG(INFO) << "Activity '" << activity.id << "' succeeded.";
        return absl::OkStatus();
      case Outcome::Kind::kPermanent:
        LOG(ERROR) << "Activity '" << activity.id
                   << "' failed permanently: " << outcome.message();
        return absl::FailedPreconditionError(
            Cat("activity '", activity.id,
                "' failed permanently: ", outcome.message()));
      case Outcome::Kind::kTemporary:
        delay = outcome.delay();
        LOG(ERROR) << "Activity '" << activity.id
                   << "' failed temporarily: " << outcome.message();
        break;
      case Outcome::Kind::kError:
        LOG(ERROR) << "Activity '" << activity.id
                   << "' failed with an exception and will try again in "
                   << absl::ToDoubleSeconds(delay)
                   << " seconds: " << outcome.message();
        break;
    }
    absl::Status slept = clock->Sleep(ctx, delay);
    if (!slept.ok()) return slept;
  }
}

// A probe's value as compact JSON (one line); text that is not JSON as it
// is.
std::string CompactJson(std::string text) {
  rapidjson::Document doc;
  if (!json::ParseJson(text, &doc).ok()) return text;
  absl::StatusOr<std::string> compact = json::JsonToString(doc);
  return compact.ok() ? *std::move(compact) : text;
}

// A logger for event handlers: the object's prefix, no Events.
class EventLogger final : public Logger {
 public:
  explicit EventLogger(const api::Object& object)
      : prefix_(object.namespace_().empty()
                    ? Cat("[", object.name(), "] ")
                    : Cat("[", object.namespace_(), "/", object.name(), "] ")) {
  }
  void Log(Level level, std::string_view message) override {
    if (level >= Level::kWarning) {
      LOG(WARNING) << prefix_ << message;
    } else {
      VLOG(level == Level::kDebug ? 4 : 2) << prefix_ << message;
    }
  }
  std::string_view prefix() const override { return prefix_; }

 private:
  const std::string prefix_;
};

// The cleanup handlers, run at most once (kopf runs them once as the
// operator exits): by the Runnable when the Manager stops, or, when the
// Manager stopped before its Runnables started, by RunOperator after Start
// returned.
class Cleanup {
 public:
  Cleanup(const Registry& registry, client::RestClient* client,
          const Clock* clock, absl::Duration timeout)
      : registry_(registry),
        client_(client),
        clock_(clock),
        timeout_(timeout) {}

  // Runs every cleanup handler unless they ran (or run) already. The
  // operator's context has ended by now: they get a context of their own,
  // bounded by the graceful shutdown timeout.
  void RunOnce() {
    if (claimed_.exchange(true)) return;
    auto [cleanup_ctx, cancel] =
        WithTimeout(Context::Background(), timeout_, clock_);
    for (const auto& activity : registry_.activities().cleanup) {
      absl::Status s = RunActivity(activity, client_, clock_, cleanup_ctx);
      if (!s.ok()) LOG(ERROR) << "cleanup handler " << activity.id << ": " << s;
    }
    cancel();
  }

 private:
  const Registry& registry_;
  client::RestClient* const client_;
  const Clock* const clock_;
  const absl::Duration timeout_;
  std::atomic<bool> claimed_{false};
};

// Runs the cleanup handlers once the Manager stops.
class CleanupRunnable final : public controller::Runnable {
 public:
  explicit CleanupRunnable(std::shared_ptr<Cleanup> cleanup)
      : cleanup_(std::move(cleanup)) {}

  absl::Status Start(const Context& ctx) override {
    WaitUntilDone(ctx);
    cleanup_->RunOnce();
    return absl::OkStatus();
  }
  bool NeedLeaderElection() const override { return false; }
  std::string name() const override { return "handlers-cleanup"; }

 private:
  const std::shared_ptr<Cleanup> cleanup_;
};

std::string ControllerName(const OperatorOptions& op,
                           const api::GroupVersionResource& gvr) {
  return gvr.group.empty() ? Cat(op.name, "-", gvr.resource)
                           : Cat(op.name, "-", gvr.resource, ".", gvr.group);
}

// The handlers' ids must be unique per resource with change handlers (the
// engine's check, made before anything has started).
absl::Status ValidateRegistry(const Registry& registry) {
  for (const auto& [key, handlers] : registry.resources()) {
    std::set<std::string> ids;
    for (const ResourceHandlers::Entry& e : handlers.entries()) {
      if (e.kind == ResourceHandlers::Entry::Kind::kEvent) continue;
      if (!ids.insert(e.id).second) {
        return absl::InvalidArgumentError(
            Cat("handlers of ", handlers.gvr().resource, ": the id \"", e.id,
                "\" is used twice"));
      }
    }
  }
  return absl::OkStatus();
}

// Adds the controller (when there are change handlers), the daemons'
// stopper and the event handlers of one served resource. Before or after
// the Manager started: Manager::Add starts what is added after Start at
// once, the leader's Runnables only while leading.
absl::Status AddResource(const ResourceHandlers& handlers,
                         const ResourceInfo& info, const OperatorOptions& op,
                         controller::Manager& mgr,
                         std::shared_ptr<events::EventRecorder> recorder) {
  client::RestClient* client = mgr.GetClient();
  const Clock* clock = mgr.clock() != nullptr ? mgr.clock() : Clock::Real();
  const client::Resource resource =
      info.namespaced ? client::Resource::Namespaced(info.gvr, op.namespace_)
                      : client::Resource::ClusterScoped(info.gvr);
  cache::SharedIndexInformer* informer =
      mgr.GetInformerFactory()->InformerFor(resource);
  // kopf touches the objects only for change handlers: a resource with
  // event handlers alone gets no controller (and no state written).
  bool changes = false;
  for (const ResourceHandlers::Entry& e : handlers.entries()) {
    changes |= e.kind != ResourceHandlers::Entry::Kind::kEvent;
  }
  if (changes) {
    internal::EngineOptions options;
    options.operator_options = op;
    options.clock = clock;
    options.client = client;
    options.recorder = recorder;
    options.get = [informer](const controller::Request& request) {
      return informer->GetIndexer()->GetByKey(request.ToString());
    };
    options.metrics = &mgr.GetMetricsRegistry();
    KCR_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine,
                         Engine::New(handlers, info, std::move(options)));
    controller::ControllerOptions copts;
    copts.max_concurrent_reconciles = op.workers;
    std::shared_ptr<Engine> shared(std::move(engine));
    KCR_ASSIGN_OR_RETURN(controller::Controller * c,
                         controller::ControllerBuilder(mgr)
                             .For(resource)
                             .Named(ControllerName(op, info.gvr))
                             .WithOptions(std::move(copts))
                             .Build(shared));
    // A daemon that returns wakes its object through the queue, so a
    // deletion waiting for it goes on at once.
    shared->SetEnqueue(
        [c](const controller::Request& request) { c->queue().Add(request); });
    bool daemons = false;
    for (const ResourceHandlers::Entry& e : handlers.entries()) {
      daemons |= e.kind == ResourceHandlers::Entry::Kind::kDaemon;
    }
    if (daemons) {
      // The daemons stop (and are waited for) when the Manager stops.
      KCR_RETURN_IF_ERROR(mgr.Add(std::make_unique<controller::RunnableFunc>(
          Cat("handlers-daemons-", info.gvr.resource),
          [shared](const Context& ctx) {
            WaitUntilDone(ctx);
            shared->StopDaemons();
            return absl::OkStatus();
          })));
    }
  }

  // Event handlers: straight from the informer, no state, no retries.
  for (const ResourceHandlers::Entry& e : handlers.entries()) {
    if (e.kind != ResourceHandlers::Entry::Kind::kEvent) continue;
    auto funcs = std::make_shared<cache::ResourceEventHandlerFuncs>();
    auto deliver = [&e, client, recorder, resource](
                       const api::ObjectPtr& object, std::string type) {
      if (object == nullptr || !e.options.filters.Matches(*object)) return;
      EventLogger logger(*object);
      EventContext ectx(object,
                        resource.InNamespace(std::string(object->namespace_())),
                        client, recorder.get(), &logger, Context::Background(),
                        std::move(type));
      try {
        e.event_handler(ectx);
      } catch (const std::exception& ex) {
        LOG(ERROR) << logger.prefix() << "Handler '" << e.id
                   << "' failed with an exception: " << ex.what();
      } catch (...) {
        LOG(ERROR) << logger.prefix() << "Handler '" << e.id
                   << "' failed with an unknown exception";
      }
    };
    funcs->add_func = [deliver](const api::ObjectPtr& o, bool initial) {
      deliver(o, initial ? "" : "ADDED");
    };
    funcs->update_func = [deliver](const api::ObjectPtr&,
                                   const api::ObjectPtr& o) {
      deliver(o, "MODIFIED");
    };
    funcs->delete_func = [deliver](const api::ObjectPtr& o, bool) {
      deliver(o, "DELETED");
    };
    auto registration = informer->AddEventHandler(funcs);
    if (!registration.ok()) return registration.status();
  }
  return absl::OkStatus();
}

// "plural.group" (the plural alone for the core group), as kubectl names a
// resource.
std::string ResourceName(const api::GroupVersionResource& gvr) {
  return gvr.group.empty() ? gvr.resource : Cat(gvr.resource, ".", gvr.group);
}

// Discovery's first retry, and the longest wait between two.
constexpr absl::Duration kDiscoveryBackoff = absl::Seconds(1);
constexpr absl::Duration kMaxDiscoveryBackoff = absl::Seconds(30);

// Waits for a resource that discovery did not find (its CRD not installed
// yet, the server unreachable), as the reconcilers retry their list: asks
// again with backoff (1 s doubling to 30 s, on the Manager's clock) until
// it is served, then adds its controller and returns. Returns OK when the
// Manager stops first. Needs no leader election: the controller it adds
// does, and the Manager gates that.
class WaitForResourceRunnable final : public controller::Runnable {
 public:
  WaitForResourceRunnable(const ResourceHandlers& handlers,
                          const OperatorOptions& op, controller::Manager& mgr,
                          std::shared_ptr<events::EventRecorder> recorder)
      : handlers_(handlers),
        op_(op),
        mgr_(mgr),
        recorder_(std::move(recorder)) {}

  absl::Status Start(const Context& ctx) override {
    const Clock* clock = mgr_.clock() != nullptr ? mgr_.clock() : Clock::Real();
    absl::Duration delay = kDiscoveryBackoff;
    for (;;) {
      if (!clock->Sleep(ctx, delay).ok() || ctx.done()) return absl::OkStatus();
      absl::StatusOr<ResourceInfo> info =
          Discover(*mgr_.GetClient(), handlers_.gvr(), ctx);
      if (ctx.done()) return absl::OkStatus();
      if (info.ok()) {
        LOG(INFO) << "handlers: resource=" << ResourceName(handlers_.gvr())
                  << " is served now; adding its controller";
        absl::Status added =
            AddResource(handlers_, *info, op_, mgr_, recorder_);
        // Stopping meanwhile is no failure.
        if (!added.ok() && ctx.done()) return absl::OkStatus();
        return added;
      }
      VLOG(2) << "handlers: still waiting resource="
              << ResourceName(handlers_.gvr()) << " error=" << info.status();
      delay = std::min(delay * 2, kMaxDiscoveryBackoff);
    }
  }
  bool NeedLeaderElection() const override { return false; }
  std::string name() const override {
    return Cat("handlers-wait-", ResourceName(handlers_.gvr()));
  }

 private:
  const ResourceHandlers& handlers_;
  const OperatorOptions& op_;
  controller::Manager& mgr_;
  const std::shared_ptr<events::EventRecorder> recorder_;
};

// AddToManager; `cleanup` (may be null) gets the cleanup handlers' runner
// when there are any.
absl::Status Add(const Registry& registry, controller::Manager& mgr,
                 const Context& ctx, std::shared_ptr<Cleanup>* cleanup) {
  const OperatorOptions& op = registry.options();
  client::RestClient* client = mgr.GetClient();
  const Clock* clock = mgr.clock() != nullptr ? mgr.clock() : Clock::Real();

  // Everything that can fail without side effects first. A resource that
  // is not served yet is waited for (after the startup handlers), not an
  // error.
  KCR_RETURN_IF_ERROR(ValidateRegistry(registry));
  std::vector<absl::StatusOr<ResourceInfo>> infos;
  for (const auto& [key, handlers] : registry.resources()) {
    infos.push_back(Discover(*client, handlers.gvr(), ctx));
    if (ctx.done()) return ctx.Err();
  }

  for (const auto& activity : registry.activities().startup) {
    absl::Status s = RunActivity(activity, client, clock, ctx);
    if (!s.ok()) {
      return absl::Status(s.code(), Cat("startup handler '", activity.id,
                                        "': ", ToStd(s.message())));
    }
  }

  std::shared_ptr<events::EventRecorder> recorder =
      mgr.GetEventRecorderFor(op.name);
  size_t i = 0;
  for (const auto& [key, handlers] : registry.resources()) {
    const absl::StatusOr<ResourceInfo>& info = infos[i++];
    if (info.ok()) {
      KCR_RETURN_IF_ERROR(AddResource(handlers, *info, op, mgr, recorder));
      continue;
    }
    auto waiter =
        std::make_unique<WaitForResourceRunnable>(handlers, op, mgr, recorder);
    LOG(WARNING) << "handlers: resource " << ResourceName(handlers.gvr())
                 << " is not available yet; its controller starts once "
                    "discovery finds it (retrying with backoff): "
                 << info.status().message();
    KCR_RETURN_IF_ERROR(mgr.Add(std::move(waiter)));
  }

  for (const auto& probe : registry.activities().probes) {
    auto fn = probe.fn;
    std::string id = probe.id;
    // Each probe's value is shown in /healthz?verbose ("[+]id ok: value")
    // and on /healthz/<id>, as kopf's liveness endpoint shows it.
    KCR_RETURN_IF_ERROR(mgr.healthz_checks().AddWithDetail(
        probe.id, [fn, id, client]() -> absl::StatusOr<std::string> {
          ActivityContext actx(client, Context::Background(), 0);
          absl::StatusOr<std::string> r;
          try {
            r = fn(actx);
          } catch (const std::exception& e) {
            return absl::UnknownError(Cat("probe '", id, "': ", e.what()));
          } catch (...) {
            return absl::UnknownError(Cat("probe '", id, "' threw"));
          }
          if (!r.ok()) return r.status();
          return CompactJson(*std::move(r));
        }));
  }

  if (!registry.activities().cleanup.empty()) {
    auto runner = std::make_shared<Cleanup>(
        registry, client, clock, mgr.options().graceful_shutdown_timeout);
    KCR_RETURN_IF_ERROR(mgr.Add(std::make_unique<CleanupRunnable>(runner)));
    if (cleanup != nullptr) *cleanup = std::move(runner);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status AddToManager(const Registry& registry, controller::Manager& mgr,
                          const Context& ctx) {
  return Add(registry, mgr, ctx, nullptr);
}

absl::Status RunOperator(const Registry& registry, const RunOptions& options,
                         const Context& ctx) {
  std::optional<client::Config> config = options.config;
  for (const auto& login : registry.activities().login) {
    if (config) break;
    ActivityContext actx(nullptr, ctx, 0);
    absl::StatusOr<client::Config> c;
    try {
      c = login.fn(actx);
    } catch (const std::exception& e) {
      c = absl::UnknownError(e.what());
    }
    if (c.ok()) {
      config = *std::move(c);
    } else {
      LOG(WARNING) << "login handler " << login.id << ": " << c.status();
    }
  }
  if (!config) {
    KCR_ASSIGN_OR_RETURN(client::Config built, client::BuildConfig());
    config = std::move(built);
  }
  KCR_ASSIGN_OR_RETURN(std::unique_ptr<controller::Manager> mgr,
                       controller::Manager::New(*config, options.manager));
  std::shared_ptr<Cleanup> cleanup;
  KCR_RETURN_IF_ERROR(Add(registry, *mgr, ctx, &cleanup));
  absl::Status status = mgr->Start(ctx);
  // Start returns once every Runnable that started has returned. When the
  // Manager stopped before starting them (the caches never synced), the
  // cleanup Runnable never ran: the cleanup handlers run here instead.
  if (cleanup != nullptr) cleanup->RunOnce();
  return status;
}

}  // namespace kcr::handlers
