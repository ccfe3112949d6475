#include "runtime/controller/handler.h"

#include <initializer_list>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "glog/logging.h"

namespace kcr::controller {

std::optional<int> PriorityOf(const CreateEvent& event) {
  if (event.is_in_initial_list) return kLowPriority;
  return std::nullopt;
}

std::optional<int> PriorityOf(const UpdateEvent& event) {
  if (event.object_old != nullptr && event.object_new != nullptr &&
      event.object_old->resource_version() ==
          event.object_new->resource_version()) {
    return kLowPriority;
  }
  return std::nullopt;
}

void AddWithPriority(RequestQueue& queue, const Request& request,
                     std::optional<int> priority) {
  // A type check per add, as controller-runtime's type assertion: the
  // handler sees the queue only through the interface every queue has.
  if (auto* pq = dynamic_cast<PriorityRequestQueue*>(&queue)) {
    workqueue::AddOpts opts;
    opts.priority = priority;
    pq->AddWithOpts(opts, request);
    return;
  }
  queue.Add(request);
}

namespace {

// A priority queue whose adds without a priority take `priority`
// (controller-runtime's workqueueWithDefaultPriority), for the functions
// of EventHandlerFuncs.
class DefaultPriorityQueue final : public PriorityRequestQueue {
 public:
  DefaultPriorityQueue(PriorityRequestQueue& queue, int priority)
      : queue_(queue), priority_(priority) {}

  using PriorityRequestQueue::AddWithOpts;

  void AddWithOpts(const workqueue::AddOpts& opts,
                   absl::Span<const Request> items) override {
    workqueue::AddOpts o = opts;
    if (!o.priority.has_value()) o.priority = priority_;
    queue_.AddWithOpts(o, items);
  }
  void Add(const Request& item) override { AddWithOpts({}, item); }
  void Add(Request&& item) override { AddWithOpts({}, item); }
  void AddAfter(const Request& item, absl::Duration delay) override {
    workqueue::AddOpts o;
    o.after = delay;
    AddWithOpts(o, item);
  }
  void AddRateLimited(const Request& item) override {
    workqueue::AddOpts o;
    o.rate_limited = true;
    AddWithOpts(o, item);
  }
  std::optional<workqueue::PrioritizedItem<Request>> GetWithPriority()
      override {
    return queue_.GetWithPriority();
  }
  std::optional<Request> Get() override { return queue_.Get(); }
  void Done(const Request& item) override { queue_.Done(item); }
  size_t Len() const override { return queue_.Len(); }
  void ShutDown() override { queue_.ShutDown(); }
  void ShutDownWithDrain() override { queue_.ShutDownWithDrain(); }
  bool ShuttingDown() const override { return queue_.ShuttingDown(); }
  void Forget(const Request& item) override { queue_.Forget(item); }
  int NumRequeues(const Request& item) override {
    return queue_.NumRequeues(item);
  }

 private:
  PriorityRequestQueue& queue_;
  const int priority_;
};

// Calls `fn` with `q`, or with `q` defaulting to `priority` when it is set
// and `q` is a priority queue.
template <typename Event>
void CallWithPriority(
    const std::function<void(const Event&, RequestQueue&)>& fn, const Event& e,
    RequestQueue& q) {
  if (!fn) return;
  const std::optional<int> priority = PriorityOf(e);
  auto* pq =
      priority.has_value() ? dynamic_cast<PriorityRequestQueue*>(&q) : nullptr;
  if (pq == nullptr) {
    fn(e, q);
    return;
  }
  DefaultPriorityQueue defaulting(*pq, *priority);
  fn(e, defaulting);
}

class ForObject final : public EventHandler {
 public:
  void Create(const CreateEvent& e, RequestQueue& q) override {
    Add(e.object, q, PriorityOf(e));
  }
  void Update(const UpdateEvent& e, RequestQueue& q) override {
    Add(e.object_new != nullptr ? e.object_new : e.object_old, q,
        PriorityOf(e));
  }
  void Delete(const DeleteEvent& e, RequestQueue& q) override {
    Add(e.object, q, std::nullopt);
  }
  void Generic(const GenericEvent& e, RequestQueue& q) override {
    Add(e.object, q, std::nullopt);
  }

