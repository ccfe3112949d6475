#include "runtime/events/event_broadcaster.h"

#include <deque>
#include <random>
#include <string>
#include <thread>
#include <utility>

#include "api/errors/errors.h"
#include "base/context.h"
#include "base/mutex.h"
#include "glog/logging.h"

namespace kcr::events {
namespace {

// The queue between recorders and the sink thread, shared with every
// recorder so that a recorder may outlive its broadcaster.
struct Queue {
  Queue(size_t capacity, const Clock* clock)
      : capacity(capacity), clock(clock) {}

  // Accepts `event` unless full or stopped. Never blocks for long.
  void Push(Event event) {
    int64_t dropped_now = 0;
    {
      MutexLock lock(&mu);
      if (!stopping && events.size() < capacity) {
        events.push_back(std::move(event));
        ++stats.recorded;
        work.Signal();
        return;
      }
      dropped_now = ++stats.dropped;
    }
    // Logged, not for every drop: a flood would flood the log too.
    if (dropped_now == 1 || dropped_now % 100 == 0) {
      LOG(WARNING) << "event dropped: queue full or shut down reason="
                   << event.reason << " object=" << event.involved_object.kind
                   << "/" << event.involved_object.namespace_ << "/"
                   << event.involved_object.name
                   << " dropped_total=" << dropped_now;
    }
  }

