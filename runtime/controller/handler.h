// Event handlers: how a watch turns events into Requests on a controller's
// queue (controller-runtime's pkg/handler).
//
//   EnqueueRequestForObject()      the object itself (For)
//   EnqueueRequestForOwner(gk)     the owner named by the object's
//                                  ownerReferences (Owns)
//   EnqueueRequestsFromMapFunc(f)  whatever `f` maps the object to (Watches)
//
// Handlers are called on the informer's delivery thread for the watch, one
// event at a time; they only add to the queue, which is thread-safe. The
// handlers made here are stateless and may be shared between watches.
//
// Priorities (controller-runtime v0.23): when the queue is a priority queue
// (workqueue::PriorityInterface, the controller's default), every handler
// here, EventHandlerFuncs included, enqueues at kLowPriority what an
// informer delivers without a change (an object of its initial list, or an
// update whose resourceVersion did not change: a resync), and everything
// else at the default priority, so that a fresh change is reconciled ahead
// of a restart's or a resync's backlog. With a plain queue they Add.
#ifndef KCR_RUNTIME_CONTROLLER_HANDLER_H_
#define KCR_RUNTIME_CONTROLLER_HANDLER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/object.h"
#include "runtime/controller/event.h"
#include "runtime/controller/reconciler.h"
#include "runtime/workqueue/priority_queue.h"
#include "runtime/workqueue/rate_limiting_queue.h"

namespace kcr::controller {

// A controller's queue, as handlers see it.
using RequestQueue = workqueue::RateLimitingInterface<Request>;
// The same queue when it is a priority queue.
using PriorityRequestQueue = workqueue::PriorityInterface<Request>;

// The priority of what an informer delivers without a change
// (controller-runtime's handler.LowPriority).
inline constexpr int kLowPriority = -100;

// kLowPriority for an object of the informer's initial list, else unset
// (the queue's default).
std::optional<int> PriorityOf(const CreateEvent& event);
// kLowPriority for an update that changed nothing (both objects present,
// with one resourceVersion: a resync), else unset.
std::optional<int> PriorityOf(const UpdateEvent& event);

// Adds `request` to `queue` at `priority` when the queue is a priority
// queue; otherwise Adds it.
void AddWithPriority(RequestQueue& queue, const Request& request,
                     std::optional<int> priority);

class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void Create(const CreateEvent& event, RequestQueue& queue) = 0;
  virtual void Update(const UpdateEvent& event, RequestQueue& queue) = 0;
  virtual void Delete(const DeleteEvent& event, RequestQueue& queue) = 0;
  virtual void Generic(const GenericEvent& event, RequestQueue& queue) = 0;
};

// Enqueues the event's object (an update's new object, or its old one when
// the new is missing).
std::shared_ptr<EventHandler> EnqueueRequestForObject();

// Who an object's owner is, for EnqueueRequestForOwner.
struct OwnerType {
  // The owner's API group ("" for the core group) and kind; an owner
  // reference matches when its apiVersion's group and its kind are these
  // (any version).
  std::string group;
  std::string kind;
  // A namespaced owner lives in its dependent's namespace (owner references
  // never cross namespaces); a cluster-scoped one has none.
  bool namespaced = true;
  // Only the reference with controller=true counts (controller-runtime's
  // OnlyControllerOwner, what Owns uses); otherwise every matching owner
  // is enqueued.
  bool only_controller = true;
};

// Enqueues the owners of the event's object; an update enqueues those of
// the old and the new object (each once), so that a dependent moving from
// one owner to another wakes both.
std::shared_ptr<EventHandler> EnqueueRequestForOwner(OwnerType owner);

// Maps an object to the Requests to enqueue. Called on the delivery
// thread: keep it quick; read from caches, not the API server.
using MapFunc = std::function<std::vector<Request>(const api::Object&)>;

// Enqueues what `map` returns for the event's object; an update enqueues
// the union for the old and the new object.
std::shared_ptr<EventHandler> EnqueueRequestsFromMapFunc(MapFunc map);

// An EventHandler from functions; an empty one ignores its events. On a
// priority queue, `create` and `update` see a queue whose adds without a
// priority of their own take PriorityOf(event).
class EventHandlerFuncs final : public EventHandler {
 public:
  std::function<void(const CreateEvent&, RequestQueue&)> create;
  std::function<void(const UpdateEvent&, RequestQueue&)> update;
  std::function<void(const DeleteEvent&, RequestQueue&)> delete_;
  std::function<void(const GenericEvent&, RequestQueue&)> generic;

  void Create(const CreateEvent& e, RequestQueue& q) override;
  void Update(const UpdateEvent& e, RequestQueue& q) override;
  void Delete(const DeleteEvent& e, RequestQueue& q) override {
    if (delete_) delete_(e, q);
  }
  void Generic(const GenericEvent& e, RequestQueue& q) override {
    if (generic) generic(e, q);
  }
};

}  // namespace kcr::controller

#endif  // KCR_RUNTIME_CONTROLLER_HANDLER_H_
