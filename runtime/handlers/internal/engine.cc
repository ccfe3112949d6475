#include "runtime/handlers/internal/engine.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <set>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "api/errors/errors.h"
#include "api/json/json_util.h"
#include "api/types/event.h"
#include "base/str_cat.h"
#include "base/string_view.h"
#include "glog/logging.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "runtime/handlers/context.h"
#include "runtime/handlers/diff.h"

namespace kcr::handlers::internal {
namespace {

using Kind = ResourceHandlers::Entry::Kind;
using Entry = ResourceHandlers::Entry;

// How soon to look again when a handler is due and nothing was written.
constexpr absl::Duration kSoon = absl::Milliseconds(1);

// How often an object whose deletion waits for its daemons is looked at
// again, should a daemon's own wake-up be missed.
constexpr absl::Duration kDaemonPoll = absl::Seconds(1);

// The reason change handlers are told, for the causes that run them.
std::optional<Reason> ReasonOf(Cause cause) {
  switch (cause) {
    case Cause::kCreate:
      return Reason::kCreate;
    case Cause::kUpdate:
      return Reason::kUpdate;
    case Cause::kDelete:
      return Reason::kDelete;
    case Cause::kResume:
      return Reason::kResume;
    default:
      return std::nullopt;
  }
}

// kopf's causes.TITLES.
std::string_view Title(Reason reason) {
  switch (reason) {
    case Reason::kCreate:
      return "creation";
    case Reason::kUpdate:
      return "updating";
    case Reason::kDelete:
      return "deletion";
    case Reason::kResume:
      return "resuming";
    case Reason::kTimer:
      return "timer";
  }
  return "handling";
}

// The title of a purpose read from a record ("create" -> "creation").
std::string PurposeTitle(std::string_view purpose) {
  for (Reason r :
       {Reason::kCreate, Reason::kUpdate, Reason::kDelete, Reason::kResume}) {
    if (ReasonName(r) == purpose) return std::string(Title(r));
  }
  return std::string(purpose);
}

std::string Capitalized(std::string_view s) {
  std::string out(s);
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] -= 'a' - 'A';
  return out;
}

// Seconds as kopf prints them ("60.0").
std::string Seconds(absl::Duration d) {
  return absl::StrFormat("%.1f", absl::ToDoubleSeconds(d));
}

rapidjson::Value::StringRefType Ref(std::string_view s) {
  return rapidjson::StringRef(s.data(),
                              static_cast<rapidjson::SizeType>(s.size()));
}

rapidjson::Value Str(std::string_view s,
                     rapidjson::Document::AllocatorType& a) {
  return rapidjson::Value(s.data(), static_cast<rapidjson::SizeType>(s.size()),
                          a);
}

rapidjson::Value& ObjectMember(rapidjson::Value& parent, std::string_view name,
                               rapidjson::Document::AllocatorType& a) {
  auto it = parent.FindMember(Ref(name));
  if (it == parent.MemberEnd()) {
    parent.AddMember(Str(name, a), rapidjson::Value(rapidjson::kObjectType), a);
    return (parent.MemberEnd() - 1)->value;
  }
  if (!it->value.IsObject()) it->value.SetObject();
  return it->value;
}

// A JSON merge patch of `src` onto `dst`, keeping nulls (both are patches).
void MergeInto(rapidjson::Value& dst, const rapidjson::Value& src,
               rapidjson::Document::AllocatorType& a) {
  for (auto it = src.MemberBegin(); it != src.MemberEnd(); ++it) {
    std::string_view name(it->name.GetString(), it->name.GetStringLength());
    auto found = dst.FindMember(Ref(name));
    if (it->value.IsObject() && found != dst.MemberEnd() &&
        found->value.IsObject()) {
      MergeInto(found->value, it->value, a);
      continue;
    }
    if (found != dst.MemberEnd()) dst.RemoveMember(found);
    dst.AddMember(Str(name, a), rapidjson::Value(it->value, a), a);
  }
}

// kopf's deliver_results: a handler's returned value goes under
// status.<handler id> of `patch` (the id is one key, dots and all).
void DeliverResult(std::string_view id, const rapidjson::Value& value,
                   rapidjson::Value& patch,
                   rapidjson::Document::AllocatorType& a) {
  rapidjson::Value& status = ObjectMember(patch, "status", a);
  status.RemoveMember(Ref(id));
  status.AddMember(Str(id, a), rapidjson::Value(value, a), a);
}

bool HasMembers(const rapidjson::Value& v, const char* name) {
  auto it = v.FindMember(name);
  return it != v.MemberEnd() &&
         (!it->value.IsObject() || it->value.MemberCount() > 0);
}

bool FieldChanged(const rapidjson::Value* a, const rapidjson::Value* b) {
  if ((a == nullptr) != (b == nullptr)) return true;
  return a != nullptr && !json::JsonDeepEqual(*a, *b);
}

}  // namespace

std::string_view CauseName(Cause cause) {
  switch (cause) {
    case Cause::kGone:
      return "gone";
    case Cause::kFree:
      return "free";
    case Cause::kDelete:
      return "delete";
    case Cause::kCreate:
      return "create";
    case Cause::kResume:
      return "resume";
    case Cause::kNoop:
      return "noop";
    case Cause::kUpdate:
      return "update";
  }
  return "unknown";
}

Cause DetectCause(bool exists, bool being_deleted, bool has_finalizer,
                  bool has_last_handled, bool changed, bool initial) {
  if (!exists) return Cause::kGone;
  if (being_deleted && !has_finalizer) return Cause::kFree;
  if (being_deleted) return Cause::kDelete;
  if (!has_last_handled) return Cause::kCreate;
  if (!changed && initial) return Cause::kResume;
  if (!changed) return Cause::kNoop;
  return Cause::kUpdate;
}

