#include "runtime/controller/predicate.h"

#include <utility>

#include "glog/logging.h"

namespace kcr::controller {
namespace {

// An update predicate comparing one aspect of the old and new objects.
Predicate UpdateChanged(
    const char* what,
    std::function<bool(const api::Object&, const api::Object&)> changed) {
  Predicate p;
  p.update = [what, changed = std::move(changed)](const UpdateEvent& e) {
    if (e.object_old == nullptr || e.object_new == nullptr) {
      LOG(ERROR) << "update event without an old or new object predicate="
                 << what;
      return false;
    }
    return changed(*e.object_old, *e.object_new);
  };
  return p;
}

// An object's metadata.labels as the selector's Labels, without a copy.
class ObjectLabels final : public api::Labels {
 public:
  explicit ObjectLabels(api::StringMapView labels) : labels_(labels) {}
  std::optional<std::string_view> Get(std::string_view key) const override {
    return labels_.Get(key);
  }

 private:
  api::StringMapView labels_;
};

}  // namespace

Predicate NewPredicateFuncs(std::function<bool(const api::Object&)> filter) {
  auto f = std::make_shared<std::function<bool(const api::Object&)>>(
      std::move(filter));
  Predicate p;
  p.create = [f](const CreateEvent& e) {
    return e.object != nullptr && (*f)(*e.object);
  };
  p.update = [f](const UpdateEvent& e) {
    return e.object_new != nullptr && (*f)(*e.object_new);
  };
  p.delete_ = [f](const DeleteEvent& e) {
    return e.object != nullptr && (*f)(*e.object);
  };
  p.generic = [f](const GenericEvent& e) {
    return e.object != nullptr && (*f)(*e.object);
  };
  return p;
}

Predicate GenerationChanged() {
  return UpdateChanged("GenerationChanged",
                       [](const api::Object& o, const api::Object& n) {
                         return o.generation() != n.generation();
                       });
}

Predicate ResourceVersionChanged() {
  return UpdateChanged("ResourceVersionChanged",
                       [](const api::Object& o, const api::Object& n) {
                         return o.resource_version() != n.resource_version();
                       });
}

Predicate LabelChanged() {
  return UpdateChanged("LabelChanged",
                       [](const api::Object& o, const api::Object& n) {
                         return o.labels().ToMap() != n.labels().ToMap();
                       });
}

Predicate AnnotationChanged() {
  return UpdateChanged(
      "AnnotationChanged", [](const api::Object& o, const api::Object& n) {
        return o.annotations().ToMap() != n.annotations().ToMap();
      });
}

Predicate InNamespace(std::string namespace_) {
  return NewPredicateFuncs([ns = std::move(namespace_)](const api::Object& o) {
    return o.namespace_() == ns;
  });
}

Predicate MatchingLabels(api::LabelSelector selector) {
  return NewPredicateFuncs(
      [selector = std::move(selector)](const api::Object& o) {
        return selector.Matches(ObjectLabels(o.labels()));
      });
}

Predicate And(std::vector<Predicate> predicates) {
  auto ps =
      std::make_shared<const std::vector<Predicate>>(std::move(predicates));
  Predicate p;
  p.create = [ps](const CreateEvent& e) {
    for (const Predicate& q : *ps) {
      if (!q.Create(e)) return false;
    }
    return true;
  };
  p.update = [ps](const UpdateEvent& e) {
    for (const Predicate& q : *ps) {
      if (!q.Update(e)) return false;
    }
    return true;
  };
  p.delete_ = [ps](const DeleteEvent& e) {
    for (const Predicate& q : *ps) {
      if (!q.Delete(e)) return false;
    }
    return true;
  };
  p.generic = [ps](const GenericEvent& e) {
    for (const Predicate& q : *ps) {
      if (!q.Generic(e)) return false;
    }
    return true;
  };
  return p;
}

Predicate Or(std::vector<Predicate> predicates) {
  auto ps =
      std::make_shared<const std::vector<Predicate>>(std::move(predicates));
  Predicate p;
  p.create = [ps](const CreateEvent& e) {
    for (const Predicate& q : *ps) {
      if (q.Create(e)) return true;
    }
    return false;
  };
  p.update = [ps](const UpdateEvent& e) {
    for (const Predicate& q : *ps) {
      if (q.Update(e)) return true;
    }
    return false;
  };
  p.delete_ = [ps](const DeleteEvent& e) {
    for (const Predicate& q : *ps) {
      if (q.Delete(e)) return true;
    }
    return false;
  };
  p.generic = [ps](const GenericEvent& e) {
    for (const Predicate& q : *ps) {
      if (q.Generic(e)) return true;
    }
    return false;
  };
  return p;
}

Predicate Not(Predicate predicate) {
  auto q = std::make_shared<const Predicate>(std::move(predicate));
  Predicate p;
  p.create = [q](const CreateEvent& e) { return !q->Create(e); };
  p.update = [q](const UpdateEvent& e) { return !q->Update(e); };
  p.delete_ = [q](const DeleteEvent& e) { return !q->Delete(e); };
  p.generic = [q](const GenericEvent& e) { return !q->Generic(e); };
  return p;
}

}  // namespace kcr::controller
