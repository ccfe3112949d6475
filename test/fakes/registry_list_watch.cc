#include "test/fakes/registry_list_watch.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "api/errors/errors.h"
#include "api/schema/field_error.h"
#include "api/selector/field_selector.h"
#include "api/selector/label_selector.h"
#include "apiserver/storage/storage.h"
#include "apiserver/storage/watch_cache.h"
#include "base/mutex.h"
#include "base/string_view.h"

namespace kcr::testing {
namespace {

api::ObjectPtr Bookmark(const apiserver::ResourceInfo& resource, int64_t rv,
                        bool initial_events_end) {
  std::string json = R"({"kind":")";
  json.append(resource.kind()).append(R"(","apiVersion":")");
  json.append(resource.api_version());
  json.append(R"(","metadata":{"resourceVersion":")");
  json.append(std::to_string(rv)).append("\"");
  if (initial_events_end) {
    json.append(R"(,"annotations":{"k8s.io/initial-events-end":"true"})");
  }
  json.append("}}");
  return *api::Object::Parse(json);
}

client::WatchEvent ErrorEvent(absl::Status error) {
  return client::WatchEvent{api::EventType::kError, nullptr, std::move(error)};
}

// One watch: the initial events first, then what the CacheWatcher hands
// out, with bookmarks and the timeout on the clock.
class RegistryWatchStream final : public client::WatchStream {
 public:
  struct Params {
    apiserver::ResourceInfoPtr resource;
    const Clock* clock = nullptr;
    std::deque<client::WatchEvent> initial;
    // Null when the watch could not start (`initial` ends with its error).
    std::unique_ptr<apiserver::CacheWatcher> watcher;
    int64_t cursor = 0;
    bool bookmarks = false;
    absl::Duration bookmark_interval;
    absl::Time end;
  };

  RegistryWatchStream(Params params, const Context& ctx)
      : resource_(std::move(params.resource)),
        clock_(params.clock),
        watcher_(std::move(params.watcher)),
        bookmarks_(params.bookmarks),
        bookmark_interval_(params.bookmark_interval),
        end_(params.end),
        watch_ctx_(ctx),
        pending_(std::move(params.initial)),
        cursor_(params.cursor),
        next_bookmark_(clock_->Now() + bookmark_interval_) {
    if (watcher_ != nullptr) {
      on_watch_done_ = ctx.OnDone([this] { watcher_->Interrupt(); });
    }
  }

  ~RegistryWatchStream() override { on_watch_done_.Reset(); }

  bool Next(const Context& ctx, client::WatchEvent* event) override {
    Context::DoneCallback on_done;
    if (watcher_ != nullptr) {
      on_done = ctx.OnDone([this] { watcher_->Interrupt(); });
    }
    while (true) {
      if (stopped_.load()) return Finish(absl::CancelledError("watch stopped"));
      if (watch_ctx_.done()) return Finish(watch_ctx_.Err());
      if (ctx.done()) return Finish(ctx.Err());
      if (!pending_.empty()) {
        *event = std::move(pending_.front());
        pending_.pop_front();
        return true;
      }
      if (ending_ || watcher_ == nullptr) return Finish(absl::OkStatus());
      const absl::Time now = clock_->Now();
      if (now >= end_) {
        // timeoutSeconds: a last bookmark, then a clean end.
        if (bookmarks_) pending_.push_back(BookmarkEvent());
        ending_ = true;
        continue;
      }
      absl::Time deadline = end_;
      if (bookmarks_) deadline = std::min(deadline, next_bookmark_);
      apiserver::CacheWatcher::Batch batch = watcher_->Next(deadline, 1000);
      cursor_ = std::max(cursor_, batch.resource_version);
      for (apiserver::WatchEvent& e : batch.events) {
        pending_.push_back(client::WatchEvent{
            e.type, apiserver::Registry::AtVersion(e.object, *resource_), {}});
      }
      if (batch.terminated) {
        // Too slow to keep up: 410 when the history no longer reaches the
        // cursor, else a clean end to resume from.
        if (!batch.error.ok()) pending_.push_back(ErrorEvent(batch.error));
        ending_ = true;
        continue;
      }
      if (bookmarks_ && clock_->Now() >= next_bookmark_ &&
          clock_->Now() < end_) {
        pending_.push_back(BookmarkEvent());
        next_bookmark_ = clock_->Now() + bookmark_interval_;
      }
    }
  }