// What came of one run of a handler (kopf's execution.Outcome).
struct Engine::RunResult {
  bool final = false;
  // An error was raised (or returned): the record's failure and message.
  bool exception = false;
  std::string message;
  std::optional<absl::Duration> delay;
  std::shared_ptr<const rapidjson::Document> value;
  // For the runs metric: success, temporary, permanent, error, timeout,
  // retries, ignored.
  std::string_view outcome = "success";
};

struct Engine::Metrics {
  explicit Metrics(prometheus::Registry& r)
      : runs(prometheus::BuildCounter()
                 .Name("kcr_handler_runs_total")
                 .Help("Runs of each handler by outcome (success, temporary, "
                       "permanent, error, timeout, retries, ignored)")
                 .Register(r)),
        duration(prometheus::BuildHistogram()
                     .Name("kcr_handler_duration_seconds")
                     .Help("How long each run of a handler took")
                     .Register(r)) {}
  prometheus::Family<prometheus::Counter>& runs;
  prometheus::Family<prometheus::Histogram>& duration;
};

// kopf's per-object logger: "[namespace/name] message" in the log, and an
// Event (reason "Logging") for what is at the posting level or above.
class Engine::ObjectLogger final : public Logger {
 public:
  ObjectLogger(api::ObjectPtr object, events::EventRecorder* recorder,
               Level posting_level)
      : object_(std::move(object)),
        recorder_(recorder),
        posting_level_(posting_level),
        prefix_(object_->namespace_().empty()
                    ? Cat("[", object_->name(), "] ")
                    : Cat("[", object_->namespace_(), "/", object_->name(),
                          "] ")) {}

  void Log(Level level, std::string_view message) override {
    switch (level) {
      case Level::kDebug:
        VLOG(2) << prefix_ << message;
        break;
      case Level::kInfo:
        LOG(INFO) << prefix_ << message;
        break;
      case Level::kWarning:
        LOG(WARNING) << prefix_ << message;
        break;
      case Level::kError:
        LOG(ERROR) << prefix_ << message;
        break;
    }
    if (recorder_ == nullptr || level < posting_level_) return;
    // kopf's types are Debug/Normal/Warning/Error; Kubernetes takes only
    // Normal and Warning.
    recorder_->Event(*object_,
                     level >= Level::kWarning ? api::kEventTypeWarning
                                              : api::kEventTypeNormal,
                     "Logging", message);
  }
  std::string_view prefix() const override { return prefix_; }

 private:
  const api::ObjectPtr object_;
  events::EventRecorder* const recorder_;
  const Level posting_level_;
  const std::string prefix_;
};

// One daemon of one object: its thread, its stop flag and its context
// (cancelled once the cancellation timeout after the stop has passed).
class Engine::DaemonRun final : public DaemonContext {
 public:
  DaemonRun(Engine* engine, const Entry& entry, controller::Request request,
            const api::ObjectPtr& object, std::unique_ptr<ObjectLogger> logger,
            std::pair<Context, CancelFunc> ctx)
      : DaemonContext(object, engine->ObjectResource(*object),
                      engine->options_.client, engine->options_.recorder.get(),
                      logger.get(), ctx.first),
        engine_(engine),
        entry_(entry),
        request_(std::move(request)),
        uid_(object->uid()),
        logger_(std::move(logger)),
        cancel_(std::move(ctx.second)) {}

  ~DaemonRun() override {
    Join();
    cancel_();
  }

  void Start() {
    thread_ = std::thread([this] { Run(); });
  }
  void RequestStop() ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    if (stop_) return;
    stop_ = true;
    cv_.SignalAll();
    cancel_timer_ = engine_->clock_->AfterFunc(
        entry_.daemon_options.cancellation_timeout, cancel_);
  }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  bool exited() const { return exited_.load(); }
  const std::string& uid() const { return uid_; }

  bool stopped() const override ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    return stop_;
  }
  bool WaitForStop(absl::Duration d) override ABSL_LOCKS_EXCLUDED(mu_) {
    const Clock* clock = engine_->clock_;
    const absl::Time deadline = clock->Now() + d;
    MutexLock lock(&mu_);
    while (!stop_ && clock->Now() < deadline) {
      clock->WaitUntil(&mu_, &cv_, deadline);
    }
    return stop_;
  }
  api::ObjectPtr body_latest() const override {
    return engine_->options_.get(request_);
  }
  int retry() const override { return retry_.load(); }
  absl::Status ApplyPatch() override {
    if (patch().empty()) return absl::OkStatus();
    rapidjson::Document doc(rapidjson::kObjectType);
    MergeHandlerPatch(patch(), doc);
    patch() = Patch();
    api::ObjectPtr latest = body_latest();
    if (latest == nullptr) latest = body_ptr();
    return engine_->ApplyPatch(ctx(), latest, doc, nullptr).status();
  }

 private:
  // kopf's daemon: after the initial delay, call it; a daemon that
  // returns (or fails for good) is done; one that fails is called again
  // after its delay or the backoff; a stop ends it.
  void Run() {
    const DaemonOptions& options = entry_.daemon_options;
    const std::string name = Cat("Daemon '", entry_.id, "'");
    if (options.initial_delay <= absl::ZeroDuration() ||
        !WaitForStop(options.initial_delay)) {
      while (true) {
        Outcome outcome;
        try {
          outcome = entry_.daemon(*this);
        } catch (const TemporaryError& err) {
          outcome = Outcome::Temporary(err.what(), err.delay());
        } catch (const PermanentError& err) {
          outcome = Outcome::Permanent(err.what());
        } catch (const std::exception& err) {
          outcome = Outcome(absl::UnknownError(err.what()));
        } catch (...) {
          outcome = Outcome(absl::UnknownError("an unknown exception"));
        }
        // kopf's daemons deliver results as every handler does.
        if (outcome.kind() == Outcome::Kind::kSuccess &&
            outcome.value() != nullptr) {
          rapidjson::Document& own = patch().json();
          DeliverResult(entry_.id, *outcome.value(), own, own.GetAllocator());
        }
        absl::Status applied = ApplyPatch();
        if (!applied.ok()) {
          logger_->Warning(
              Cat(name, " could not patch: ", ToStd(applied.message())));
        }
        if (stopped()) {
          logger_->Debug(Cat(name, " has exited on request."));
          break;
        }
        if (outcome.kind() == Outcome::Kind::kSuccess) {
          logger_->Info(Cat(name,
                            " has exited on its own. It will not be "
                            "retried."));
          break;
        }
        if (outcome.kind() == Outcome::Kind::kPermanent) {
          logger_->Error(Cat(name, " failed permanently: ", outcome.message(),
                             ". It will not be retried."));
          break;
        }
        const absl::Duration delay = outcome.kind() == Outcome::Kind::kTemporary
                                         ? outcome.delay()
                                         : options.backoff;
        logger_->Error(Cat(name, " failed and will be restarted in ",
                           Seconds(delay), " seconds: ", outcome.message()));
        if (WaitForStop(delay)) break;
        retry_.fetch_add(1);
      }
    }
    exited_.store(true);
    engine_->Enqueue(request_);
  }

  Engine* const engine_;
  const Entry& entry_;
  const controller::Request request_;
  const std::string uid_;
  const std::unique_ptr<ObjectLogger> logger_;
  const CancelFunc cancel_;
  std::thread thread_;
  std::atomic<bool> exited_{false};
  // Restarts after failures; the daemon may read it from any thread.
  std::atomic<int> retry_{0};

  mutable Mutex mu_;
  CondVar cv_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::unique_ptr<Timer> cancel_timer_ ABSL_GUARDED_BY(mu_);
};

