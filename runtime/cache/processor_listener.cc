#include "runtime/cache/processor_listener.h"

#include <exception>
#include <utility>

#include "glog/logging.h"

namespace kcr::cache {
namespace {

// The depth callback is told of changes this large, and of an empty queue.
constexpr size_t kDepthReportStep = 64;

}  // namespace

HandlerEvent HandlerEvent::Add(api::ObjectPtr object, bool is_in_initial_list) {
  HandlerEvent e;
  e.type = Type::kAdd;
  e.object = std::move(object);
  e.is_in_initial_list = is_in_initial_list;
  return e;
}

HandlerEvent HandlerEvent::Update(api::ObjectPtr old_object,
                                  api::ObjectPtr new_object) {
  HandlerEvent e;
  e.type = Type::kUpdate;
  e.old_object = std::move(old_object);
  e.object = std::move(new_object);
  return e;
}

HandlerEvent HandlerEvent::Delete(api::ObjectPtr object,
                                  bool final_state_unknown) {
  HandlerEvent e;
  e.type = Type::kDelete;
  e.object = std::move(object);
  e.final_state_unknown = final_state_unknown;
  return e;
}

ProcessorListener::ProcessorListener(
    std::shared_ptr<ResourceEventHandler> handler,
    ProcessorListenerOptions options)
    : handler_(std::move(handler)), options_(std::move(options)) {}

ProcessorListener::~ProcessorListener() {
  Stop();
  if (thread_.joinable()) thread_.join();
}

void ProcessorListener::Start() {
  MutexLock lock(&mu_);
  if (thread_.joinable() || stopped_) return;
  thread_ = std::thread([this] { Loop(); });
}

void ProcessorListener::Stop() {
  MutexLock lock(&mu_);
  if (stopped_) return;
  stopped_ = true;
  queue_.clear();
  latest_.clear();
  live_ = 0;
  initial_pending_ = 0;
  cv_.SignalAll();
  idle_cv_.SignalAll();
}

void ProcessorListener::Add(HandlerEvent event) {
  MutexLock lock(&mu_);
  if (AddLocked(std::move(event))) cv_.Signal();
}

void ProcessorListener::Add(absl::Span<const HandlerEvent> events) {
  MutexLock lock(&mu_);
  bool queued = false;
  for (const HandlerEvent& event : events) {
    if (AddLocked(event)) queued = true;
  }
  if (queued) cv_.Signal();
}

bool ProcessorListener::AddLocked(HandlerEvent event) {
  if (stopped_ || event.object == nullptr) return false;
  if (!coalescing_ && live_ >= options_.max_in_order) {
    StartCoalescingLocked();
  }
  std::string key;
  if (coalescing_) {
    key = event.object->Key();
    auto it = latest_.find(key);
    if (it != latest_.end()) {
      Entry& pending = queue_[it->second - head_seq_];
      if (MergeLocked(pending, event)) {
        ++coalesced_;
        if (!pending.live) latest_.erase(it);
        ReportDepthLocked();
        return false;
      }
    }
    latest_[key] = head_seq_ + queue_.size();
  }
  if (event.is_in_initial_list) ++initial_pending_;
  queue_.push_back(Entry{std::move(event), std::move(key), true});
  ++live_;
  ReportDepthLocked();
  return true;
}

void ProcessorListener::StartCoalescingLocked() {
  coalescing_ = true;
  latest_.clear();
  uint64_t seq = head_seq_;
  for (Entry& entry : queue_) {
    if (entry.live) {
      entry.key = entry.event.object->Key();
      latest_[entry.key] = seq;
    }
    ++seq;
  }
  LOG(WARNING) << "event handler is falling behind, coalescing by key"
               << " handler=" << options_.name << " pending=" << live_;
}

bool ProcessorListener::MergeLocked(Entry& entry, HandlerEvent& event) {
  using Type = HandlerEvent::Type;
  HandlerEvent& pending = entry.event;
  switch (event.type) {
    case Type::kUpdate:
      if (pending.type == Type::kDelete) return false;
      // An Add stays an Add, an Update keeps the state the handler last
      // saw as its old object; both take the newest state.
      pending.object = std::move(event.object);
      return true;
    case Type::kDelete:
      if (pending.type == Type::kAdd) {
        // The handler never saw this object: it sees neither.
        if (pending.is_in_initial_list) --initial_pending_;
        entry.live = false;
        --live_;
        return true;
      }
      if (pending.type == Type::kUpdate) {
        pending = std::move(event);
        return true;
      }
      return false;
    case Type::kAdd:
      // After a pending Delete: a new instance, delivered after it. After
      // an Add or Update (a relist that missed the deletion): the newest
      // state replaces the pending one.
      if (pending.type == Type::kDelete) return false;
      pending.object = std::move(event.object);
      return true;
  }
  return false;
}

void ProcessorListener::ReportDepthLocked() {
  if (!options_.on_depth) return;
  const size_t depth = live_;
  const size_t diff = depth > reported_depth_ ? depth - reported_depth_
                                              : reported_depth_ - depth;
  if (diff >= kDepthReportStep || (depth == 0 && reported_depth_ != 0)) {
    reported_depth_ = depth;
    options_.on_depth(depth);
  }
}

void ProcessorListener::Loop() {
  MutexLock lock(&mu_);
  while (true) {
    while (live_ == 0 && !stopped_) cv_.Wait(&mu_);
    if (stopped_) return;
    // Skip the entries merged away.
    while (!queue_.front().live) {
      queue_.pop_front();
      ++head_seq_;
    }
    Entry entry = std::move(queue_.front());
    queue_.pop_front();
    if (coalescing_) {
      auto it = latest_.find(entry.key);
      if (it != latest_.end() && it->second == head_seq_) latest_.erase(it);
    }
    ++head_seq_;
    --live_;
    if (coalescing_ && live_ <= options_.max_in_order / 2) {
      coalescing_ = false;
      latest_.clear();
    }
    ReportDepthLocked();
    busy_ = true;
    mu_.Unlock();
    Deliver(entry.event);
    mu_.Lock();
    busy_ = false;
    ++delivered_;
    if (entry.event.is_in_initial_list && initial_pending_ > 0) {
      --initial_pending_;
    }
    if (live_ == 0) idle_cv_.SignalAll();
  }
}

void ProcessorListener::Deliver(const HandlerEvent& event) {
  try {
    switch (event.type) {
      case HandlerEvent::Type::kAdd:
        handler_->OnAdd(event.object, event.is_in_initial_list);
        break;
      case HandlerEvent::Type::kUpdate:
        handler_->OnUpdate(event.old_object, event.object);
        break;
      case HandlerEvent::Type::kDelete:
        handler_->OnDelete(event.object, event.final_state_unknown);
        break;
    }
    return;
  } catch (const std::exception& e) {
    LOG(ERROR) << "event handler threw handler=" << options_.name
               << " key=" << event.object->Key() << " error=" << e.what();
  } catch (...) {
    LOG(ERROR) << "event handler threw handler=" << options_.name
               << " key=" << event.object->Key() << " error=unknown";
  }
  MutexLock lock(&mu_);
  ++handler_errors_;
}

bool ProcessorListener::InitialListDelivered() const {
  MutexLock lock(&mu_);
  return initial_pending_ == 0;
}

bool ProcessorListener::WaitIdle(absl::Duration timeout) const {
  const absl::Time deadline = absl::Now() + timeout;
  MutexLock lock(&mu_);
  while ((live_ > 0 || busy_) && !stopped_) {
    if (idle_cv_.WaitWithDeadline(&mu_, deadline)) break;
  }
  return (live_ == 0 && !busy_) || stopped_;
}

size_t ProcessorListener::pending() const {
  MutexLock lock(&mu_);
  return live_;
}

int64_t ProcessorListener::delivered() const {
  MutexLock lock(&mu_);
  return delivered_;
}

int64_t ProcessorListener::coalesced() const {
  MutexLock lock(&mu_);
  return coalesced_;
}

int64_t ProcessorListener::handler_errors() const {
  MutexLock lock(&mu_);
  return handler_errors_;
}

bool ProcessorListener::ShouldResync(absl::Time now) {
  if (resync_period_ <= absl::ZeroDuration()) return false;
  if (now < next_resync_) return false;
  next_resync_ = now + resync_period_;
  return true;
}

}  // namespace kcr::cache
