#include "runtime/cache/reflector.h"

#include <algorithm>
#include <cctype>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "api/errors/errors.h"
#include "base/status_macros.h"
#include "base/string_view.h"
#include "glog/logging.h"

namespace kcr::cache {
namespace {

// tools/pager's default page size.
constexpr int64_t kDefaultPageSize = 500;
// The annotation on the bookmark that ends a watch-list's initial events.
constexpr std::string_view kInitialEventsEnd = "k8s.io/initial-events-end";
// A watch that ends sooner than this with no event is an error.
constexpr absl::Duration kVeryShortWatch = absl::Seconds(1);

// Holds a store's wake-ups (Store::HoldWakeups) while set, and releases
// them when unset or destroyed.
class HeldWakeups {
 public:
  explicit HeldWakeups(Store* store) : store_(store) {}
  ~HeldWakeups() { Set(false); }
  HeldWakeups(const HeldWakeups&) = delete;
  HeldWakeups& operator=(const HeldWakeups&) = delete;

  void Set(bool hold) {
    if (hold == held_) return;
    held_ = hold;
    if (hold) {
      store_->HoldWakeups();
    } else {
      store_->ReleaseWakeups();
    }
  }

 private:
  Store* const store_;
  bool held_ = false;
};

bool IsExpired(const absl::Status& s) {
  return api::IsResourceExpired(s) || api::IsGone(s);
}

// The server cannot serve a resourceVersion newer than it has seen yet.
bool IsTooLargeResourceVersion(const absl::Status& s) {
  std::optional<api::StatusError> e = api::GetStatusError(s);
  if (!e.has_value()) return false;
  for (const api::StatusCause& cause : e->causes) {
    if (cause.reason == "ResourceVersionTooLarge") return true;
  }
  return api::IsTimeout(s) &&
         e->message.find("Too large resource version") != std::string::npos;
}

bool ContainsIgnoringCase(std::string_view text, std::string_view word) {
  auto it = std::search(text.begin(), text.end(), word.begin(), word.end(),
                        [](char a, char b) {
                          return std::tolower(static_cast<unsigned char>(a)) ==
                                 std::tolower(static_cast<unsigned char>(b));
                        });
  return it != text.end();
}

// A transport failure in which the server refused the connection (the
// client reports transport failures as kUnavailable without an API
// status, naming the cause).
bool IsConnectionRefused(const absl::Status& s) {
  return s.code() == absl::StatusCode::kUnavailable &&
         !api::GetStatusError(s).has_value() &&
         ContainsIgnoringCase(ToStd(s.message()), "connection refused");
}

// Errors on opening a watch that call for a backoff and a new watch, not a
// relist (client-go's isWatchErrorRetriable).
bool IsWatchErrorRetriable(const absl::Status& s) {
  return IsConnectionRefused(s) || api::IsTooManyRequests(s);
}

size_t EventIndex(api::EventType type) { return static_cast<size_t>(type); }

// The objects of a streaming list until its initial events end, keyed as
// the store keys them, in the order they first appeared.
class InitialEvents {
 public:
  absl::Status Apply(api::EventType type, api::ObjectPtr object) {
    KCR_ASSIGN_OR_RETURN(std::string key, MetaNamespaceKey(*object));
    if (type == api::EventType::kDeleted) {
      auto it = index_.find(key);
      if (it != index_.end()) {
        objects_[it->second] = nullptr;
        index_.erase(it);
      }
      return absl::OkStatus();
    }
    auto [it, inserted] = index_.try_emplace(std::move(key), objects_.size());
    if (inserted) {
      objects_.push_back(std::move(object));
    } else {
      objects_[it->second] = std::move(object);
    }
    return absl::OkStatus();
  }

  std::vector<api::ObjectPtr> Take() {
    std::vector<api::ObjectPtr> out;
    out.reserve(index_.size());
    for (api::ObjectPtr& object : objects_) {
      if (object != nullptr) out.push_back(std::move(object));
    }
    objects_.clear();
    index_.clear();
    return out;
  }