void Engine::SetEnqueue(
    std::function<void(const controller::Request&)> enqueue) {
  MutexLock lock(&enqueue_mu_);
  enqueue_ = std::move(enqueue);
}

void Engine::Enqueue(const controller::Request& request) {
  MutexLock lock(&enqueue_mu_);
  if (enqueue_) enqueue_(request);
}

namespace {

// "<key>\n<handler id>" names a daemon; "<key>\n" all of an object's.
std::string DaemonKey(const std::string& key, const std::string& id) {
  return Cat(key, "\n", id);
}

bool IsDaemonOf(const std::string& daemon_key, const std::string& key) {
  return daemon_key.size() > key.size() &&
         daemon_key.compare(0, key.size(), key) == 0 &&
         daemon_key[key.size()] == '\n';
}

}  // namespace

void Engine::SpawnDaemons(const std::string& key,
                          const api::ObjectPtr& object) {
  MutexLock lock(&mu_);
  for (auto it = stopping_.begin(); it != stopping_.end();) {
    if ((*it)->exited()) {
      (*it)->Join();
      it = stopping_.erase(it);
    } else {
      ++it;
    }
  }
  if (daemons_stopped_) return;
  for (const Entry& e : handlers_.entries()) {
    if (e.kind != Kind::kDaemon) continue;
    const std::string dkey = DaemonKey(key, e.id);
    const bool match = e.options.filters.Matches(*object);
    auto it = daemons_.find(dkey);
    if (it != daemons_.end()) {
      // Running, or returned for good (not restarted) for this object.
      if (it->second->uid() == object->uid() && match) continue;
      it->second->RequestStop();
      stopping_.push_back(it->second);
      daemons_.erase(it);
    }
    if (!match) continue;
    auto run = std::make_shared<DaemonRun>(
        this, e, controller::Request::For(*object), object,
        std::make_unique<ObjectLogger>(object, options_.recorder.get(),
                                       options_.operator_options.posting_level),
        WithCancel(Context::Background()));
    daemons_[dkey] = run;
    run->Start();
  }
}

int Engine::StopObjectDaemons(const std::string& key) {
  MutexLock lock(&mu_);
  int running = 0;
  for (auto& [dkey, run] : daemons_) {
    if (!IsDaemonOf(dkey, key)) continue;
    run->RequestStop();
    running += run->exited() ? 0 : 1;
  }
  return running;
}

int Engine::RunningDaemons(const std::string& key) {
  MutexLock lock(&mu_);
  int running = 0;
  for (auto& [dkey, run] : daemons_) {
    if (IsDaemonOf(dkey, key) && !run->exited()) ++running;
  }
  return running;
}

void Engine::StopDaemons() {
  SetEnqueue(nullptr);
  std::vector<std::shared_ptr<DaemonRun>> all;
  {
    MutexLock lock(&mu_);
    daemons_stopped_ = true;
    for (auto& [dkey, run] : daemons_) all.push_back(run);
    daemons_.clear();
    for (auto& run : stopping_) all.push_back(run);
    stopping_.clear();
  }
  for (auto& run : all) run->RequestStop();
  for (auto& run : all) run->Join();
}

absl::StatusOr<std::unique_ptr<Engine>> Engine::New(
    const ResourceHandlers& handlers, ResourceInfo info,
    EngineOptions options) {
  if (options.client == nullptr || !options.get) {
    return absl::InvalidArgumentError("handlers engine: no client or getter");
  }
  std::set<std::string> ids;
  for (const Entry& e : handlers.entries()) {
    if (!ids.insert(e.id).second) {
      return absl::InvalidArgumentError(Cat("handlers of ", info.gvr.resource,
                                            ": the id \"", e.id,
                                            "\" is used twice"));
    }
  }
  return std::unique_ptr<Engine>(
      new Engine(handlers, std::move(info), std::move(options)));
}

Engine::Engine(const ResourceHandlers& handlers, ResourceInfo info,
               EngineOptions options)
    : handlers_(handlers),
      info_(std::move(info)),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : Clock::Real()),
      storage_(StorageOptions{options_.operator_options.prefix,
                              options_.operator_options.progress_in_status,
                              options_.operator_options.status_field}),
      resource_name_(info_.gvr.group.empty()
                         ? info_.gvr.resource
                         : Cat(info_.gvr.resource, ".", info_.gvr.group)) {
  if (options_.metrics != nullptr) {
    metrics_ = std::make_unique<Metrics>(*options_.metrics);
  }
}

