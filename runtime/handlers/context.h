// What a handler is given (kopf's keyword arguments): the object, its
// parts, what changed, a patch applied after the handler returns, a logger
// with the object's prefix, the retry count and the time of the first try.
//
//   Outcome Scale(HandlerContext& ctx) {
//     int64_t replicas = ctx.spec()["replicas"].GetInt64();   // spec() is {}
//                                                             // when absent
//     ctx.logger().Info(absl::StrCat("scaling to ", replicas));
//     ctx.patch().SetStatus("phase", "Scaling");
//     ctx.patch().SetLabel("example.org/scaled", "true");
//     return Outcome::Success();
//   }
//
// A context lives for one run of one handler; handlers must not keep it.
#ifndef KCR_RUNTIME_HANDLERS_CONTEXT_H_
#define KCR_RUNTIME_HANDLERS_CONTEXT_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "base/context.h"
#include "rapidjson/document.h"
#include "runtime/client/rest_client.h"
#include "runtime/events/event_recorder.h"
#include "runtime/handlers/diff.h"

namespace kcr::handlers {

// A JSON merge patch (RFC 7386) of the object's status and metadata,
// gathered while a handler runs and sent after it returns (with the
// handler's result and the handlers' own state, in as few requests as
// possible: the status through the status subresource when the resource
// has one). Later calls win over earlier ones for the same field.
class Patch {
 public:
  Patch();

  // status.<field> = value. `field` is a dotted path ("conditions",
  // "children.count"); intermediate objects are made.
  Patch& SetStatus(std::string_view field, const rapidjson::Value& value);
  Patch& SetStatus(std::string_view field, std::string_view value);
  // A string literal is a string (not the bool it would convert to).
  Patch& SetStatus(std::string_view field, const char* value) {
    return SetStatus(field, std::string_view(value));
  }
  Patch& SetStatus(std::string_view field, int64_t value);
  Patch& SetStatus(std::string_view field, bool value);
  // status.<field> = null: removed by the merge.
  Patch& RemoveStatus(std::string_view field);
  Patch& SetLabel(std::string_view key, std::string_view value);
  Patch& RemoveLabel(std::string_view key);
  Patch& SetAnnotation(std::string_view key, std::string_view value);
  Patch& RemoveAnnotation(std::string_view key);

  // The patch as a document: {"metadata": {...}, "status": {...}}, for
  // what the setters do not cover (only "metadata" and "status" are sent).
  rapidjson::Document& json() { return doc_; }
  const rapidjson::Document& json() const { return doc_; }
  bool empty() const;

 private:
  rapidjson::Value& Section(std::string_view name);
  rapidjson::Document doc_;
};

// Logs with the object's prefix ("[namespace/name] "), and posts what it
// logs at Info or above as Events on the object (reason "Logging"), as
// kopf's per-object logger does; the level that is posted is an operator
// setting (OperatorOptions::posting_level).
class Logger {
 public:
  enum class Level { kDebug, kInfo, kWarning, kError };

  virtual ~Logger() = default;
  virtual void Log(Level level, std::string_view message) = 0;

  void Debug(std::string_view message) { Log(Level::kDebug, message); }
  void Info(std::string_view message) { Log(Level::kInfo, message); }
  void Warning(std::string_view message) { Log(Level::kWarning, message); }
  void Error(std::string_view message) { Log(Level::kError, message); }
  // The prefix it writes, "[namespace/name] " ("[name] " if cluster-scoped).
  virtual std::string_view prefix() const = 0;
};

// What every per-object handler gets.
class ObjectContext {
 public:
  virtual ~ObjectContext() = default;

  // The object as the handler sees it (the informer's copy; read-only).
  const api::Object& body() const { return *body_; }
  const api::ObjectPtr& body_ptr() const { return body_; }
  const rapidjson::Value& metadata() const { return body_->metadata(); }
  // spec and status; an empty object when absent.
  const rapidjson::Value& spec() const;
  const rapidjson::Value& status() const;
  std::string_view name() const { return body_->name(); }
  std::string_view namespace_() const { return body_->namespace_(); }
  std::string_view uid() const { return body_->uid(); }

  // Applied after the handler returns (see Patch).
  Patch& patch() { return patch_; }
  Logger& logger() { return *logger_; }
  // The operator's client (its credentials, its rate limit).
  client::RestClient& client() const { return *client_; }
  // Where the object lives on the server (its namespace set).
  const client::Resource& resource() const { return resource_; }
  // Ends when the handler's timeout passes or the operator stops; pass it
  // to every blocking call.
  const kcr::Context& ctx() const { return ctx_; }

  // Events on this object, as kopf.info / kopf.warn / kopf.exception.
  void Info(std::string_view reason, std::string_view message);
  void Warn(std::string_view reason, std::string_view message);
  void Exception(std::string_view reason, std::string_view message);

  // kopf.adopt: makes `child` this object's dependent: a controller owner
  // reference to it, its namespace (when the child has none and this
  // object is namespaced), a name made from this object's name when the
  // child has neither name nor generateName (generateName "<name>-"), and
  // this object's labels where the child has none of that key.
  absl::Status Adopt(api::ObjectBuilder& child) const;
  // kopf.label: sets `labels` on `child` (all of them, overwriting).
  static void Label(api::ObjectBuilder& child,
                    const std::map<std::string, std::string>& labels);

