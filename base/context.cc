#include "base/context.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>
#include <vector>

namespace kcr {
namespace internal {

// The shared state of one Context (and its copies).
class ContextState {
 public:
  ContextState(absl::Time deadline, const Clock* clock)
      : deadline_(deadline), clock_(clock) {}
  ContextState(const ContextState&) = delete;
  ContextState& operator=(const ContextState&) = delete;

  bool done() const { return done_.load(std::memory_order_acquire); }

  absl::Status err() const {
    MutexLock lock(&mu_);
    return err_;
  }

  absl::Time deadline() const { return deadline_; }
  const Clock* clock() const { return clock_; }

  // Ends the context with `err` unless it has ended already, then runs the
  // done callbacks on this thread, outside the lock.
  void Cancel(absl::Status err) {
    Timer* timer = nullptr;
    Context::DoneCallback from_parent;
    {
      MutexLock lock(&mu_);
      if (done_.load(std::memory_order_relaxed)) return;
      err_ = std::move(err);
      done_.store(true, std::memory_order_release);
      to_run_.swap(callbacks_);
      runner_ = std::this_thread::get_id();
      timer = timer_.get();
      from_parent = std::move(from_parent_);
    }
    while (true) {
      std::function<void()> fn;
      {
        MutexLock lock(&mu_);
        running_id_ = 0;
        if (to_run_.empty()) break;
        running_id_ = to_run_.begin()->first;
        fn = std::move(to_run_.begin()->second);
        to_run_.erase(to_run_.begin());
      }
      callback_done_.SignalAll();
      fn();
    }
    callback_done_.SignalAll();
    // The deadline and the parent need not remember this context any more
    // (Go's removeChild). The timer is set once and lives as long as this
    // state.
    if (timer != nullptr) timer->Stop();
    from_parent.Reset();
  }

  // Registers `fn`; 0 (and `fn` is not kept) when the context is done.
  uint64_t AddCallback(std::function<void()> fn) {
    MutexLock lock(&mu_);
    if (done_.load(std::memory_order_relaxed)) return 0;
    const uint64_t id = next_id_++;
    callbacks_.emplace(id, std::move(fn));
    return id;
  }

  // Unregisters callback `id`. If Cancel is running it on another thread,
  // waits for it to return (only for that one callback: the others may
  // need locks the caller holds).
  void RemoveCallback(uint64_t id) {
    MutexLock lock(&mu_);
    if (callbacks_.erase(id) > 0 || to_run_.erase(id) > 0) return;
    while (running_id_ == id && runner_ != std::this_thread::get_id()) {
      callback_done_.Wait(&mu_);
    }
  }

  void set_timer(std::unique_ptr<Timer> timer) {
    MutexLock lock(&mu_);
    timer_ = std::move(timer);
  }
  void set_from_parent(Context::DoneCallback registration) {
    MutexLock lock(&mu_);
    from_parent_ = std::move(registration);
  }

 private:
  const absl::Time deadline_;
  const Clock* const clock_;
  std::atomic<bool> done_{false};