Engine::~Engine() { StopDaemons(); }

bool Engine::RequiresFinalizer(const api::Object& object) const {
  for (const Entry& e : handlers_.entries()) {
    const bool needs = (e.kind == Kind::kDelete && !e.options.optional) ||
                       e.kind == Kind::kDaemon;
    if (needs && e.options.filters.Matches(object)) return true;
  }
  return false;
}

void Engine::MergeHandlerPatch(const Patch& own, rapidjson::Document& patch) {
  rapidjson::Document merged(rapidjson::kObjectType);
  for (const char* section : {"metadata", "status"}) {
    auto it = own.json().FindMember(section);
    if (it != own.json().MemberEnd() && it->value.IsObject()) {
      merged.AddMember(rapidjson::StringRef(section),
                       rapidjson::Value(it->value, merged.GetAllocator()),
                       merged.GetAllocator());
    }
  }
  MergeInto(merged, patch, merged.GetAllocator());
  patch.Swap(merged);
}

client::Resource Engine::ObjectResource(const api::Object& object) const {
  return info_.namespaced ? client::Resource::Namespaced(
                                info_.gvr, std::string(object.namespace_()))
                          : client::Resource::ClusterScoped(info_.gvr);
}

absl::StatusOr<controller::Result> Engine::Reconcile(
    const controller::Request& request, controller::ReconcileContext& ctx) {
  return Process(request, options_.get(request), ctx.ctx());
}

bool Engine::IsStale(const api::Object& object) {
  MutexLock lock(&mu_);
  auto it = memory_.find(object.Key());
  if (it == memory_.end()) return false;
  Memory& m = it->second;
  if (m.uid != object.uid() || m.written_version.empty()) return false;
  const std::string_view rv = object.resource_version();
  int64_t have = 0;
  int64_t wrote = 0;
  bool stale;
  if (absl::SimpleAtoi(ToAbsl(rv), &have) &&
      absl::SimpleAtoi(m.written_version, &wrote)) {
    stale = have < wrote;
  } else {
    stale =
        std::find(m.overwritten_versions.begin(), m.overwritten_versions.end(),
                  rv) != m.overwritten_versions.end();
  }
  if (!stale) {
    m.written_version.clear();
    m.overwritten_versions.clear();
  }
  return stale;
}

void Engine::RememberWrite(const std::string& key, const std::string& uid,
                           std::vector<std::string> from,
                           const std::string& to) {
  MutexLock lock(&mu_);
  Memory& m = memory_[key];
  if (m.uid != uid) {
    m = Memory{};
    m.uid = uid;
  }
  m.written_version = to;
  m.overwritten_versions = std::move(from);
}

absl::StatusOr<api::ObjectPtr> Engine::ApplyPatch(
    const Context& ctx, const api::ObjectPtr& object,
    rapidjson::Document& patch,
    const std::function<std::optional<std::vector<std::string>>(
        const api::Object&)>& finalizers) {
  const client::Resource resource =
      info_.namespaced ? client::Resource::Namespaced(
                             info_.gvr, std::string(object->namespace_()))
                       : client::Resource::ClusterScoped(info_.gvr);
  const std::string name(object->name());
  auto& a = patch.GetAllocator();
  api::ObjectPtr latest = object;
  std::vector<std::string> overwritten;
  bool wrote = false;

  auto send = [&](const rapidjson::Value& body,
                  std::string_view subresource) -> absl::Status {
    absl::StatusOr<std::string> text = json::JsonToString(body);
    if (!text.ok()) return text.status();
    VLOG(4) << "handlers patch resource=" << resource_name_
            << " key=" << object->Key() << " subresource=" << subresource
            << " body=" << *text;
    absl::StatusOr<api::ObjectPtr> r = options_.client->Patch(
        ctx, resource, name, api::PatchType::kMerge, *text, {}, subresource);
    if (!r.ok()) return r.status();
    overwritten.emplace_back(latest->resource_version());
    latest = *r;
    wrote = true;
    return absl::OkStatus();
  };

  if (info_.status_subresource && HasMembers(patch, "status")) {
    rapidjson::Document body(rapidjson::kObjectType);
    body.AddMember("status",
                   rapidjson::Value(patch["status"], body.GetAllocator()),
                   body.GetAllocator());
    absl::Status s = send(body, "status");
    if (api::IsNotFound(s)) return api::ObjectPtr();
    if (!s.ok()) return s;
    patch.RemoveMember("status");
  }
  std::optional<std::vector<std::string>> list;
  if (finalizers) list = finalizers(*latest);
  if (list) {
    rapidjson::Value& metadata = ObjectMember(patch, "metadata", a);
    rapidjson::Value items(rapidjson::kArrayType);
    for (const std::string& f : *list) items.PushBack(Str(f, a), a);
    metadata.RemoveMember("finalizers");
    metadata.AddMember("finalizers", items, a);
    // The list replaces the server's: only over the version it came from.
    metadata.RemoveMember("resourceVersion");
    metadata.AddMember("resourceVersion", Str(latest->resource_version(), a),
                       a);
  }
  if (HasMembers(patch, "metadata") || HasMembers(patch, "status")) {
    absl::Status s = send(patch, "");
    if (api::IsNotFound(s)) return api::ObjectPtr();
    if (!s.ok()) return s;
  }
  if (wrote) {
    RememberWrite(object->Key(), std::string(object->uid()),
                  std::move(overwritten),
                  std::string(latest->resource_version()));
  }
  return latest;
}