 protected:
  ObjectContext(api::ObjectPtr body, client::Resource resource,
                client::RestClient* client, events::EventRecorder* recorder,
                Logger* logger, kcr::Context ctx)
      : body_(std::move(body)),
        resource_(std::move(resource)),
        client_(client),
        recorder_(recorder),
        logger_(logger),
        ctx_(std::move(ctx)) {}

 private:
  api::ObjectPtr body_;
  client::Resource resource_;
  client::RestClient* client_;
  events::EventRecorder* recorder_;  // may be null: no Events
  Logger* logger_;
  kcr::Context ctx_;
  Patch patch_;
};

// Why a handler runs: kopf's causes of change handlers, and kTimer for a
// timer's run (kopf gives timers no cause of change).
enum class Reason { kCreate, kUpdate, kDelete, kResume, kTimer };
// "create", "update", "delete", "resume", "timer".
std::string_view ReasonName(Reason reason);

// What create, update, delete, resume and field handlers get, and timers.
class HandlerContext : public ObjectContext {
 public:
  // The handler's id ("create_fn", or the one it was registered with).
  const std::string& handler_id() const { return handler_id_; }
  // The cause it runs for; kTimer for a timer.
  Reason reason() const { return reason_; }

  // For object handlers: the last handled state of the object (its
  // essence: everything but status and most metadata, kopf's) and the
  // current one; old_value() is null on create, new_value() on delete
  // points at the last state seen. For field handlers: the field's old and
  // new values (null when absent). For timers: null, and the current
  // essence (diff() is empty).
  const rapidjson::Value* old_value() const { return old_value_; }
  const rapidjson::Value* new_value() const { return new_value_; }
  // Against the last handled state (not the previous watch event); for a
  // field handler, reduced to the field.
  const Diff& diff() const { return diff_; }

  // 0 on the first try.
  int retry() const { return retry_; }
  // When the handler was first tried (kept across restarts).
  absl::Time started() const { return started_; }
  // Since started().
  absl::Duration runtime() const { return runtime_; }

  // Built by the engine.
  struct Init {
    std::string handler_id;
    Reason reason = Reason::kCreate;
    const rapidjson::Value* old_value = nullptr;
    const rapidjson::Value* new_value = nullptr;
    Diff diff;
    int retry = 0;
    absl::Time started;
    absl::Duration runtime;
  };
  HandlerContext(api::ObjectPtr body, client::Resource resource,
                 client::RestClient* client, events::EventRecorder* recorder,
                 Logger* logger, kcr::Context ctx, Init init)
      : ObjectContext(std::move(body), std::move(resource), client, recorder,
                      logger, std::move(ctx)),
        handler_id_(std::move(init.handler_id)),
        reason_(init.reason),
        old_value_(init.old_value),
        new_value_(init.new_value),
        diff_(std::move(init.diff)),
        retry_(init.retry),
        started_(init.started),
        runtime_(init.runtime) {}

 private:
  std::string handler_id_;
  Reason reason_;
  const rapidjson::Value* old_value_;
  const rapidjson::Value* new_value_;
  Diff diff_;
  int retry_;
  absl::Time started_;
  absl::Duration runtime_;
};

// What an event handler gets (kopf's on.event): every watch event, no
// state kept, no retries.
class EventContext : public ObjectContext {
 public:
  // "ADDED", "MODIFIED" or "DELETED"; "" for an object of the informer's
  // initial list (kopf's None).
  std::string_view type() const { return type_; }

  EventContext(api::ObjectPtr body, client::Resource resource,
               client::RestClient* client, events::EventRecorder* recorder,
               Logger* logger, kcr::Context ctx, std::string type)
      : ObjectContext(std::move(body), std::move(resource), client, recorder,
                      logger, std::move(ctx)),
        type_(std::move(type)) {}

 private:
  std::string type_;
};

// What a daemon gets: the object as it was when the daemon started (and
// body_latest() for the cache's current copy), a stop flag it should
// watch, and a context that is cancelled once the cancellation timeout
// after the stop has passed.
class DaemonContext : public ObjectContext {
 public:
  // Whether the daemon has been asked to stop (the object is being deleted
  // or the operator is stopping): kopf's `stopped`.
  virtual bool stopped() const = 0;
  // Sleeps for `d` or until asked to stop; true if asked to stop (kopf's
  // `stopped.wait(d)`).
  virtual bool WaitForStop(absl::Duration d) = 0;
  // The object's current copy in the cache (null once it is gone).
  virtual api::ObjectPtr body_latest() const = 0;
  // Sends what patch() holds now and clears it (a daemon runs for long;
  // its patch is also sent when it returns).
  virtual absl::Status ApplyPatch() = 0;
  // How many times the daemon has been restarted after a failure (0 on
  // its first run), kopf's `retry`; in memory, so 0 again after the
  // operator restarts.
  virtual int retry() const = 0;

 protected:
  using ObjectContext::ObjectContext;
};

// What operator-level handlers get (startup, cleanup, probes).
class ActivityContext {
 public:
  ActivityContext(client::RestClient* client, kcr::Context ctx, int retry)
      : client_(client), ctx_(std::move(ctx)), retry_(retry) {}
  // Null for login handlers (there is no client yet).
  client::RestClient* client() const { return client_; }
  const kcr::Context& ctx() const { return ctx_; }
  int retry() const { return retry_; }

 private:
  client::RestClient* client_;
  kcr::Context ctx_;
  int retry_;
};

}  // namespace kcr::handlers

#endif  // KCR_RUNTIME_HANDLERS_CONTEXT_H_