 private:
  std::vector<api::ObjectPtr> objects_;
  absl::flat_hash_map<std::string, size_t> index_;
};

}  // namespace

Reflector::Reflector(ListerWatcher* lister_watcher, Store* store,
                     ReflectorOptions options)
    : lister_watcher_(lister_watcher),
      store_(store),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : Clock::Real()),
      random_(options_.random != nullptr ? options_.random : NewRandom()),
      // The backoff and the watch timeouts draw from the same source, on the
      // same thread.
      backoff_(options_.backoff, clock_, [this] { return random_(); }) {
  if (MetricsProvider* metrics =
          ResolveMetricsProvider(options_.metrics, options_.name)) {
    for (api::EventType type :
         {api::EventType::kAdded, api::EventType::kModified,
          api::EventType::kDeleted, api::EventType::kBookmark,
          api::EventType::kError}) {
      events_metric_[EventIndex(type)] = metrics->NewWatchEventsMetric(
          options_.name, api::EventTypeName(type));
    }
    relists_metric_ = metrics->NewRelistsMetric(options_.name);
    watch_restarts_metric_ = metrics->NewWatchRestartsMetric(options_.name);
    last_rv_metric_ = metrics->NewLastResourceVersionMetric(options_.name);
    kind_mismatch_metric_ =
        metrics->NewDroppedObjectsMetric(options_.name, kDropKindMismatch);
    no_key_metric_ =
        metrics->NewDroppedObjectsMetric(options_.name, kDropNoKey);
  }
}

Reflector::~Reflector() = default;

std::string Reflector::LastSyncResourceVersion() const {
  MutexLock lock(&mu_);
  return last_sync_rv_;
}

void Reflector::SetLastSyncResourceVersion(std::string rv) {
  if (last_rv_metric_ != nullptr) {
    uint64_t numeric = 0;
    if (absl::SimpleAtoi(ToAbsl(rv), &numeric)) {
      last_rv_metric_->Set(static_cast<double>(numeric));
    }
  }
  MutexLock lock(&mu_);
  last_sync_rv_ = std::move(rv);
}

std::string Reflector::RelistResourceVersion() const {
  if (last_sync_rv_unavailable_) return "";
  std::string rv = LastSyncResourceVersion();
  // The first list may be served from the watch cache, at any version.
  return rv.empty() ? "0" : rv;
}

std::string Reflector::RewatchResourceVersion() const {
  if (last_sync_rv_unavailable_) return "";
  return LastSyncResourceVersion();
}

int64_t Reflector::RandomWatchTimeoutSeconds() {
  absl::Duration span = options_.max_watch_timeout - options_.min_watch_timeout;
  if (span < absl::ZeroDuration()) span = absl::ZeroDuration();
  return absl::ToInt64Seconds(options_.min_watch_timeout + span * random_());
}

absl::Status Reflector::Run(const Context& ctx) {
  {
    MutexLock lock(&mu_);
    if (running_) {
      return absl::FailedPreconditionError("Reflector::Run is already running");
    }
    running_ = true;
  }
  VLOG(2) << "reflector starting name=" << options_.name;
  while (!ctx.done()) {
    absl::Status s = ListAndWatch(ctx);
    if (ctx.done()) break;
    if (!s.ok()) {
      LOG(WARNING) << "list and watch failed name=" << options_.name
                   << " error=" << s;
    }
    bool relist;
    {
      MutexLock lock(&mu_);
      relist = relisted_at_ < relists_requested_ && s.ok();
    }
    // A relist asked for by Relist() starts at once, or once the burst of
    // requests it belongs to is over.
    if (relist) {
      if (!WaitForRelistBatch(ctx).ok()) break;
      continue;
    }
    // client-go's BackoffUntil: every new list-and-watch waits its turn.
    if (!backoff_.Wait(ctx).ok()) break;
  }
  VLOG(2) << "reflector stopped name=" << options_.name;
  MutexLock lock(&mu_);
  running_ = false;
  return absl::OkStatus();
}

absl::Status Reflector::WaitForRelistBatch(const Context& ctx) {
  const absl::Duration window = options_.relist_batch_window;
  if (window <= absl::ZeroDuration()) return absl::OkStatus();
  const absl::Time give_up = clock_->Now() + 10 * window;
  while (true) {
    absl::Time quiet;
    {
      MutexLock lock(&mu_);
      quiet = std::min(relist_requested_at_ + window, give_up);
    }
    const absl::Time now = clock_->Now();
    if (now >= quiet) return absl::OkStatus();
    KCR_RETURN_IF_ERROR(clock_->Sleep(ctx, quiet - now));
  }
}