Engine::RunResult Engine::Execute(const Entry& e, HandlerContext& hctx,
                                  Logger& logger, int retries_so_far,
                                  absl::Duration runtime) {
  const OperatorOptions& op = options_.operator_options;
  const std::string handler_name = Cat("Handler '", e.id, "'");
  const std::optional<absl::Duration>& timeout = e.options.timeout;
  const std::optional<int>& retries = e.options.retries;
  const absl::Duration backoff = e.options.backoff.value_or(op.default_backoff);
  RunResult result;
  const absl::Time run_start = clock_->Now();
  // The strict checks, before calling (kopf's execute_handler_once).
  if (timeout && runtime >= *timeout) {
    result.final = true;
    result.exception = true;
    result.outcome = "timeout";
    result.message = Cat(handler_name, " has timed out after ",
                         Seconds(runtime), " seconds.");
    logger.Error(result.message);
  } else if (retries && retries_so_far >= *retries) {
    result.final = true;
    result.exception = true;
    result.outcome = "retries";
    result.message =
        Cat(handler_name, " has exceeded ", retries_so_far, " retries.");
    logger.Error(result.message);
  } else {
    logger.Debug(Cat(handler_name, " is invoked."));
    Outcome outcome;
    try {
      outcome = e.handler(hctx);
    } catch (const TemporaryError& err) {
      outcome = Outcome::Temporary(err.what(), err.delay());
    } catch (const PermanentError& err) {
      outcome = Outcome::Permanent(err.what());
    } catch (const std::exception& err) {
      outcome = Outcome(absl::UnknownError(err.what()));
    } catch (...) {
      outcome = Outcome(absl::UnknownError("an unknown exception"));
    }
    const std::string& msg = outcome.message();
    switch (outcome.kind()) {
      case Outcome::Kind::kSuccess:
        result.final = true;
        if (outcome.value() != nullptr) {
          auto doc = std::make_shared<rapidjson::Document>();
          doc->CopyFrom(*outcome.value(), doc->GetAllocator());
          result.value = std::move(doc);
        }
        logger.Info(Cat(handler_name, " succeeded."));
        break;
      case Outcome::Kind::kTemporary: {
        const absl::Duration lookahead = runtime + outcome.delay();
        if (timeout && lookahead >= *timeout) {
          result.final = true;
          result.exception = true;
          result.outcome = "timeout";
          result.message = Cat(handler_name,
                               " failed temporarily but will time out "
                               "after ",
                               Seconds(*timeout), " seconds: ", msg);
        } else if (retries && retries_so_far + 1 >= *retries) {
          result.final = true;
          result.exception = true;
          result.outcome = "retries";
          result.message =
              Cat(handler_name, " failed temporarily but will exceed ",
                  *retries, " retries: ", msg);
        } else {
          result.exception = true;
          result.outcome = "temporary";
          result.delay = outcome.delay();
          result.message = msg;
          logger.Error(Cat(handler_name, " failed temporarily: ", msg));
          break;
        }
        logger.Error(result.message);
        break;
      }
      case Outcome::Kind::kPermanent:
        result.final = true;
        result.exception = true;
        result.outcome = "permanent";
        result.message = msg;
        logger.Error(Cat(handler_name, " failed permanently: ", msg));
        break;
      case Outcome::Kind::kError: {
        const absl::Duration lookahead = runtime + backoff;
        const bool lookahead_timeout = timeout && lookahead >= *timeout;
        const bool lookahead_retries =
            retries && retries_so_far + 1 >= *retries;
        result.exception = true;
        result.message = msg;
        if (e.options.errors == ErrorsMode::kIgnored) {
          result.final = true;
          result.exception = false;
          result.message.clear();
          result.outcome = "ignored";
          logger.Error(Cat(handler_name,
                           " failed with an exception and will ignore "
                           "it: ",
                           msg));
        } else if (e.options.errors == ErrorsMode::kTemporary &&
                   lookahead_timeout) {
          result.final = true;
          result.outcome = "timeout";
          result.message =
              Cat(handler_name,
                  " failed with an exception and will stop now (it "
                  "would time out in ",
                  Seconds(*timeout), " seconds on the next attempt): ", msg);
          logger.Error(result.message);
        } else if (e.options.errors == ErrorsMode::kTemporary &&
                   lookahead_retries) {
          result.final = true;
          result.outcome = "retries";
          result.message =
              Cat(handler_name,
                  " failed with an exception and will stop now (it "
                  "would exceed ",
                  *retries, " retries on the next attempt): ", msg);
          logger.Error(result.message);
        } else if (e.options.errors == ErrorsMode::kTemporary) {
          result.outcome = "error";
          result.delay = backoff;
          logger.Error(Cat(handler_name,
                           " failed with an exception and will try again "
                           "in ",
                           Seconds(backoff), " seconds: ", msg));
        } else {
          result.final = true;
          result.outcome = "permanent";
          logger.Error(Cat(handler_name,
                           " failed with an exception and will stop "
                           "now: ",
                           msg));
        }
        break;
      }
    }
  }
  const absl::Time finished = clock_->Now();
  if (metrics_ != nullptr) {
    metrics_->runs
        .Add({{"resource", resource_name_},
              {"handler", e.id},
              {"outcome", std::string(result.outcome)}})
        .Increment();
    metrics_->duration
        .Add({{"resource", resource_name_}, {"handler", e.id}},
             prometheus::Histogram::BucketBoundaries{0.005, 0.01, 0.025, 0.05,
                                                     0.1, 0.25, 0.5, 1, 2.5, 5,
                                                     10, 30, 60})
        .Observe(absl::ToDoubleSeconds(finished - run_start));
  }
  return result;
}

