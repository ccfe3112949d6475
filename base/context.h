// Context: a deadline and a stop signal that travel with a call, as Go's
// context.Context. Every blocking call of the REST client takes one;
// cancelling it (or its deadline passing) makes the call return promptly
// with ctx.Err().
//
//   // client: a kcr::client::RestClient*.
//   auto [ctx, cancel] = kcr::WithTimeout(kcr::Context::Background(),
//                                         absl::Seconds(10));
//   // kDeadlineExceeded if no answer came within 10 s, kCancelled if
//   // cancel() was called first.
//   absl::StatusOr<kcr::api::ObjectPtr> cm = client->Get(
//       ctx, kcr::client::Resource::Namespaced({"", "v1", "configmaps"},
//                                              "default"),
//       "settings");
//   cancel();  // from any thread; ends every call using ctx or its children
//
// A thread that has nothing to do but wait for the end parks on it:
//
//   kcr::WaitUntilDone(ctx);
//
// A Context is a cheap, copyable handle to shared state; copies see the same
// cancellation. A context made from a parent is done when the parent is.
// Deadlines are kept on a Clock (the parent's unless given), so a test can
// expire them with a fake clock. Everything here is thread-safe.
#ifndef KCR_BASE_CONTEXT_H_
#define KCR_BASE_CONTEXT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"  // absl::Condition
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/mutex.h"

namespace kcr {

namespace internal {
class ContextState;
}  // namespace internal

class Context;

// Ends a context made by WithCancel, WithDeadline or WithTimeout (and its
// children) with "context canceled". Idempotent, callable from any thread;
// call it when the work is done, so that the parent and the clock forget
// the child.
using CancelFunc = std::function<void()>;

// A child of `parent` that is done when `parent` is or when `cancel` is
// called.
std::pair<Context, CancelFunc> WithCancel(const Context& parent);

// A child of `parent` that is also done when `deadline` passes on `clock`
// (null: the parent's clock). A deadline that has already passed ends the
// child at once.
std::pair<Context, CancelFunc> WithDeadline(const Context& parent,
                                            absl::Time deadline,
                                            const Clock* clock = nullptr);

// WithDeadline(parent, clock->Now() + timeout, clock).
std::pair<Context, CancelFunc> WithTimeout(const Context& parent,
                                           absl::Duration timeout,
                                           const Clock* clock = nullptr);

class Context {
 public:
  // Background(): never done, no deadline.
  Context() = default;

  // The root of every context tree: never done, no deadline, the real
  // clock.
  static Context Background() { return Context(); }

  // Whether the context was cancelled or its deadline passed.
  bool done() const;

  // OK while the context is not done; afterwards, for ever, CancelledError
  // ("context canceled") if it was cancelled, DeadlineExceededError
  // ("context deadline exceeded") if its deadline passed first. A context
  // ended by its parent has the parent's error.
  absl::Status Err() const;

  // The earliest deadline of this context and its ancestors, on clock();
  // InfiniteFuture() when none.
  absl::Time deadline() const;

  // The clock deadline() is measured on (the real clock when no deadline
  // was set).
  const Clock* clock() const;

  // A registration made by OnDone; destroying it (or Reset) unregisters the
  // callback. Move-only.
  class DoneCallback {
   public:
    DoneCallback() = default;
    DoneCallback(DoneCallback&& other) noexcept { *this = std::move(other); }
    DoneCallback& operator=(DoneCallback&& other) noexcept;
    ~DoneCallback() { Reset(); }

    // Unregisters. If the callback is running on another thread, waits for
    // it to return first, so that what it uses may be freed afterwards: do
    // not call it (or destroy the registration) holding a lock the
    // callback takes.
    void Reset();

   private:
    friend class Context;
    std::weak_ptr<internal::ContextState> state_;
    uint64_t id_ = 0;
  };

  // Calls `fn` once when the context is done: at once, on this thread, if
  // it already is; otherwise on the thread that cancels it (or the clock's
  // timer thread when the deadline passes). `fn` must be short and must not
  // block on anything the cancelling thread may hold; waking a waiter,
  // closing a connection and cancelling another context are fine.
  [[nodiscard]] DoneCallback OnDone(std::function<void()> fn) const;

 private:
  friend std::pair<Context, CancelFunc> WithCancel(const Context& parent);
  friend std::pair<Context, CancelFunc> WithDeadline(const Context& parent,
                                                     absl::Time deadline,
                                                     const Clock* clock);

  explicit Context(std::shared_ptr<internal::ContextState> state)
      : state_(std::move(state)) {}

  // Null for Background.
  std::shared_ptr<internal::ContextState> state_;
};

// Blocks the calling thread until `ctx` is done; returns at once if it
// already is (and never for Background()).
void WaitUntilDone(const Context& ctx);

// Blocks until `ctx` is done or `timeout` has passed on `clock` (null:
// ctx.clock()), whichever comes first. Returns whether `ctx` is done.
bool WaitUntilDone(const Context& ctx, absl::Duration timeout,
                   const Clock* clock = nullptr);

// A condition variable whose waits also end when a Context is done.
//
// It keeps a mutex of its own (as std::condition_variable_any does), so a
// context can wake its waiters from any thread — even one that holds the
// waiter's `mu` — without taking `mu` and without losing the wake-up. Code
// that changes what a waiter waits for does so with `mu` held and then
// calls Signal or SignalAll (with or without `mu`). Spurious wake-ups are
// possible: wait in a loop, or use Await.
class ContextCondVar {
 public:
  ContextCondVar() = default;
  ContextCondVar(const ContextCondVar&) = delete;
  ContextCondVar& operator=(const ContextCondVar&) = delete;

  // Releases `mu` until signalled or until `ctx` is done (returns at once
  // if it already is); holds `mu` again on return.
  void Wait(Mutex* mu, const Context& ctx) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // Waits until `cond` holds (OK) or `ctx` is done (ctx.Err()); `cond` is
  // evaluated with `mu` held, and re-evaluated on every signal.
  absl::Status Await(Mutex* mu, const Context& ctx, const absl::Condition& cond)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  void Signal();
  void SignalAll();

 private:
  Mutex mu_;
  CondVar cv_;
};

}  // namespace kcr

#endif  // KCR_BASE_CONTEXT_H_
