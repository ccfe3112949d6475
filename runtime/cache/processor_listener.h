// ResourceEventHandler, the callbacks an informer delivers to, and
// ProcessorListener, the queue and thread that deliver them to one handler
// (client-go's processorListener).
//
// Every handler of an informer has its own listener, so a slow handler
// delays only itself: the informer hands a notification to each listener
// without waiting, and each listener's thread calls its handler in order.
//
// What happens when a handler falls far behind (client-go's listener grows
// without bound until the process runs out of memory): a listener keeps
// notifications strictly in order up to `max_in_order` pending ones. Past
// that it coalesces by object key, as a level-triggered controller needs:
// a new notification for a key that already has one pending is merged into
// it, so the handler still sees the latest state of every object and every
// deletion, but not every intermediate state:
//   Add(a1) + Update(a1→a2)      = Add(a2)
//   Update(a0→a1) + Update(a1→a2) = Update(a0→a2)
//   Update(a0→a1) + Delete(a2)   = Delete(a2)
//   Add(a1) + Delete(a1)         = nothing (the handler never saw it)
//   Delete(a1) + Add(b1)         = both, in order (a new instance)
// Pending notifications are then bounded by `max_in_order` plus two per
// key in the cache. Per key, the order is always kept: a handler never sees
// an older state of an object after a newer one, nor an update after the
// deletion of the same instance. Across keys, merged notifications move
// earlier. Coalescing stops once the backlog falls to half the bound.
#ifndef KCR_RUNTIME_CACHE_PROCESSOR_LISTENER_H_
#define KCR_RUNTIME_CACHE_PROCESSOR_LISTENER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "api/object.h"
#include "base/mutex.h"

namespace kcr::cache {

// What an informer calls. Each method is called on the handler's own
// thread, one call at a time, in the order of the changes (see above).
// Objects are shared with the cache and must not be modified (they cannot
// be). An exception thrown by a method is caught, logged and counted; the
// next notification is delivered as usual.
class ResourceEventHandler {
 public:
  virtual ~ResourceEventHandler() = default;
  // A new object. `is_in_initial_list`: it came from the informer's first
  // list (or, for a handler added late, from the cache's contents then).
  virtual void OnAdd(const api::ObjectPtr& object, bool is_in_initial_list) {}
  // A changed object (or, for a resync, the same object twice).
  virtual void OnUpdate(const api::ObjectPtr& old_object,
                        const api::ObjectPtr& new_object) {}
  // A deleted object: its last state. `final_state_unknown` (client-go's
  // DeletedFinalStateUnknown): the deletion was noticed by a relist, and
  // `object` is the last state the cache saw, which may be stale.
  virtual void OnDelete(const api::ObjectPtr& object,
                        bool final_state_unknown) {}
};

// A handler from functions; an empty one ignores its notifications.
class ResourceEventHandlerFuncs final : public ResourceEventHandler {
 public:
  std::function<void(const api::ObjectPtr&, bool)> add_func;
  std::function<void(const api::ObjectPtr&, const api::ObjectPtr&)> update_func;
  std::function<void(const api::ObjectPtr&, bool)> delete_func;

  void OnAdd(const api::ObjectPtr& object, bool is_in_initial_list) override {
    if (add_func) add_func(object, is_in_initial_list);
  }
  void OnUpdate(const api::ObjectPtr& old_object,
                const api::ObjectPtr& new_object) override {
    if (update_func) update_func(old_object, new_object);
  }
  void OnDelete(const api::ObjectPtr& object,
                bool final_state_unknown) override {
    if (delete_func) delete_func(object, final_state_unknown);
  }
};

// One notification for a handler.
struct HandlerEvent {
  enum class Type { kAdd, kUpdate, kDelete };
  Type type = Type::kAdd;
  api::ObjectPtr object;             // the new state (kDelete: the last state)
  api::ObjectPtr old_object;         // kUpdate only
  bool is_in_initial_list = false;   // kAdd only
  bool final_state_unknown = false;  // kDelete only