std::vector<const Engine::Entry*> Engine::SelectHandlers(
    Cause cause, bool initial, const rapidjson::Value* old_root,
    const rapidjson::Value* new_root, const api::Object& object) const {
  std::vector<const Entry*> selected;
  for (const Entry& e : handlers_.entries()) {
    bool match = false;
    switch (e.kind) {
      case Kind::kCreate:
        match = cause == Cause::kCreate;
        break;
      case Kind::kUpdate:
        match = cause == Cause::kUpdate;
        break;
      case Kind::kDelete:
        match = cause == Cause::kDelete;
        break;
      case Kind::kResume:
        // Mixed into any cause of the first sight but creation (which is
        // never initial) and deletion.
        match = initial && cause != Cause::kDelete && cause != Cause::kCreate;
        break;
      case Kind::kField: {
        if (cause != Cause::kCreate && cause != Cause::kUpdate) break;
        const rapidjson::Value* o = FindField(old_root, e.field);
        const rapidjson::Value* n = FindField(new_root, e.field);
        match = (o != nullptr || n != nullptr) && FieldChanged(o, n);
        break;
      }
      default:
        break;
    }
    if (match && e.options.filters.Matches(object)) selected.push_back(&e);
  }
  return selected;
}

Engine::ChangeCycle Engine::RunChangeHandlers(
    const Context& ctx, const api::ObjectPtr& object, Reason reason,
    const std::vector<const Entry*>& selected,
    const std::shared_ptr<const rapidjson::Document>& old_essence,
    const std::shared_ptr<const rapidjson::Document>& new_essence,
    absl::Time now, Logger& logger, rapidjson::Document& patch) {
  ChangeCycle cycle;
  auto& a = patch.GetAllocator();
  const rapidjson::Value* old_root = old_essence.get();
  const rapidjson::Value* new_root = new_essence.get();
  const std::string_view purpose = ReasonName(reason);
  const std::string title(Title(reason));
  struct HandlerState {
    ProgressRecord record;
    std::optional<ProgressRecord> origin;
    bool present = false;  // on the object
  };
  // Every change handler's record on the object (kopf's owned handlers).
  std::map<std::string, HandlerState> states;
  std::set<std::string> active;
  for (const Entry* e : selected) active.insert(e->id);
  int superseded_success = 0, superseded_failure = 0, superseded_running = 0;
  std::string superseded_purpose;
  for (const Entry& e : handlers_.entries()) {
    if (e.kind == Kind::kEvent || e.kind == Kind::kTimer ||
        e.kind == Kind::kDaemon) {
      continue;
    }
    auto fetched = storage_.FetchProgress(*object, e.id, now);
    if (!fetched.ok()) {
      logger.Warning(Cat(
          "The progress of handler '", e.id,
          "' is malformed and is reset: ", ToStd(fetched.status().message())));
      storage_.PurgeProgress(*object, e.id, &patch);
      continue;
    }
    if (!fetched->has_value()) continue;
    const ProgressRecord& r = **fetched;
    if (active.count(e.id) == 0) {
      // Left over from a cause this one supersedes, or no longer
      // selected: dropped.
      if (r.purpose && *r.purpose != purpose) {
        superseded_purpose = *r.purpose;
        if (r.success) {
          ++superseded_success;
        } else if (r.failure) {
          ++superseded_failure;
        } else {
          ++superseded_running;
        }
      }
      storage_.PurgeProgress(*object, e.id, &patch);
      continue;
    }
    HandlerState st;
    st.record = r;
    st.origin = r;
    st.present = true;
    if (!st.record.started) st.record.started = now;
    st.record.purpose = std::string(purpose);  // re-purposed if it was not
    states[e.id] = std::move(st);
  }
  if (!superseded_purpose.empty()) {
    logger.Info(Cat(Capitalized(PurposeTitle(superseded_purpose)),
                    " is superseded by ", title, ": ", superseded_success,
                    " succeeded; ", superseded_failure, " failed; ",
                    superseded_running, " left to the moment."));
  }
  for (const Entry* e : selected) {
    if (states.count(e->id) > 0) continue;
    HandlerState st;
    st.record.started = now;
    st.record.purpose = std::string(purpose);
    states[e->id] = std::move(st);
  }

  // kopf's asap lifecycle: of the handlers awake, the one with the
  // fewest retries (the first registered among equals).
  const Entry* pick = nullptr;
  for (const Entry* e : selected) {
    const ProgressRecord& r = states[e->id].record;
    if (r.finished() || r.sleeping(now)) continue;
    if (pick == nullptr || r.retries < states[pick->id].record.retries) {
      pick = e;
    }
  }

  std::unique_ptr<HandlerContext> hctx;
  if (pick != nullptr) {
    ProgressRecord& record = states[pick->id].record;
    const absl::Time started = *record.started;
    const absl::Duration runtime = now - started;
    HandlerContext::Init init;
    init.handler_id = pick->id;
    init.reason = reason;
    init.retry = record.retries;
    init.started = started;
    init.runtime = runtime;
    Diff diff = Diff::Compute(old_essence, new_essence);
    if (pick->kind == Kind::kField) {
      init.old_value = FindField(old_root, pick->field);
      init.new_value = FindField(new_root, pick->field);
      init.diff = diff.Reduce(pick->field);
    } else {
      init.old_value = old_root;
      init.new_value = new_root;
      init.diff = std::move(diff);
    }
    const std::optional<absl::Duration>& timeout = pick->options.timeout;
    auto [run_ctx, cancel] = timeout
                                 ? WithDeadline(ctx, started + *timeout, clock_)
                                 : WithCancel(ctx);
    const client::Resource resource =
        info_.namespaced ? client::Resource::Namespaced(
                               info_.gvr, std::string(object->namespace_()))
                         : client::Resource::ClusterScoped(info_.gvr);
    hctx = std::make_unique<HandlerContext>(object, resource, options_.client,
                                            options_.recorder.get(), &logger,
                                            run_ctx, std::move(init));
    const RunResult result =
        Execute(*pick, *hctx, logger, record.retries, runtime);
    cycle.ran = true;
    cancel();
    const absl::Time finished = clock_->Now();
    // kopf's HandlerState.with_outcome.
    if (!record.stopped && result.final) record.stopped = finished;
    record.delayed = result.delay
                         ? std::optional<absl::Time>(finished + *result.delay)
                         : std::nullopt;
    record.success = result.final && !result.exception;
    record.failure = result.final && result.exception;
    record.retries += 1;
    record.message = result.exception
                         ? std::optional<std::string>(result.message)
                         : std::nullopt;
    if (result.value != nullptr) {
      DeliverResult(pick->id, *result.value, patch, a);
    }
  }

  // Store what changed, then see whether the cause is done.
  cycle.done = true;
  int succeeded = 0, failed = 0;
  for (const Entry* e : selected) {
    const HandlerState& st = states[e->id];
    if (!st.origin || *st.origin != st.record) {
      storage_.StoreProgress(e->id, st.record, &patch);
    }
    if (st.record.success) ++succeeded;
    if (st.record.failure) ++failed;
    if (!st.record.finished()) {
      cycle.done = false;
      cycle.delays.push_back(
          st.record.delayed
              ? std::max(absl::ZeroDuration(), *st.record.delayed - now)
              : absl::ZeroDuration());
    }
  }
  if (cycle.done) {
    logger.Info(Cat(Capitalized(title), " is processed: ", succeeded,
                    " succeeded; ", failed, " failed."));
    for (const Entry* e : selected) {
      storage_.PurgeProgress(*object, e->id, &patch);
    }
  }
  // The handler's own changes go with the engine's (the engine's win).
  if (hctx != nullptr) MergeHandlerPatch(hctx->patch(), patch);
  return cycle;
}