void Reflector::Relist() {
  MutexLock lock(&mu_);
  ++relists_requested_;
  relist_requested_at_ = clock_->Now();
  VLOG(2) << "relist requested name=" << options_.name;
  if (cancel_watch_) cancel_watch_();
}

bool Reflector::Relisted() const {
  MutexLock lock(&mu_);
  return relisted_at_ >= relists_requested_;
}

absl::Status Reflector::ListAndWatch(const Context& ctx) {
  VLOG(2) << "listing and watching name=" << options_.name;
  int64_t generation;
  {
    MutexLock lock(&mu_);
    generation = relists_requested_;
  }
  std::unique_ptr<client::WatchStream> stream;
  bool list = true;
  if (options_.use_watch_list) {
    absl::StatusOr<std::unique_ptr<client::WatchStream>> streamed =
        WatchList(ctx);
    if (ctx.done()) return absl::OkStatus();
    if (streamed.ok()) {
      stream = *std::move(streamed);
      list = false;
    } else {
      LOG(WARNING) << "streaming list failed, falling back to list and watch "
                      "name="
                   << options_.name << " error=" << streamed.status();
    }
  }
  if (list) {
    absl::Status listed = List(ctx);
    if (ctx.done()) return absl::OkStatus();
    KCR_RETURN_IF_ERROR(listed);
  }

  auto [watch_ctx, cancel_watch] = WithCancel(ctx);
  {
    MutexLock lock(&mu_);
    relisted_at_ = std::max(relisted_at_, generation);
    // A Relist() during the list: that list may have used the old options.
    if (relists_requested_ > generation) {
      cancel_watch();
      if (stream != nullptr) stream->Stop();
      return absl::OkStatus();
    }
    cancel_watch_ = cancel_watch;
  }
  std::thread resync;
  if (options_.resync_period > absl::ZeroDuration()) {
    {
      MutexLock lock(&mu_);
      resync_error_ = absl::OkStatus();
    }
    resync = std::thread([this, watch_ctx = watch_ctx, cancel = cancel_watch] {
      ResyncLoop(watch_ctx, cancel);
    });
  }
  absl::Status watched = Watch(watch_ctx, std::move(stream));
  bool relist;
  {
    MutexLock lock(&mu_);
    cancel_watch_ = nullptr;
    relist = relists_requested_ > generation;
  }
  cancel_watch();
  if (resync.joinable()) resync.join();
  if (ctx.done() || relist) return absl::OkStatus();
  {
    MutexLock lock(&mu_);
    if (!resync_error_.ok()) return resync_error_;
  }
  return watched;
}

void Reflector::ResyncLoop(const Context& ctx, const CancelFunc& cancel_watch) {
  std::unique_ptr<Timer> timer = clock_->NewTimer(options_.resync_period);
  while (timer->Wait(ctx).ok()) {
    if (!options_.should_resync || options_.should_resync()) {
      VLOG(4) << "forcing resync name=" << options_.name;
      absl::Status s = store_->Resync();
      if (!s.ok()) {
        MutexLock lock(&mu_);
        resync_error_ = s;
        cancel_watch();
        return;
      }
    }
    timer->Reset(options_.resync_period);
  }
}