  static HandlerEvent Add(api::ObjectPtr object, bool is_in_initial_list);
  static HandlerEvent Update(api::ObjectPtr old_object,
                             api::ObjectPtr new_object);
  static HandlerEvent Delete(api::ObjectPtr object, bool final_state_unknown);
};

struct ProcessorListenerOptions {
  // For logs.
  std::string name;
  // Notifications kept strictly in order before coalescing starts.
  size_t max_in_order = 16384;
  // Called with the number of pending notifications whenever it changes
  // by a batch (e.g. a queue-depth gauge); may be empty.
  std::function<void(size_t)> on_depth;
};

// Thread-safe. Start once; Stop (or the destructor) ends the thread.
class ProcessorListener {
 public:
  ProcessorListener(std::shared_ptr<ResourceEventHandler> handler,
                    ProcessorListenerOptions options);
  ~ProcessorListener();
  ProcessorListener(const ProcessorListener&) = delete;
  ProcessorListener& operator=(const ProcessorListener&) = delete;

  // Starts the thread that calls the handler. Notifications added before
  // are delivered first.
  void Start();
  // Queues a notification; never waits for the handler. Ignored after
  // Stop.
  void Add(HandlerEvent event);
  // Queues `events` in order, waking the thread once for all of them.
  void Add(absl::Span<const HandlerEvent> events);
  // Stops delivering: the call in progress finishes, pending notifications
  // are dropped. Does not wait; the destructor joins the thread (so never
  // destroy a listener from its own handler).
  void Stop();

  // Whether every notification with is_in_initial_list queued so far has
  // been delivered (the handler returned) — the per-handler HasSynced.
  bool InitialListDelivered() const;
  // Blocks until nothing is pending and the handler is idle, or `timeout`
  // (real time) passes; returns whether it became idle. For tests and
  // shutdown.
  bool WaitIdle(absl::Duration timeout) const;

  size_t pending() const;
  // Notifications delivered, merged into another, and thrown by the
  // handler, so far.
  int64_t delivered() const;
  int64_t coalesced() const;
  int64_t handler_errors() const;

  // Resync bookkeeping for the informer (client-go's shouldResync and
  // determineNextResync). `period` 0 means never.
  absl::Duration resync_period() const { return resync_period_; }
  void set_resync_period(absl::Duration period) { resync_period_ = period; }
  // True, and schedules the next one, when a resync is due at `now`.
  bool ShouldResync(absl::Time now);
  void SetNextResync(absl::Time now) { next_resync_ = now + resync_period_; }

 private:
  struct Entry {
    HandlerEvent event;
    std::string key;  // set only while coalescing
    bool live = true;
  };

  // Queues `event` (see Add); false when it was ignored or merged into a
  // pending one, i.e. there is nothing new to wake the thread for.
  bool AddLocked(HandlerEvent event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Loop();
  void Deliver(const HandlerEvent& event);
  // Builds the key index of every pending notification.
  void StartCoalescingLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Merges `event` into the pending `entry` for the same key; false when
  // they must stay two notifications.
  bool MergeLocked(Entry& entry, HandlerEvent& event)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReportDepthLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::shared_ptr<ResourceEventHandler> handler_;
  const ProcessorListenerOptions options_;
  // Only the informer's delivery path touches these (under its lock).
  absl::Duration resync_period_ = absl::ZeroDuration();
  absl::Time next_resync_ = absl::InfinitePast();

  mutable Mutex mu_;
  CondVar cv_;               // pending work or stop, for the thread
  mutable CondVar idle_cv_;  // the thread went idle
  std::deque<Entry> queue_ ABSL_GUARDED_BY(mu_);
  // The sequence number of queue_.front().
  uint64_t head_seq_ ABSL_GUARDED_BY(mu_) = 0;
  size_t live_ ABSL_GUARDED_BY(mu_) = 0;
  bool coalescing_ ABSL_GUARDED_BY(mu_) = false;
  // While coalescing: key → sequence number of its latest live entry.
  absl::flat_hash_map<std::string, uint64_t> latest_ ABSL_GUARDED_BY(mu_);
  int64_t initial_pending_ ABSL_GUARDED_BY(mu_) = 0;
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  int64_t delivered_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t coalesced_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t handler_errors_ ABSL_GUARDED_BY(mu_) = 0;
  size_t reported_depth_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace kcr::cache

#endif  // KCR_RUNTIME_CACHE_PROCESSOR_LISTENER_H_