absl::StatusOr<controller::Result> Engine::Process(
    const controller::Request& request, const api::ObjectPtr& object,
    const Context& ctx) {
  const std::string key = request.ToString();
  if (object == nullptr) {  // GONE
    MutexLock lock(&mu_);
    memory_.erase(key);
    for (auto it = daemons_.begin(); it != daemons_.end();) {
      if (IsDaemonOf(it->first, key)) {
        it->second->RequestStop();
        stopping_.push_back(it->second);
        daemons_.erase(it++);
      } else {
        ++it;
      }
    }
    VLOG(4) << "handlers gone resource=" << resource_name_ << " key=" << key;
    return controller::Result::Done();
  }
  if (IsStale(*object)) {
    VLOG(4) << "handlers skip stale copy resource=" << resource_name_
            << " key=" << key << " rv=" << object->resource_version();
    return controller::Result::Done();
  }
  const OperatorOptions& op = options_.operator_options;
  ObjectLogger logger(object, options_.recorder.get(), op.posting_level);
  const absl::Time now = clock_->Now();
  rapidjson::Document patch = NewPatch();

  bool initial;
  {
    MutexLock lock(&mu_);
    Memory& m = memory_[key];
    if (m.uid != object->uid()) {
      m = Memory{};
      m.uid = std::string(object->uid());
    }
    initial = !m.fully_handled_once;
  }

  std::shared_ptr<const rapidjson::Document> old_essence;
  {
    auto last = storage_.FetchLastHandled(*object);
    if (last.ok()) {
      old_essence = *last;
    } else {
      logger.Warning(Cat("The last handled state is malformed and is reset: ",
                         ToStd(last.status().message())));
      storage_.ClearLastHandled(&patch);
    }
  }
  std::shared_ptr<const rapidjson::Document> new_essence =
      BuildEssence(*object, op.prefix);
  // kopf's "not diff": null counts as absent.
  const bool changed = old_essence != nullptr &&
                       !Diff::Compute(old_essence, new_essence).empty();
  const bool being_deleted = object->being_deleted();
  const bool has_finalizer = object->HasFinalizer(storage_.finalizer());
  const Cause cause = DetectCause(true, being_deleted, has_finalizer,
                                  old_essence != nullptr, changed, initial);
  VLOG(4) << "handlers cause resource=" << resource_name_ << " key=" << key
          << " cause=" << CauseName(cause) << " initial=" << initial;

  const std::string finalizer = storage_.finalizer();
  auto with_finalizer =
      [&](bool add) -> std::function<std::optional<std::vector<std::string>>(
                        const api::Object&)> {
    return [finalizer, add](const api::Object& latest)
               -> std::optional<std::vector<std::string>> {
      std::vector<std::string> list;
      for (std::string_view f : latest.finalizers()) {
        if (f != finalizer) list.emplace_back(f);
      }
      if (add) list.push_back(finalizer);
      return list;
    };
  };

  if (cause == Cause::kFree) {
    StopObjectDaemons(key);
    if (HasMembers(patch, "metadata")) {
      auto r = ApplyPatch(ctx, object, patch, nullptr);
      if (!r.ok()) return r.status();
    }
    return controller::Result::Done();
  }

  // The finalizer first, as kopf: a cycle that adds or removes it does
  // nothing else; the write's watch event starts the next one.
  const bool requires_finalizer = RequiresFinalizer(*object);
  if ((!being_deleted && requires_finalizer && !has_finalizer) ||
      (!requires_finalizer && has_finalizer)) {
    const bool add = requires_finalizer;
    logger.Debug(add ? "Adding the finalizer, thus preventing the actual "
                       "deletion."
                     : "Removing the finalizer, as there are no handlers "
                       "requiring it.");
    auto r = ApplyPatch(ctx, object, patch, with_finalizer(add));
    if (!r.ok()) return r.status();
    return controller::Result::Done();
  }

  // Daemons (kopf's on.daemon) start once the finalizer holds the object,
  // and are asked to stop when its deletion starts; the finalizer stays
  // until they have returned.
  int daemons_running = 0;
  if (being_deleted) {
    daemons_running = StopObjectDaemons(key);
  } else {
    SpawnDaemons(key, object);
  }

  const std::optional<Reason> reason = ReasonOf(cause);
  const rapidjson::Value* old_root = old_essence.get();
  const rapidjson::Value* new_root = new_essence.get();
  const std::vector<const Entry*> selected =
      reason ? SelectHandlers(cause, initial, old_root, new_root, *object)
             : std::vector<const Entry*>();

  bool done = false;
  bool skip = false;
  bool ran = false;  // a handler ran in this cycle
  std::vector<absl::Duration> delays;
  if (reason && selected.empty()) {
    skip = true;
  } else if (reason) {
    ChangeCycle cycle =
        RunChangeHandlers(ctx, object, *reason, selected, old_essence,
                          new_essence, now, logger, patch);
    done = cycle.done;
    ran = cycle.ran;
    delays = std::move(cycle.delays);
  }

  // Timers (kopf's on.timer), in this reconcile, so never beside another
  // handler of the object; one handler per cycle, as for changes.
  if (!being_deleted) {
    std::optional<absl::Duration> wake = RunTimers(
        ctx, key, object, new_essence, now, !ran, logger, patch, &ran);
    if (wake) delays.push_back(*wake);
  }

  std::function<std::optional<std::vector<std::string>>(const api::Object&)>
      finalizers;
  if (done || skip) {
    if (cause != Cause::kDelete && (old_essence == nullptr || changed)) {
      storage_.StoreLastHandled(*new_essence, &patch);
    }
    {
      MutexLock lock(&mu_);
      memory_[key].fully_handled_once = true;
    }
    if (cause == Cause::kDelete && daemons_running == 0) {
      finalizers = with_finalizer(false);
    } else if (cause == Cause::kDelete) {
      logger.Debug(Cat("Waiting for ", daemons_running,
                       " daemon(s) to stop before releasing the object."));
      // A daemon that returns wakes the object; this is the fallback.
      delays.push_back(kDaemonPoll);
    }
  }
  bool wrote = false;
  if (HasMembers(patch, "metadata") || HasMembers(patch, "status") ||
      finalizers) {
    auto r = ApplyPatch(ctx, object, patch, finalizers);
    if (!r.ok()) return r.status();
    wrote = true;
  }
  if (delays.empty()) return controller::Result::Done();
  const absl::Duration next = *std::min_element(delays.begin(), delays.end());
  if (next > absl::ZeroDuration()) {
    return controller::Result::RequeueAfter(next);
  }
  // Another handler is due now. The watch event of the write above wakes
  // the object again; without a write, the engine asks to be woken.
  return wrote ? controller::Result::Done()
               : controller::Result::RequeueAfter(kSoon);
}