absl::Status Reflector::List(const Context& ctx) {
  client::ListOptions options;
  options.resource_version = RelistResourceVersion();
  int64_t page_size = kDefaultPageSize;
  if (options_.page_size != 0) {
    page_size = options_.page_size;
  } else if (paginated_result_) {
    // A "0" list came back paged: the server has no watch cache for this
    // resource, so keep paging.
  } else if (!options.resource_version.empty() &&
             options.resource_version != "0") {
    // Without a limit, a list at a specific resourceVersion is served from
    // the watch cache: no thundering herd on etcd after a server restart.
    page_size = 0;
  }

  std::vector<api::ObjectPtr> items;
  std::string rv;
  bool paginated = false;
  absl::Status s = PagedList(ctx, options, page_size, &items, &rv, &paginated);
  if (!s.ok() && !ctx.done() &&
      (IsExpired(s) || IsTooLargeResourceVersion(s))) {
    // The version is gone (or not there yet): list at once at "", a
    // consistent read, so that the reflector makes progress.
    VLOG(2) << "list at an unavailable resourceVersion, listing at \"\" name="
            << options_.name << " rv=" << options.resource_version
            << " error=" << s;
    last_sync_rv_unavailable_ = true;
    client::ListOptions retry;
    retry.resource_version = RelistResourceVersion();
    s = PagedList(ctx, retry, page_size, &items, &rv, &paginated);
  }
  if (!s.ok()) {
    return absl::Status(s.code(), "list of " + options_.name +
                                      " failed: " + std::string(s.message()));
  }
  // Only a paged answer to "0" says the watch cache is off; a "" list is
  // paged by etcd even when the watch cache is on.
  if (options.resource_version == "0" && paginated) paginated_result_ = true;
  last_sync_rv_unavailable_ = false;

  const size_t count = items.size();
  absl::Status replaced = store_->Replace(std::move(items), rv);
  if (!replaced.ok()) {
    return absl::Status(replaced.code(), "unable to sync list result: " +
                                             std::string(replaced.message()));
  }
  if (listed_ && relists_metric_ != nullptr) relists_metric_->Inc();
  listed_ = true;
  VLOG(2) << "listed name=" << options_.name << " items=" << count
          << " rv=" << rv;
  SetLastSyncResourceVersion(std::move(rv));
  return absl::OkStatus();
}

absl::Status Reflector::PagedList(const Context& ctx,
                                  client::ListOptions options,
                                  int64_t page_size,
                                  std::vector<api::ObjectPtr>* items,
                                  std::string* resource_version,
                                  bool* paginated) {
  items->clear();
  *paginated = false;
  if (options.limit == 0) options.limit = page_size;
  const std::string requested_rv = options.resource_version;
  const std::string requested_match = options.resource_version_match;
  auto collect = [items](api::ObjectPtr item) {
    items->push_back(std::move(item));
    return absl::OkStatus();
  };
  bool first = true;
  while (true) {
    absl::StatusOr<client::ListMeta> page =
        lister_watcher_->List(ctx, options, collect);
    if (!page.ok()) {
      // Only an expired continue token (page 2 or later) falls back to a
      // full list: the version the first page set was compacted away.
      if (!api::IsResourceExpired(page.status()) ||
          options.continue_token.empty()) {
        return page.status();
      }
      LOG(WARNING) << "continue token expired, listing in full name="
                   << options_.name << " rv=" << requested_rv;
      options.limit = 0;
      options.continue_token.clear();
      options.resource_version = requested_rv;
      options.resource_version_match = requested_match;
      items->clear();
      KCR_ASSIGN_OR_RETURN(client::ListMeta full,
                           lister_watcher_->List(ctx, options, collect));
      *resource_version = std::move(full.resource_version);
      return absl::OkStatus();
    }
    // A list's version is its first page's.
    if (first) *resource_version = page->resource_version;
    first = false;
    if (page->continue_token.empty()) return absl::OkStatus();
    options.continue_token = page->continue_token;
    // The server refuses a resourceVersion with a continue token.
    options.resource_version.clear();
    options.resource_version_match.clear();
    *paginated = true;
  }
}

absl::StatusOr<std::unique_ptr<client::WatchStream>> Reflector::OpenWatch(
    const Context& ctx, const client::ListOptions& options) {
  if (watched_ && watch_restarts_metric_ != nullptr) {
    watch_restarts_metric_->Inc();
  }
  watched_ = true;
  VLOG(4) << "watch name=" << options_.name
          << " rv=" << options.resource_version;
  return lister_watcher_->Watch(ctx, options);
}

