#include "test/fakes/fake_list_watch.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/synchronization/mutex.h"  // absl::Condition
#include "base/string_view.h"

namespace kcr::testing {

api::ObjectPtr BookmarkObject(std::string_view resource_version,
                              bool initial_events_end,
                              std::string_view api_version,
                              std::string_view kind) {
  std::string json = R"({"apiVersion":")";
  json.append(api_version).append(R"(","kind":")").append(kind);
  json.append(R"(","metadata":{"resourceVersion":")").append(resource_version);
  json.append("\"");
  if (initial_events_end) {
    json.append(R"(,"annotations":{"k8s.io/initial-events-end":"true"})");
  }
  json.append("}}");
  return *api::Object::Parse(json);
}

// The watcher's end: reads what the FakeWatch queued.
class FakeWatch::Stream final : public client::WatchStream {
 public:
  Stream(std::shared_ptr<FakeWatch> watch, const Context& ctx)
      : watch_(std::move(watch)) {
    // The watch's own context ends it, as a real watch's connection is
    // closed when its context ends.
    on_done_ = ctx.OnDone([w = watch_.get()] {
      MutexLock lock(&w->mu_);
      w->stopped_ = true;
      w->cv_.SignalAll();
    });
  }
  ~Stream() override {
    on_done_.Reset();
    Stop();
  }

  bool Next(const Context& ctx, client::WatchEvent* event) override {
    FakeWatch& w = *watch_;
    MutexLock lock(&w.mu_);
    while (true) {
      if (w.stopped_) {
        if (w.status_.ok()) w.status_ = absl::CancelledError("watch stopped");
        return false;
      }
      if (!w.events_.empty()) {
        *event = std::move(w.events_.front());
        w.events_.pop_front();
        w.cv_.SignalAll();
        return true;
      }
      if (w.end_.has_value()) {
        w.status_ = *w.end_;
        w.cv_.SignalAll();
        return false;
      }
      if (ctx.done()) {
        w.stopped_ = true;
        w.status_ = ctx.Err();
        w.cv_.SignalAll();
        return false;
      }
      w.waiting_ = true;
      w.cv_.SignalAll();
      w.cv_.Wait(&w.mu_, ctx);
      w.waiting_ = false;
    }
  }

  // What the test queued: Next returns it without waiting.
  size_t Buffered() const override {
    MutexLock lock(&watch_->mu_);
    return watch_->events_.size();
  }

  void Stop() override {
    MutexLock lock(&watch_->mu_);
    watch_->stopped_ = true;
    watch_->cv_.SignalAll();
  }

  absl::Status status() const override {
    MutexLock lock(&watch_->mu_);
    return watch_->status_;
  }

 private:
  const std::shared_ptr<FakeWatch> watch_;
  Context::DoneCallback on_done_;
};

void FakeWatch::Push(client::WatchEvent event) {
  MutexLock lock(&mu_);
  events_.push_back(std::move(event));
  cv_.SignalAll();
}

void FakeWatch::PushAll(std::vector<client::WatchEvent> events) {
  MutexLock lock(&mu_);
  for (client::WatchEvent& event : events) events_.push_back(std::move(event));
  cv_.SignalAll();
}

void FakeWatch::Add(api::ObjectPtr object) {
  Push(client::WatchEvent{api::EventType::kAdded, std::move(object), {}});
}

void FakeWatch::Modify(api::ObjectPtr object) {
  Push(client::WatchEvent{api::EventType::kModified, std::move(object), {}});
}

void FakeWatch::Delete(api::ObjectPtr object) {
  Push(client::WatchEvent{api::EventType::kDeleted, std::move(object), {}});
}

void FakeWatch::Bookmark(std::string_view resource_version,
                         bool initial_events_end) {
  Push(client::WatchEvent{api::EventType::kBookmark,
                          BookmarkObject(resource_version, initial_events_end),
                          {}});
}

void FakeWatch::Error(absl::Status error) {
  Push(client::WatchEvent{api::EventType::kError, nullptr, std::move(error)});
}

void FakeWatch::Close() {
  MutexLock lock(&mu_);
  end_ = absl::OkStatus();
  cv_.SignalAll();
}

void FakeWatch::Break(absl::Status status) {
  MutexLock lock(&mu_);
  end_ = std::move(status);
  cv_.SignalAll();
}

bool FakeWatch::stopped() const {
  MutexLock lock(&mu_);
  return stopped_;
}

bool FakeWatch::DrainedLocked() const {
  return events_.empty() && (waiting_ || stopped_ || end_.has_value());
}

void FakeWatch::WaitUntilDrained() const {
  MutexLock lock(&mu_);
  mu_.Await(absl::Condition(this, &FakeWatch::DrainedLocked));
}

void FakeListWatch::PushList(ListResult result) {
  MutexLock lock(&mu_);
  lists_.push_back(std::move(result));
}

void FakeListWatch::PushListError(absl::Status status) {
  PushList(ListResult{std::move(status), {}, "", ""});
}

void FakeListWatch::SetState(std::vector<api::ObjectPtr> items,
                             std::string resource_version) {
  MutexLock lock(&mu_);
  state_ = std::move(items);
  state_rv_ = std::move(resource_version);
}

void FakeListWatch::PushWatchError(absl::Status status) {
  MutexLock lock(&mu_);
  watch_errors_.push_back(std::move(status));
}

std::vector<client::ListOptions> FakeListWatch::list_calls() const {
  MutexLock lock(&mu_);
  return list_calls_;
}

std::vector<client::ListOptions> FakeListWatch::watch_calls() const {
  MutexLock lock(&mu_);
  return watch_calls_;
}

absl::StatusOr<bool> FakeListWatch::SetShardSelector(std::string selector) {
  MutexLock lock(&mu_);
  if (selector == shard_selector_) return false;
  shard_selector_ = std::move(selector);
  return true;
}

std::string FakeListWatch::shard_selector() const {
  MutexLock lock(&mu_);
  return shard_selector_;
}

size_t FakeListWatch::list_call_count() const {
  MutexLock lock(&mu_);
  return list_calls_.size();
}

size_t FakeListWatch::watch_call_count() const {
  MutexLock lock(&mu_);
  return watch_calls_.size();
}

void FakeListWatch::WaitForListCalls(size_t n) const {
  MutexLock lock(&mu_);
  auto enough = [this, n]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return list_calls_.size() >= n;
  };
  mu_.Await(absl::Condition(&enough));
}