std::optional<absl::Duration> Engine::RunTimers(
    const Context& ctx, const std::string& key, const api::ObjectPtr& object,
    const std::shared_ptr<const rapidjson::Document>& essence, absl::Time now,
    bool may_run, Logger& logger, rapidjson::Document& patch, bool* ran) {
  bool any = false;
  bool idle = false;
  for (const Entry& e : handlers_.entries()) {
    if (e.kind != Kind::kTimer) continue;
    any = true;
    idle |= e.timer.idle > absl::ZeroDuration();
  }
  if (!any) return std::nullopt;
  absl::Time last_change;
  {
    // The idle countdown restarts whenever the essence changes.
    size_t hash = 0;
    if (idle) {
      absl::StatusOr<std::string> text = json::JsonToString(*essence);
      hash = std::hash<std::string>()(text.ok() ? *text : "");
    }
    MutexLock lock(&mu_);
    Memory& m = memory_[key];
    if (!m.essence_seen || (idle && m.essence_hash != hash)) {
      m.essence_seen = true;
      m.essence_hash = hash;
      m.last_change = now;
    }
    last_change = m.last_change;
  }
  std::optional<absl::Duration> wake;
  for (const Entry& e : handlers_.entries()) {
    if (e.kind != Kind::kTimer || !e.options.filters.Matches(*object)) {
      continue;
    }
    TimerState ts;
    {
      MutexLock lock(&mu_);
      ts = memory_[key].timers[e.id];
    }
    if (!ts.seen) {
      ts.seen = true;
      ts.next = now + e.timer.initial_delay;
    }
    auto due = [&] {
      return std::max(ts.next, e.timer.idle > absl::ZeroDuration()
                                   ? last_change + e.timer.idle
                                   : absl::InfinitePast());
    };
    if (may_run && !*ran && now >= due()) {
      HandlerContext::Init init;
      init.handler_id = e.id;
      init.reason = Reason::kTimer;
      init.new_value = essence.get();
      init.retry = ts.retries;
      init.started = ts.started.value_or(now);
      init.runtime = now - init.started;
      const absl::Time started = init.started;
      const absl::Duration runtime = init.runtime;
      auto [run_ctx, cancel] =
          e.options.timeout
              ? WithDeadline(ctx, started + *e.options.timeout, clock_)
              : WithCancel(ctx);
      HandlerContext hctx(object, ObjectResource(*object), options_.client,
                          options_.recorder.get(), &logger, run_ctx,
                          std::move(init));
      const RunResult result = Execute(e, hctx, logger, ts.retries, runtime);
      cancel();
      *ran = true;
      const absl::Time finished = clock_->Now();
      if (result.final) {
        ts.retries = 0;
        ts.started.reset();
        ts.next = finished + e.timer.interval;
      } else {
        ts.retries += 1;
        ts.started = started;
        ts.next = finished + result.delay.value_or(e.timer.interval);
      }
      // Results are delivered on every run, as kopf's timers do.
      if (result.value != nullptr) {
        DeliverResult(e.id, *result.value, patch, patch.GetAllocator());
      }
      MergeHandlerPatch(hctx.patch(), patch);
    }
    const absl::Duration in = std::max(absl::ZeroDuration(), due() - now);
    wake = wake ? std::min(*wake, in) : in;
    MutexLock lock(&mu_);
    memory_[key].timers[e.id] = ts;
  }
  return wake;
}

}  // namespace kcr::handlers::internal