absl::StatusOr<std::unique_ptr<client::WatchStream>> Reflector::WatchList(
    const Context& ctx) {
  // Errors that call for another try rather than a fallback to a list.
  auto retriable = [&](const absl::Status& s) {
    if (IsWatchErrorRetriable(s)) {
      VLOG(2) << "streaming list refused, backing off name=" << options_.name
              << " error=" << s;
      (void)backoff_.Wait(ctx);
      return true;
    }
    if (IsExpired(s) || IsTooLargeResourceVersion(s)) {
      // Start over from a consistent snapshot.
      last_sync_rv_unavailable_ = true;
      return true;
    }
    return false;
  };

  std::unique_ptr<client::WatchStream> stream;
  std::string rv;
  InitialEvents initial;
  while (true) {
    if (ctx.done()) return ctx.Err();
    rv.clear();
    initial = InitialEvents();
    client::ListOptions options;
    options.resource_version = RewatchResourceVersion();
    options.resource_version_match = "NotOlderThan";
    options.send_initial_events = true;
    options.allow_watch_bookmarks = true;
    options.timeout_seconds = RandomWatchTimeoutSeconds();
    const absl::Time start = clock_->Now();
    absl::StatusOr<std::unique_ptr<client::WatchStream>> opened =
        OpenWatch(ctx, options);
    if (!opened.ok()) {
      if (retriable(opened.status())) continue;
      return opened.status();
    }
    stream = *std::move(opened);
    bool ended = false;
    // Initial events move only the list's version, not the reflector's:
    // they are not in resourceVersion order.
    absl::Status s = HandleWatch(
        ctx, start, stream.get(),
        [&initial](api::EventType type, api::ObjectPtr object) {
          return initial.Apply(type, std::move(object));
        },
        [&rv](std::string v) { rv = std::move(v); },
        /*stop_at_initial_events_end=*/true, &ended);
    if (!s.ok()) {
      stream->Stop();
      if (ctx.done()) return ctx.Err();
      if (retriable(s)) continue;
      return s;
    }
    if (ended) break;
    // Closed before the initial events ended: start over.
    stream->Stop();
  }
  last_sync_rv_unavailable_ = false;
  std::vector<api::ObjectPtr> items = initial.Take();
  const size_t count = items.size();
  absl::Status replaced = store_->Replace(std::move(items), rv);
  if (!replaced.ok()) {
    stream->Stop();
    return absl::Status(replaced.code(), "unable to sync watch-list result: " +
                                             std::string(replaced.message()));
  }
  if (listed_ && relists_metric_ != nullptr) relists_metric_->Inc();
  listed_ = true;
  VLOG(2) << "streamed list name=" << options_.name << " items=" << count
          << " rv=" << rv;
  SetLastSyncResourceVersion(std::move(rv));
  return stream;
}

absl::Status Reflector::Watch(const Context& ctx,
                              std::unique_ptr<client::WatchStream> stream) {
  const EventSink to_store = [this](api::EventType type,
                                    api::ObjectPtr object) {
    switch (type) {
      case api::EventType::kAdded:
        return store_->Add(std::move(object));
      case api::EventType::kModified:
        return store_->Update(std::move(object));
      case api::EventType::kDeleted:
        return store_->Delete(std::move(object));
      default:
        return absl::OkStatus();
    }
  };
  const auto set_rv = [this](std::string rv) {
    SetLastSyncResourceVersion(std::move(rv));
  };
  while (true) {
    if (ctx.done()) return absl::OkStatus();
    const absl::Time start = clock_->Now();
    if (stream == nullptr) {
      client::ListOptions options;
      options.resource_version = LastSyncResourceVersion();
      options.timeout_seconds = RandomWatchTimeoutSeconds();
      options.allow_watch_bookmarks = true;
      absl::StatusOr<std::unique_ptr<client::WatchStream>> opened =
          OpenWatch(ctx, options);
      if (!opened.ok()) {
        if (ctx.done()) return absl::OkStatus();
        if (IsWatchErrorRetriable(opened.status())) {
          VLOG(2) << "watch refused, backing off name=" << options_.name
                  << " error=" << opened.status();
          if (!backoff_.Wait(ctx).ok()) return absl::OkStatus();
          continue;
        }
        return opened.status();
      }
      stream = *std::move(opened);
    }
    absl::Status s = HandleWatch(ctx, start, stream.get(), to_store, set_rv,
                                 /*stop_at_initial_events_end=*/false, nullptr);
    stream->Stop();
    stream = nullptr;
    if (s.ok()) continue;  // ended cleanly: watch again from the last RV
    if (ctx.done()) return absl::OkStatus();
    if (IsExpired(s)) {
      // The list after this asks for the last synced version, which a
      // list may still serve ("not older than"); only a 410 there goes to
      // "".
      VLOG(4) << "watch expired name=" << options_.name << " error=" << s;
    } else if (api::IsTooManyRequests(s)) {
      VLOG(2) << "watch answered 429, backing off name=" << options_.name;
      if (!backoff_.Wait(ctx).ok()) return absl::OkStatus();
      continue;
    } else {
      LOG(WARNING) << "watch ended name=" << options_.name << " error=" << s;
    }
    return absl::OkStatus();
  }
}

