#include "runtime/controller/handler.h"

#include <initializer_list>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "glog/logging.h"

namespace kcr::controller {
namespace {

class ForObject final : public EventHandler {
 public:
  void Create(const CreateEvent& e, RequestQueue& q) override {
    Add(e.object, q);
  }
  void Update(const UpdateEvent& e, RequestQueue& q) override {
    Add(e.object_new != nullptr ? e.object_new : e.object_old, q);
  }
  void Delete(const DeleteEvent& e, RequestQueue& q) override {
    Add(e.object, q);
  }
  void Generic(const GenericEvent& e, RequestQueue& q) override {
    Add(e.object, q);
  }

 private:
  static void Add(const api::ObjectPtr& object, RequestQueue& q) {
    if (object == nullptr) {
      LOG(ERROR) << "event without an object handler=EnqueueRequestForObject";
      return;
    }
    q.Add(Request::For(*object));
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
  void AddTo(RequestQueue& q) {
    for (const Request& r : order_) q.Add(r);
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
    Enqueue({&e.object}, q);
  }
  void Update(const UpdateEvent& e, RequestQueue& q) override {
    Enqueue({&e.object_old, &e.object_new}, q);
  }
  void Delete(const DeleteEvent& e, RequestQueue& q) override {
    Enqueue({&e.object}, q);
  }
  void Generic(const GenericEvent& e, RequestQueue& q) override {
    Enqueue({&e.object}, q);
  }

 protected:
  // Inserts the Requests `object` (never null) maps to.
  virtual void Collect(const api::Object& object, RequestSet& set) const = 0;

 private:
  void Enqueue(std::initializer_list<const api::ObjectPtr*> objects,
               RequestQueue& q) const {
    RequestSet set;
    for (const api::ObjectPtr* object : objects) {
      if (*object != nullptr) Collect(**object, set);
    }
    set.AddTo(q);
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