  const size_t capacity;
  const Clock* const clock;
  mutable Mutex mu;
  std::deque<Event> events ABSL_GUARDED_BY(mu);
  // No more events accepted (Shutdown began).
  bool stopping ABSL_GUARDED_BY(mu) = false;
  // The sink thread is to exit.
  bool stop ABSL_GUARDED_BY(mu) = false;
  // The sink thread holds an event.
  bool busy ABSL_GUARDED_BY(mu) = false;
  BroadcasterStats stats ABSL_GUARDED_BY(mu);
  CondVar work;  // an event or stop for the sink thread
  CondVar idle;  // the sink thread has nothing left
};

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9');
}

// apimachinery's IsQualifiedName: an optional DNS subdomain prefix and '/',
// then 1-63 alphanumerics, '-', '_' or '.', starting and ending
// alphanumeric. kube-apiserver refuses an Event whose reportingComponent
// is not one.
bool IsQualifiedName(std::string_view value) {
  std::string_view name = value;
  const size_t slash = value.find('/');
  if (slash != std::string_view::npos) {
    const std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty() || prefix.size() > 253) return false;
    for (char c : prefix) {
      if (!(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && c != '-' &&
          c != '.') {
        return false;
      }
    }
    if (!IsAlnum(prefix.front()) || !IsAlnum(prefix.back())) return false;
  }
  if (name.empty() || name.size() > 63) return false;
  if (!IsAlnum(name.front()) || !IsAlnum(name.back())) return false;
  for (char c : name) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// kube-apiserver's ReportingInstanceLengthLimit.
constexpr size_t kMaxReportingInstance = 128;

class Recorder : public EventRecorder {
 public:
  Recorder(std::shared_ptr<Queue> queue, EventSource source)
      : queue_(std::move(queue)), source_(std::move(source)) {}

  void Record(const api::ObjectReference& ref,
              const std::map<std::string, std::string>& annotations,
              std::string_view type, std::string_view reason,
              std::string_view message) override {
    if (type != api::kEventTypeNormal && type != api::kEventTypeWarning) {
      LOG(ERROR) << "unsupported event type: '" << type
                 << "' reason=" << reason;
      return;
    }
    if (ref.kind.empty() || ref.name.empty()) {
      LOG(ERROR) << "could not construct reference to object kind=" << ref.kind
                 << " name=" << ref.name
                 << ", will not report event reason=" << reason;
      return;
    }
    const absl::Time now = queue_->clock->Now();
    events::Event e;
    e.namespace_ = ref.namespace_.empty() ? "default" : ref.namespace_;
    e.name = NewEventName(ref.name, now);
    e.annotations = annotations;
    e.involved_object = ref;
    e.reason = std::string(reason);
    e.message = std::string(message);
    e.type = std::string(type);
    e.source = source_;
    e.first_timestamp = now;
    e.last_timestamp = now;
    e.count = 1;
    // Only values the server accepts: an Event is worth more without them
    // than refused with them.
    if (IsQualifiedName(source_.component)) {
      e.reporting_component = source_.component;
    }
    if (source_.host.size() <= kMaxReportingInstance) {
      e.reporting_instance = source_.host;
    }
    VLOG(4) << "event type=" << e.type << " reason=" << e.reason
            << " object=" << ref.kind << "/" << ref.namespace_ << "/"
            << ref.name << " message=" << e.message;
    queue_->Push(std::move(e));
  }

 private:
  const std::shared_ptr<Queue> queue_;
  const EventSource source_;
};

bool Retryable(const absl::Status& status) {
  std::optional<api::StatusError> error = api::GetStatusError(status);
  if (!error.has_value()) {
    // Transport errors; not a cancelled call.
    return status.code() != absl::StatusCode::kCancelled &&
           status.code() != absl::StatusCode::kInvalidArgument;
  }
  return error->code == 429 || error->code >= 500;
}

class BroadcasterImpl : public EventBroadcaster {
 public:
  BroadcasterImpl(std::unique_ptr<EventSink> sink, BroadcasterOptions options)
      : options_(std::move(options)),
        clock_(options_.clock != nullptr ? options_.clock : Clock::Real()),
        sink_(std::move(sink)),
        correlator_(CorrelatorWithClock(options_.correlator, clock_)),
        queue_(std::make_shared<Queue>(options_.queue_size, clock_)) {
    if (!options_.random) {
      auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
      options_.random = [engine] {
        return std::uniform_real_distribution<double>(0.0, 1.0)(*engine);
      };
    }
    auto [ctx, cancel] = WithCancel(Context::Background());
    ctx_ = ctx;
    cancel_ = cancel;
    thread_ = std::thread([this] { Run(); });
  }

  ~BroadcasterImpl() override { EventBroadcaster::Shutdown(); }

  std::unique_ptr<EventRecorder> NewRecorder(EventSource source) override {
    return std::make_unique<Recorder>(queue_, std::move(source));
  }

  bool Flush(absl::Duration timeout) override {
    Queue& q = *queue_;
    MutexLock lock(&q.mu);
    return q.mu.AwaitWithTimeout(absl::Condition(&IdleLocked, &q), timeout);
  }

  void Shutdown(absl::Duration timeout) override {
    MutexLock shutdown_lock(&shutdown_mu_);
    if (shut_down_) return;
    shut_down_ = true;
    Queue& q = *queue_;
    {
      MutexLock lock(&q.mu);
      q.stopping = true;
      const absl::Time deadline = clock_->Now() + timeout;
      while (!IdleLocked(&q) && clock_->Now() < deadline) {
        clock_->WaitUntil(&q.mu, &q.idle, deadline);
      }
      q.stop = true;
      q.work.SignalAll();
    }
    cancel_();
    thread_.join();
  }

  BroadcasterStats stats() const override {
    MutexLock lock(&queue_->mu);
    return queue_->stats;
  }

 private:
  static CorrelatorOptions CorrelatorWithClock(CorrelatorOptions options,
                                               const Clock* clock) {
    if (options.clock == nullptr) options.clock = clock;
    return options;
  }

  static bool IdleLocked(Queue* q) ABSL_EXCLUSIVE_LOCKS_REQUIRED(q->mu) {
    return q->events.empty() && !q->busy;
  }

  void Run() {
    Queue& q = *queue_;
    while (true) {
      Event event;
      {
        MutexLock lock(&q.mu);
        while (q.events.empty() && !q.stop) q.work.Wait(&q.mu);
        if (q.stop) {
          if (!q.events.empty()) {
            LOG(WARNING) << "event broadcaster shut down with "
                         << q.events.size() << " events unwritten";
            q.stats.failed += static_cast<int64_t>(q.events.size());
            q.events.clear();
          }
          q.idle.SignalAll();
          return;
        }
        event = std::move(q.events.front());
        q.events.pop_front();
        q.busy = true;
      }
      const Outcome outcome = Handle(event);
      {
        MutexLock lock(&q.mu);
        q.busy = false;
        switch (outcome) {
          case Outcome::kWritten:
            ++q.stats.written;
            break;
          case Outcome::kSkipped:
            ++q.stats.skipped;
            break;
          case Outcome::kFailed:
            ++q.stats.failed;
            break;
        }
        if (q.events.empty()) q.idle.SignalAll();
      }
    }
  }

  enum class Outcome { kWritten, kSkipped, kFailed };
  // What one attempt says about the next.
  enum class Attempt { kDone, kFailed, kRetry };

  Outcome Handle(const Event& event) {
    CorrelateResult result = correlator_.Correlate(event);
    if (result.skip) {
      VLOG(2) << "event dropped by the spam filter reason=" << event.reason
              << " object=" << event.involved_object.kind << "/"
              << event.involved_object.namespace_ << "/"
              << event.involved_object.name;
      return Outcome::kSkipped;
    }
    for (int tries = 1;; ++tries) {
      switch (WriteOnce(result)) {
        case Attempt::kDone:
          return Outcome::kWritten;
        case Attempt::kFailed:
          return Outcome::kFailed;
        case Attempt::kRetry:
          break;
      }
      if (tries >= options_.max_tries) {
        LOG(ERROR) << "unable to write event (retry limit exceeded) name="
                   << result.event.namespace_ << "/" << result.event.name
                   << " reason=" << result.event.reason;
        return Outcome::kFailed;
      }
      // The first wait is jittered so that many processes that failed
      // together (an API server restart) do not retry together.
      const absl::Duration wait =
          tries == 1 ? options_.retry_interval * options_.random()
                     : options_.retry_interval;
      if (options_.sleep) {
        options_.sleep(wait);
      } else {
        (void)clock_->Sleep(ctx_, wait);
      }
      if (ctx_.done()) return Outcome::kFailed;
    }
  }

  // `event` as the object to send; null, logged, when it cannot be built.
  static api::ObjectPtr BuildOrLog(const Event& event) {
    absl::StatusOr<api::ObjectPtr> object = event.ToObject();
    if (object.ok()) return *std::move(object);
    LOG(ERROR) << "unable to build event name=" << event.name << ": "
               << object.status();
    return nullptr;
  }

  Attempt WriteOnce(const CorrelateResult& result) {
    absl::StatusOr<api::ObjectPtr> written = absl::UnknownError("not written");
    const bool repeat = !result.patch.empty();
    if (repeat) {
      api::ObjectPtr object = BuildOrLog(result.event);
      if (object == nullptr) return Attempt::kFailed;
      written = sink_->Patch(ctx_, *object, result.patch);
    }
    if (!repeat || api::IsNotFound(written.status())) {
      // A new Event, or one that is gone (expired on the server): create
      // it, without the resourceVersion of the old one (a new Event has
      // none, so it is built once).
      api::ObjectPtr object;
      if (result.event.resource_version.empty()) {
        object = BuildOrLog(result.event);
      } else {
        Event fresh = result.event;
        fresh.resource_version.clear();
        object = BuildOrLog(fresh);
      }
      if (object == nullptr) return Attempt::kFailed;
      written = sink_->Create(ctx_, *object);
    }
    if (written.ok()) {
      Event state = result.event;
      state.name = std::string((*written)->name());
      state.resource_version = std::string((*written)->resource_version());
      correlator_.UpdateState(result.key, state);
      return Attempt::kDone;
    }
    const absl::Status& status = written.status();
    if (api::IsAlreadyExists(status)) {
      VLOG(5) << "server rejected event (will not retry) name="
              << result.event.name << ": " << status;
      return Attempt::kDone;
    }
    if (!ctx_.done() && Retryable(status)) {
      VLOG(2) << "unable to write event name=" << result.event.name
              << " (may retry): " << status;
      return Attempt::kRetry;
    }
    LOG(ERROR) << "server rejected event (will not retry) name="
               << result.event.namespace_ << "/" << result.event.name
               << " reason=" << result.event.reason << ": " << status;
    return Attempt::kFailed;
  }

  BroadcasterOptions options_;
  const Clock* const clock_;
  const std::unique_ptr<EventSink> sink_;
  // Used by the sink thread only.
  EventCorrelator correlator_;
  const std::shared_ptr<Queue> queue_;
  Context ctx_;
  CancelFunc cancel_;
  std::thread thread_;
  Mutex shutdown_mu_;
  bool shut_down_ ABSL_GUARDED_BY(shutdown_mu_) = false;
};

}  // namespace

std::unique_ptr<EventBroadcaster> NewBroadcaster(
    std::unique_ptr<EventSink> sink, BroadcasterOptions options) {
  return std::make_unique<BroadcasterImpl>(std::move(sink), std::move(options));
}

std::unique_ptr<EventBroadcaster> NewBroadcaster(client::RestClient* client,
                                                 BroadcasterOptions options) {
  return NewBroadcaster(NewRestEventSink(client), std::move(options));
}

}  // namespace kcr::events