  void Stop() override {
    stopped_.store(true);
    if (watcher_ != nullptr) watcher_->Interrupt();
  }

  absl::Status status() const override {
    MutexLock lock(&mu_);
    return status_;
  }

 private:
  client::WatchEvent BookmarkEvent() const {
    return client::WatchEvent{
        api::EventType::kBookmark, Bookmark(*resource_, cursor_, false), {}};
  }

  bool Finish(absl::Status status) {
    MutexLock lock(&mu_);
    if (!finished_) {
      finished_ = true;
      status_ = std::move(status);
    }
    return false;
  }

  const apiserver::ResourceInfoPtr resource_;
  const Clock* const clock_;
  const std::unique_ptr<apiserver::CacheWatcher> watcher_;
  const bool bookmarks_;
  const absl::Duration bookmark_interval_;
  const absl::Time end_;
  const Context watch_ctx_;
  std::atomic<bool> stopped_{false};
  Context::DoneCallback on_watch_done_;

  // Used by the thread in Next only.
  std::deque<client::WatchEvent> pending_;
  int64_t cursor_;
  absl::Time next_bookmark_;
  bool ending_ = false;

  mutable Mutex mu_;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

RegistryListWatch::RegistryListWatch(apiserver::Registry* registry,
                                     apiserver::ResourceInfoPtr resource,
                                     RegistryListWatchOptions options)
    : registry_(registry),
      resource_(std::move(resource)),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : Clock::Real()) {}

absl::StatusOr<apiserver::ListOptions> RegistryListWatch::Convert(
    const client::ListOptions& options) const {
  apiserver::ListOptions lo;
  if (!options.label_selector.empty()) {
    absl::StatusOr<api::LabelSelector> s =
        api::LabelSelector::Parse(options.label_selector);
    if (!s.ok()) {
      return api::StatusError::BadRequest(ToStd(s.status().message()))
          .ToStatus();
    }
    lo.label_selector = *std::move(s);
  }
  if (!options.field_selector.empty()) {
    absl::StatusOr<api::FieldSelector> s =
        api::FieldSelector::Parse(options.field_selector);
    if (!s.ok()) {
      return api::StatusError::BadRequest(ToStd(s.status().message()))
          .ToStatus();
    }
    lo.field_selector = *std::move(s);
  }
  lo.resource_version = options.resource_version;
  lo.resource_version_match = options.resource_version_match;
  lo.limit = options.limit;
  lo.continue_token = options.continue_token;
  absl::Status valid = apiserver::Registry::ValidateSelectors(*resource_, &lo);
  if (!valid.ok()) return valid;
  return lo;
}

absl::StatusOr<client::ListMeta> RegistryListWatch::List(
    const Context& ctx, const client::ListOptions& options,
    const cache::ListItemFunc& on_item) {
  if (ctx.done()) return ctx.Err();
  absl::StatusOr<apiserver::ListOptions> lo = Convert(options);
  if (!lo.ok()) return lo.status();
  absl::StatusOr<apiserver::ListResult> listed =
      registry_->List(*resource_, options_.ns, *lo);
  if (!listed.ok()) return listed.status();
  for (api::ObjectPtr& item : listed->items) {
    absl::Status s = on_item(std::move(item));
    if (!s.ok()) return s;
  }
  client::ListMeta meta;
  meta.api_version = resource_->api_version();
  meta.kind = resource_->kind() + "List";
  meta.resource_version = std::move(listed->resource_version);
  meta.continue_token = std::move(listed->continue_token);
  meta.remaining_item_count = listed->remaining_item_count;
  return meta;
}

absl::StatusOr<std::unique_ptr<client::WatchStream>> RegistryListWatch::Watch(
    const Context& ctx, const client::ListOptions& options) {
  if (ctx.done()) return ctx.Err();
  absl::StatusOr<apiserver::ListOptions> lo = Convert(options);
  if (!lo.ok()) return lo.status();

  // What kube-apiserver checks of a watch's options.
  std::vector<api::FieldError> errors;
  auto forbidden = [&errors](const char* field, const char* detail) {
    api::FieldError e;
    e.type = api::FieldError::Type::kForbidden;
    e.field = field;
    e.detail = detail;
    errors.push_back(std::move(e));
  };
  const std::string& rv = options.resource_version;
  if (options.send_initial_events) {
    if (options.resource_version_match != "NotOlderThan") {
      forbidden("resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to "
                "NotOlderThan");
    }
    if (!options.allow_watch_bookmarks) {
      forbidden("allowWatchBookmarks",
                "sendInitialEvents requires setting allowWatchBookmarks to "
                "true");
    }
  } else if (!options.resource_version_match.empty()) {
    forbidden("resourceVersionMatch",
              "resourceVersionMatch is forbidden for watch unless "
              "sendInitialEvents is provided");
  }
  if (!errors.empty()) {
    return api::StatusError::Invalid({"meta.k8s.io", "ListOptions"}, "", errors)
        .ToStatus();
  }
  int64_t requested_rv = 0;
  if (!rv.empty() && !absl::SimpleAtoi(ToAbsl(rv), &requested_rv)) {
    return api::StatusError::BadRequest("invalid resource version: \"" + rv +
                                        "\"")
        .ToStatus();
  }

  apiserver::Storage* storage = registry_->storage();
  const std::string collection = resource_->StorageKey();
  apiserver::WatchFilter filter;
  filter.ns = options_.ns;
  if (!lo->label_selector.Empty() || !lo->field_selector.Empty()) {
    filter.selects = [selectors = *lo](const api::Object& o) {
      return apiserver::Registry::Matches(o, selectors);
    };
  }

  RegistryWatchStream::Params params;
  params.resource = resource_;
  params.clock = clock_;
  params.bookmarks = options.allow_watch_bookmarks;
  params.bookmark_interval = options_.bookmark_interval;
  const absl::Time start = clock_->Now();
  params.end = start + (options.timeout_seconds.value_or(0) > 0
                            ? absl::Seconds(*options.timeout_seconds)
                            : options_.default_watch_timeout);

  // A watch at ""/"0" starts with the current state, as does one that asks
  // for initial events (at a version not older than the one given).
  const bool initial = options.send_initial_events || rv.empty() || rv == "0";
  int64_t cursor = requested_rv;
  if (initial) {
    apiserver::Storage::ListOptions so;
    so.ns = options_.ns;
    so.filter = filter.selects;
    absl::StatusOr<apiserver::Storage::ListResult> state =
        storage->List(collection, so);
    if (!state.ok()) return state.status();
    for (const api::ObjectPtr& o : state->items) {
      params.initial.push_back(
          client::WatchEvent{api::EventType::kAdded,
                             apiserver::Registry::AtVersion(o, *resource_),
                             {}});
    }
    cursor = state->resource_version;
    if (options.send_initial_events) {
      params.initial.push_back(client::WatchEvent{
          api::EventType::kBookmark, Bookmark(*resource_, cursor, true), {}});
    }
  }
  params.cursor = cursor;
  absl::StatusOr<std::unique_ptr<apiserver::CacheWatcher>> watcher =
      storage->Watch(collection, cursor, filter);
  if (watcher.ok()) {
    params.watcher = *std::move(watcher);
  } else {
    // kube-apiserver answers 200 and sends the 410 as an ERROR event.
    params.initial.push_back(ErrorEvent(watcher.status()));
  }
  return std::unique_ptr<client::WatchStream>(
      std::make_unique<RegistryWatchStream>(std::move(params), ctx));
}

}  // namespace kcr::testing