absl::Status Reflector::HandleWatch(
    const Context& ctx, absl::Time start, client::WatchStream* stream,
    const EventSink& sink, const std::function<void(std::string)>& set_rv,
    bool stop_at_initial_events_end, bool* initial_events_end) {
  int64_t events = 0;
  client::WatchEvent event;
  HeldWakeups held(store_);
  while (stream->Next(ctx, &event)) {
    // A run of events the stream already has goes to the store as one:
    // its consumer wakes once for the run, not once per event. Released
    // before a Next that may wait for the server.
    held.Set(stream->Buffered() > 0);
    if (CounterMetric* m = events_metric_[EventIndex(event.type)].get()) {
      m->Inc();
    }
    if (event.type == api::EventType::kError) {
      if (event.error.ok()) {
        return absl::InternalError("watch ERROR event without an error");
      }
      return event.error;
    }
    const api::ObjectPtr& object = event.object;
    if (object == nullptr) {
      LOG(ERROR) << "watch event without an object name=" << options_.name
                 << " type=" << api::EventTypeName(event.type);
      if (no_key_metric_ != nullptr) no_key_metric_->Inc();
      continue;
    }
    if ((!options_.expected_kind.empty() &&
         object->kind() != options_.expected_kind) ||
        (!options_.expected_api_version.empty() &&
         object->api_version() != options_.expected_api_version)) {
      LOG(ERROR) << "watch event of an unexpected kind name=" << options_.name
                 << " expected=" << options_.expected_api_version << "/"
                 << options_.expected_kind << " got=" << object->api_version()
                 << "/" << object->kind();
      if (kind_mismatch_metric_ != nullptr) kind_mismatch_metric_->Inc();
      continue;
    }
    std::string rv(object->resource_version());
    switch (event.type) {
      case api::EventType::kAdded:
      case api::EventType::kModified:
      case api::EventType::kDeleted: {
        absl::Status s = sink(event.type, object);
        if (!s.ok()) {
          LOG(ERROR) << "unable to apply watch event name=" << options_.name
                     << " type=" << api::EventTypeName(event.type)
                     << " object=" << object->namespace_() << "/"
                     << object->name() << " error=" << s;
          if (no_key_metric_ != nullptr &&
              s.code() == absl::StatusCode::kInvalidArgument) {
            no_key_metric_->Inc();
          }
        }
        break;
      }
      case api::EventType::kBookmark:
        // A bookmark only moves the resourceVersion on.
        if (object->Annotation(kInitialEventsEnd) == "true" &&
            initial_events_end != nullptr) {
          *initial_events_end = true;
        }
        break;
      case api::EventType::kError:
        break;
    }
    set_rv(std::move(rv));
    ++events;
    VLOG(4) << "watch event name=" << options_.name
            << " type=" << api::EventTypeName(event.type);
    if (stop_at_initial_events_end && initial_events_end != nullptr &&
        *initial_events_end) {
      return absl::OkStatus();
    }
  }

  const absl::Status status = stream->status();
  if (ctx.done()) return ctx.Err();
  switch (status.code()) {
    case absl::StatusCode::kOk:
    // A broken connection or a stream cut mid-event ends the watch as a
    // clean close does (client-go's StreamWatcher closes quietly on an
    // unexpected EOF): watch again from the last resourceVersion.
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDataLoss:
      break;
    case absl::StatusCode::kInvalidArgument:
      return absl::InternalError(
          "unable to decode an event from the watch stream: " +
          std::string(status.message()));
    default:
      return status;
  }
  if (clock_->Now() - start < kVeryShortWatch && events == 0) {
    return absl::UnavailableError(
        "very short watch: " + options_.name +
        ": unexpected watch close - watch lasted less than a second and no "
        "items received");
  }
  VLOG(4) << "watch closed name=" << options_.name << " events=" << events;
  return absl::OkStatus();
}

}  // namespace kcr::cache
