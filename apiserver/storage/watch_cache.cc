#include "apiserver/storage/watch_cache.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include "api/errors/errors.h"
#include "api/object_builder.h"
#include "base/str_cat.h"
#include "base/string_view.h"
#include "glog/logging.h"

namespace kcr {
namespace apiserver {
namespace {

// The event a watcher with `filter` sends for `e`, or nothing.
std::optional<WatchEvent> ToWatchEvent(const StoredEvent& e,
                                       const WatchFilter& filter) {
  const bool is = e.type != EventType::kDeleted && filter.Matches(*e.object);
  const bool was = e.previous != nullptr && filter.Matches(*e.previous);
  if (e.type == EventType::kDeleted) {
    if (!was) return std::nullopt;
    return WatchEvent{EventType::kDeleted, e.object, e.resource_version};
  }
  if (is) {
    return WatchEvent{was ? EventType::kModified : EventType::kAdded, e.object,
                      e.resource_version};
  }
  if (!was) return std::nullopt;
  // It stopped matching: its previous state, at the new resourceVersion.
  api::ObjectBuilder b = e.previous->ToBuilder();
  b.SetResourceVersion(Cat(e.resource_version));
  absl::StatusOr<api::ObjectPtr> built = b.Build();
  return WatchEvent{EventType::kDeleted, built.ok() ? *built : e.previous,
                    e.resource_version};
}

}  // namespace

bool WatchFilter::Matches(const api::Object& o) const {
  if (!ns.empty() && o.namespace_() != ns) return false;
  return !selects || selects(o);
}

// CacheWatcher

CacheWatcher::CacheWatcher(WatchCache* cache, int64_t after, WatchFilter filter,
                           const Clock* clock, size_t queue_size)
    : cache_(cache),
      filter_(std::move(filter)),
      clock_(clock),
      queue_size_(std::max<size_t>(1, queue_size)),
      after_(after),
      position_(after) {}

CacheWatcher::~CacheWatcher() { cache_->Remove(this); }

bool CacheWatcher::Push(const StoredEventPtr& e) {
  MutexLock l(&mu_);
  if (terminated_ || e->resource_version <= after_) return false;
  if (queue_.size() >= queue_size_) {
    // It cannot keep up: drop what it has (memory stays bounded) and let
    // its owner end the stream.
    terminated_ = true;
    queue_.clear();
    replay_.clear();
    replay_next_ = 0;
  } else {
    queue_.push_back(e);
    ++events_queued_;
  }
  if (!waiting_ || notified_) return false;
  notified_ = true;
  ++wakeups_;
  return true;
}

void CacheWatcher::WakeUp() {
  // Outside the watcher's lock, so that the woken thread does not block on
  // it. The watcher outlives this call: unregistering waits for the
  // dispatch lock, which the caller holds.
  cv_.Signal();
}

CacheWatcher::Batch CacheWatcher::Next(absl::Time deadline, size_t max) {
  Batch out;
  std::vector<StoredEventPtr> taken;
  bool terminated = false;
  {
    MutexLock l(&mu_);
    while (!terminated_ && !interrupted_ && replay_next_ == replay_.size() &&
           queue_.empty() && clock_->Now() < deadline) {
      waiting_ = true;
      clock_->WaitUntil(&mu_, &cv_, deadline);
      waiting_ = false;
      notified_ = false;
    }
    interrupted_ = false;
    terminated = terminated_;
    if (!terminated) {
      // Read before taking: every event up to `progress` that this watcher
      // could want is in replay_ or queue_ by now.
      const int64_t progress = cache_->Progress();
      max = std::max<size_t>(1, max);
      while (taken.size() < max && replay_next_ < replay_.size()) {
        taken.push_back(std::move(replay_[replay_next_++]));
      }
      if (replay_next_ == replay_.size() && !replay_.empty()) {
        replay_.clear();
        replay_.shrink_to_fit();
        replay_next_ = 0;
      }
      while (taken.size() < max && !queue_.empty()) {
        taken.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      if (!taken.empty()) {
        position_ = std::max(position_, taken.back()->resource_version);
      }
      if (replay_next_ == replay_.size() && queue_.empty()) {
        position_ = std::max(position_, progress);
      }
    }
    out.resource_version = position_;
  }
  if (terminated) {
    out.terminated = true;
    out.error = cache_->CheckWatchable(out.resource_version);
    return out;
  }
  out.events.reserve(taken.size());
  for (const StoredEventPtr& e : taken) {
    std::optional<WatchEvent> w = ToWatchEvent(*e, filter_);
    if (w.has_value()) out.events.push_back(std::move(*w));
  }
  return out;
}

void CacheWatcher::Interrupt() {
  {
    MutexLock l(&mu_);
    interrupted_ = true;
  }
  cv_.Signal();
}

int64_t CacheWatcher::events_queued() const {
  MutexLock l(&mu_);
  return events_queued_;
}

int64_t CacheWatcher::wakeups() const {
  MutexLock l(&mu_);
  return wakeups_;
}

bool CacheWatcher::terminated() const {
  MutexLock l(&mu_);
  return terminated_;
}

// WatchCache

WatchCache::WatchCache(std::string collection,
                       const std::atomic<int64_t>* current_rv,
                       int64_t evicted_through, WatchCacheOptions options)
    : collection_(std::move(collection)),
      current_rv_(current_rv),
      options_(options),
      evicted_through_(evicted_through) {}

WatchCache::~WatchCache() {
  std::thread dispatcher;
  {
    MutexLock d(&dispatch_mu_);
    for (const auto& [ns, ws] : watchers_) {
      CHECK(ws.empty()) << "watch cache destroyed with watchers collection="
                        << collection_;
    }
    dispatcher = std::move(dispatcher_);
  }
  {
    MutexLock r(&ring_mu_);
    stopping_ = true;
  }
  dispatch_cv_.Signal();
  if (dispatcher.joinable()) dispatcher.join();
}

bool WatchCache::Append(StoredEventPtr e) {
  MutexLock r(&ring_mu_);
  const int64_t rv = e->resource_version;
  appended_rv_ = rv;
  ring_.push_back(e);
  if (watcher_count_ == 0 && undispatched_.empty()) {
    // Nobody to tell: a watcher that starts later finds it in the ring.
    dispatched_rv_ = std::max(dispatched_rv_, rv);
    return false;
  }
  undispatched_.push_back(std::move(e));
  if (!dispatcher_idle_) return false;  // at work, or kicked already
  dispatcher_idle_ = false;
  return true;
}

void WatchCache::Kick() { dispatch_cv_.Signal(); }

void WatchCache::Evict(int64_t rv) {
  MutexLock r(&ring_mu_);
  if (!ring_.empty() && ring_.front()->resource_version == rv) {
    ring_.pop_front();
  }
  evicted_through_ = std::max(evicted_through_, rv);
}

void WatchCache::Compact(int64_t rv) {
  MutexLock r(&ring_mu_);
  ring_.clear();
  evicted_through_ = std::max(evicted_through_, rv);
}

std::vector<CacheWatcher*>* WatchCache::Bucket(std::string_view ns) {
  auto it = watchers_.find(ToAbsl(ns));
  return it == watchers_.end() ? nullptr : &it->second;
}

void WatchCache::DispatchLoop() {
  std::vector<StoredEventPtr> batch;
  std::vector<CacheWatcher*> wake;
  while (true) {
    {
      MutexLock r(&ring_mu_);
      while (undispatched_.empty() && !stopping_) {
        // No timeout: Append reports the idle dispatcher and its writer
        // kicks it; the destructor signals too.
        dispatcher_idle_ = true;
        dispatch_cv_.Wait(&ring_mu_);
      }
      dispatcher_idle_ = false;
      if (stopping_) return;
      batch.swap(undispatched_);
    }
    MutexLock d(&dispatch_mu_);
    std::vector<CacheWatcher*>* all = Bucket("");
    for (const StoredEventPtr& e : batch) {
      // Cluster-scoped objects have no namespace: their watchers are all
      // in the "" bucket.
      const std::string_view ns = e->object->namespace_();
      std::vector<CacheWatcher*>* in_ns = ns.empty() ? nullptr : Bucket(ns);
      for (std::vector<CacheWatcher*>* bucket : {all, in_ns}) {
        if (bucket == nullptr) continue;
        for (CacheWatcher* w : *bucket) {
          const auto& selects = w->filter_.selects;
          if (selects && !selects(*e->object) &&
              (e->previous == nullptr || !selects(*e->previous))) {
            continue;
          }
          if (w->Push(e)) wake.push_back(w);
        }
      }
    }
    // Once per batch, after the whole batch is queued.
    for (CacheWatcher* w : wake) w->WakeUp();
    wake.clear();
    {
      MutexLock r(&ring_mu_);
      dispatched_rv_ = std::max(dispatched_rv_, batch.back()->resource_version);
    }
    batch.clear();
  }
}

absl::Status WatchCache::TooOldLocked(int64_t rv) const {
  // kube-apiserver's watch cache's words.
  return api::StatusError::Expired(
             Cat("too old resource version: ", rv, " (", evicted_through_, ")"))
      .ToStatus();
}

absl::Status WatchCache::CheckWatchable(int64_t rv) const {
  MutexLock r(&ring_mu_);
  return rv < evicted_through_ ? TooOldLocked(rv) : absl::OkStatus();
}

int64_t WatchCache::Progress() const {
  MutexLock r(&ring_mu_);
  if (appended_rv_ > dispatched_rv_) return dispatched_rv_;
  // Every event of this collection up to the storage's current
  // resourceVersion was appended before it was published, so all are
  // dispatched.
  return std::max(dispatched_rv_, current_rv_->load(std::memory_order_acquire));
}

absl::StatusOr<std::unique_ptr<CacheWatcher>> WatchCache::Watch(
    int64_t after, WatchFilter filter) {
  const std::string ns = filter.ns;
  std::vector<StoredEventPtr> replay;
  MutexLock d(&dispatch_mu_);
  {
    MutexLock r(&ring_mu_);
    if (after < evicted_through_) return TooOldLocked(after);
    // Events up to dispatched_rv_ come from the ring; later ones will be
    // dispatched to this watcher, registered before the lock is released.
    auto it = std::upper_bound(ring_.begin(), ring_.end(), after,
                               [](int64_t rv, const StoredEventPtr& e) {
                                 return rv < e->resource_version;
                               });
    for (; it != ring_.end() && (*it)->resource_version <= dispatched_rv_;
         ++it) {
      if (ns.empty() || (*it)->object->namespace_() == ns)
        replay.push_back(*it);
    }
    ++watcher_count_;
  }
  std::unique_ptr<CacheWatcher> w(new CacheWatcher(
      this, after, std::move(filter), options_.clock, options_.queue_size));
  {
    MutexLock l(&w->mu_);
    w->replay_ = std::move(replay);
  }
  watchers_[ns].push_back(w.get());
  if (!dispatcher_.joinable()) {
    dispatcher_ = std::thread([this] { DispatchLoop(); });
  }
  return w;
}

void WatchCache::Remove(CacheWatcher* w) {
  MutexLock d(&dispatch_mu_);
  auto it = watchers_.find(w->filter_.ns);
  if (it == watchers_.end()) return;
  std::vector<CacheWatcher*>& ws = it->second;
  auto pos = std::find(ws.begin(), ws.end(), w);
  if (pos == ws.end()) return;
  ws.erase(pos);
  if (ws.empty()) watchers_.erase(it);
  MutexLock r(&ring_mu_);
  --watcher_count_;
}

void WatchCache::InterruptAll() {
  MutexLock d(&dispatch_mu_);
  for (auto& [ns, ws] : watchers_) {
    for (CacheWatcher* w : ws) w->Interrupt();
  }
}

size_t WatchCache::Size() const {
  MutexLock r(&ring_mu_);
  return ring_.size();
}

size_t WatchCache::WatcherCount() const {
  MutexLock r(&ring_mu_);
  return watcher_count_;
}

}  // namespace apiserver
}  // namespace kcr