 private:
  static void Add(const api::ObjectPtr& object, RequestQueue& q,
                  std::optional<int> priority) {
    if (object == nullptr) {
      LOG(ERROR) << "event without an object handler=EnqueueRequestForObject";
      return;
    }
    AddWithPriority(q, Request::For(*object), priority);
  }
};

// The group of an apiVersion: "apps" of "apps/v1", "" of "v1".
std::string_view GroupOf(std::string_view api_version) {
  const size_t slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view()
                                         : api_version.substr(0, slash);
}

// Collects the Requests of one event, each once, then adds them.
class RequestSet {
 public:
  void Insert(Request r) {
    if (seen_.insert(r).second) order_.push_back(std::move(r));
  }
  void AddTo(RequestQueue& q, std::optional<int> priority) {
    for (const Request& r : order_) AddWithPriority(q, r, priority);
  }

 private:
  absl::flat_hash_set<Request> seen_;
  std::vector<Request> order_;
};

// Enqueues the Requests found in each object an event carries (both
// objects of an update), each Request once per event, in order.
class PerObject : public EventHandler {
 public:
  void Create(const CreateEvent& e, RequestQueue& q) override {
    Enqueue({&e.object}, q, PriorityOf(e));
  }
  void Update(const UpdateEvent& e, RequestQueue& q) override {
    Enqueue({&e.object_old, &e.object_new}, q, PriorityOf(e));
  }
  void Delete(const DeleteEvent& e, RequestQueue& q) override {
    Enqueue({&e.object}, q, std::nullopt);
  }
  void Generic(const GenericEvent& e, RequestQueue& q) override {
    Enqueue({&e.object}, q, std::nullopt);
  }

 protected:
  // Inserts the Requests `object` (never null) maps to.
  virtual void Collect(const api::Object& object, RequestSet& set) const = 0;

 private:
  void Enqueue(std::initializer_list<const api::ObjectPtr*> objects,
               RequestQueue& q, std::optional<int> priority) const {
    RequestSet set;
    for (const api::ObjectPtr* object : objects) {
      if (*object != nullptr) Collect(**object, set);
    }
    set.AddTo(q, priority);
  }
};

class ForOwner final : public PerObject {
 public:
  explicit ForOwner(OwnerType owner) : owner_(std::move(owner)) {}

 private:
  void Collect(const api::Object& object, RequestSet& set) const override {
    for (const api::OwnerReferenceView& ref : object.owner_references()) {
      if (owner_.only_controller && !ref.controller) continue;
      if (ref.kind != owner_.kind || GroupOf(ref.api_version) != owner_.group ||
          ref.name.empty()) {
        continue;
      }
      set.Insert(Request{
          owner_.namespaced ? std::string(object.namespace_()) : std::string(),
          std::string(ref.name)});
    }
  }

  const OwnerType owner_;
};

class FromMapFunc final : public PerObject {
 public:
  explicit FromMapFunc(MapFunc map) : map_(std::move(map)) {}

 private:
  void Collect(const api::Object& object, RequestSet& set) const override {
    for (Request& r : map_(object)) set.Insert(std::move(r));
  }

  const MapFunc map_;
};

}  // namespace

void EventHandlerFuncs::Create(const CreateEvent& e, RequestQueue& q) {
  CallWithPriority(create, e, q);
}

void EventHandlerFuncs::Update(const UpdateEvent& e, RequestQueue& q) {
  CallWithPriority(update, e, q);
}

std::shared_ptr<EventHandler> EnqueueRequestForObject() {
  return std::make_shared<ForObject>();
}

std::shared_ptr<EventHandler> EnqueueRequestForOwner(OwnerType owner) {
  return std::make_shared<ForOwner>(std::move(owner));
}

std::shared_ptr<EventHandler> EnqueueRequestsFromMapFunc(MapFunc map) {
  return std::make_shared<FromMapFunc>(std::move(map));
}

}  // namespace kcr::controller