  mutable Mutex mu_;
  absl::Status err_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, std::function<void()>> callbacks_ ABSL_GUARDED_BY(mu_);
  // Taken by Cancel, not run yet; `running_id_` is running on `runner_`.
  std::map<uint64_t, std::function<void()>> to_run_ ABSL_GUARDED_BY(mu_);
  uint64_t running_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread::id runner_ ABSL_GUARDED_BY(mu_);
  CondVar callback_done_;
  // The deadline timer (null without a deadline of its own). Set once.
  std::unique_ptr<Timer> timer_ ABSL_GUARDED_BY(mu_);
  // This context's registration with its parent.
  Context::DoneCallback from_parent_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal

namespace {

absl::Status CanceledError() {
  return absl::CancelledError("context canceled");
}

// A new context below `parent`, done when the parent is.
std::shared_ptr<internal::ContextState> NewChild(const Context& parent,
                                                 absl::Time deadline,
                                                 const Clock* clock) {
  auto state = std::make_shared<internal::ContextState>(deadline, clock);
  std::weak_ptr<internal::ContextState> weak = state;
  // `parent` outlives the call of this callback: it is the one running it.
  const Context parent_copy = parent;
  state->set_from_parent(parent.OnDone([weak, parent_copy] {
    if (auto child = weak.lock()) child->Cancel(parent_copy.Err());
  }));
  return state;
}

}  // namespace

bool Context::done() const { return state_ != nullptr && state_->done(); }

absl::Status Context::Err() const {
  if (state_ == nullptr || !state_->done()) return absl::OkStatus();
  return state_->err();
}

absl::Time Context::deadline() const {
  return state_ == nullptr ? absl::InfiniteFuture() : state_->deadline();
}

const Clock* Context::clock() const {
  return state_ == nullptr ? Clock::Real() : state_->clock();
}

Context::DoneCallback& Context::DoneCallback::operator=(
    DoneCallback&& other) noexcept {
  if (this != &other) {
    Reset();
    state_ = std::move(other.state_);
    id_ = other.id_;
    other.state_.reset();
    other.id_ = 0;
  }
  return *this;
}

void Context::DoneCallback::Reset() {
  if (id_ == 0) return;
  if (auto state = state_.lock()) state->RemoveCallback(id_);
  state_.reset();
  id_ = 0;
}

Context::DoneCallback Context::OnDone(std::function<void()> fn) const {
  DoneCallback registration;
  if (state_ == nullptr) return registration;  // never done
  const uint64_t id = state_->AddCallback(fn);
  if (id == 0) {
    fn();
    return registration;
  }
  registration.state_ = state_;
  registration.id_ = id;
  return registration;
}

std::pair<Context, CancelFunc> WithCancel(const Context& parent) {
  auto state = NewChild(parent, parent.deadline(), parent.clock());
  std::weak_ptr<internal::ContextState> weak = state;
  CancelFunc cancel = [weak] {
    if (auto s = weak.lock()) s->Cancel(CanceledError());
  };
  return {Context(std::move(state)), std::move(cancel)};
}

std::pair<Context, CancelFunc> WithDeadline(const Context& parent,
                                            absl::Time deadline,
                                            const Clock* clock) {
  if (clock == nullptr) clock = parent.clock();
  // An earlier deadline of the parent on the same clock already bounds
  // the child.
  if (clock == parent.clock() && parent.deadline() <= deadline) {
    return WithCancel(parent);
  }
  auto state = NewChild(parent, deadline, clock);
  std::weak_ptr<internal::ContextState> weak = state;
  const absl::Duration left = deadline - clock->Now();
  if (left <= absl::ZeroDuration()) {
    state->Cancel(absl::DeadlineExceededError("context deadline exceeded"));
  } else {
    state->set_timer(clock->AfterFunc(left, [weak] {
      if (auto s = weak.lock()) {
        s->Cancel(absl::DeadlineExceededError("context deadline exceeded"));
      }
    }));
  }
  CancelFunc cancel = [weak] {
    if (auto s = weak.lock()) s->Cancel(CanceledError());
  };
  return {Context(std::move(state)), std::move(cancel)};
}

std::pair<Context, CancelFunc> WithTimeout(const Context& parent,
                                           absl::Duration timeout,
                                           const Clock* clock) {
  if (clock == nullptr) clock = parent.clock();
  return WithDeadline(parent, clock->Now() + timeout, clock);
}

void WaitUntilDone(const Context& ctx) {
  if (ctx.done()) return;
  Notification done;
  // Dropped before `done`: Reset waits for a Notify running on the
  // cancelling thread to return.
  Context::DoneCallback on_done = ctx.OnDone([&done] { done.Notify(); });
  done.WaitForNotification();
}

bool WaitUntilDone(const Context& ctx, absl::Duration timeout,
                   const Clock* clock) {
  auto [bounded, cancel] = WithTimeout(ctx, timeout, clock);
  WaitUntilDone(bounded);
  cancel();
  return ctx.done();
}

void ContextCondVar::Wait(Mutex* mu, const Context& ctx) {
  // Registered before the check below, so a cancellation after the check
  // finds this waiter asleep on cv_ (it holds mu_ until it sleeps).
  Context::DoneCallback wake = ctx.OnDone([this] { SignalAll(); });
  mu_.Lock();
  if (ctx.done()) {
    mu_.Unlock();
    return;
  }
  mu->Unlock();
  cv_.Wait(&mu_);
  mu_.Unlock();
  mu->Lock();
  // `wake` is dropped here with `mu` held: its callback takes only mu_.
}

absl::Status ContextCondVar::Await(Mutex* mu, const Context& ctx,
                                   const absl::Condition& cond) {
  while (!cond.Eval()) {
    if (ctx.done()) return ctx.Err();
    Wait(mu, ctx);
  }
  return absl::OkStatus();
}

void ContextCondVar::Signal() {
  MutexLock lock(&mu_);
  cv_.Signal();
}

void ContextCondVar::SignalAll() {
  MutexLock lock(&mu_);
  cv_.SignalAll();
}

}  // namespace kcr