void FakeListWatch::WaitForWatchCalls(size_t n) const {
  MutexLock lock(&mu_);
  auto enough = [this, n]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return watch_calls_.size() >= n;
  };
  mu_.Await(absl::Condition(&enough));
}

std::shared_ptr<FakeWatch> FakeListWatch::WaitForWatch(size_t index) const {
  MutexLock lock(&mu_);
  auto opened = [this, index]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return watches_.size() > index;
  };
  mu_.Await(absl::Condition(&opened));
  return watches_[index];
}

absl::StatusOr<client::ListMeta> FakeListWatch::List(
    const Context& ctx, const client::ListOptions& options,
    const cache::ListItemFunc& on_item) {
  std::vector<api::ObjectPtr> items;
  client::ListMeta meta;
  {
    MutexLock lock(&mu_);
    list_calls_.push_back(options);
    if (ctx.done()) return ctx.Err();
    if (!lists_.empty()) {
      ListResult result = std::move(lists_.front());
      lists_.pop_front();
      if (!result.status.ok()) return result.status;
      items = std::move(result.items);
      meta.resource_version = std::move(result.resource_version);
      meta.continue_token = std::move(result.continue_token);
    } else {
      size_t offset = 0;
      if (!options.continue_token.empty() &&
          !absl::SimpleAtoi(ToAbsl(options.continue_token), &offset)) {
        return absl::InvalidArgumentError("bad continue token");
      }
      offset = std::min(offset, state_.size());
      size_t end = state_.size();
      if (options.limit > 0) {
        end = std::min(end, offset + static_cast<size_t>(options.limit));
      }
      items.assign(state_.begin() + offset, state_.begin() + end);
      meta.resource_version = state_rv_;
      if (end < state_.size()) meta.continue_token = std::to_string(end);
    }
  }
  meta.api_version = "v1";
  meta.kind = "List";
  for (api::ObjectPtr& item : items) {
    absl::Status s = on_item(std::move(item));
    if (!s.ok()) return s;
  }
  return meta;
}

absl::StatusOr<std::unique_ptr<client::WatchStream>> FakeListWatch::Watch(
    const Context& ctx, const client::ListOptions& options) {
  MutexLock lock(&mu_);
  watch_calls_.push_back(options);
  if (ctx.done()) return ctx.Err();
  if (!watch_errors_.empty()) {
    absl::Status error = std::move(watch_errors_.front());
    watch_errors_.pop_front();
    return error;
  }
  std::shared_ptr<FakeWatch> watch(new FakeWatch(options));
  watches_.push_back(watch);
  return std::unique_ptr<client::WatchStream>(
      std::make_unique<FakeWatch::Stream>(watch, ctx));
}

}  // namespace kcr::testing
