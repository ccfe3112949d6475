// Predicates: filters that decide which events reach a controller's event
// handler (controller-runtime's pkg/predicate).
//
// A Predicate holds one function per event type; an empty function lets
// every event of that type through. A watch's event is handled only when
// every predicate of the watch (and every WithEventFilter predicate of the
// builder) lets it through.
//
//   builder.For(deployments, {GenerationChanged()})
//          .WithEventFilter(And({InNamespace("prod"), Not(LabelChanged())}))
//
// Predicates are copyable values and thread-safe when their functions are;
// those made here are.
#ifndef KCR_RUNTIME_CONTROLLER_PREDICATE_H_
#define KCR_RUNTIME_CONTROLLER_PREDICATE_H_

#include <functional>
#include <string>
#include <vector>

#include "api/object.h"
#include "api/selector/label_selector.h"
#include "runtime/controller/event.h"

namespace kcr::controller {

struct Predicate {
  std::function<bool(const CreateEvent&)> create;
  std::function<bool(const UpdateEvent&)> update;
  std::function<bool(const DeleteEvent&)> delete_;
  std::function<bool(const GenericEvent&)> generic;

  bool Create(const CreateEvent& e) const { return !create || create(e); }
  bool Update(const UpdateEvent& e) const { return !update || update(e); }
  bool Delete(const DeleteEvent& e) const { return !delete_ || delete_(e); }
  bool Generic(const GenericEvent& e) const { return !generic || generic(e); }
};

// Applies `filter` to the object of every event (the new object of an
// update), controller-runtime's NewPredicateFuncs.
Predicate NewPredicateFuncs(std::function<bool(const api::Object&)> filter);

// Updates pass only when metadata.generation changed (status-only writes
// do not change it); other events pass. An update missing either object
// does not pass.
Predicate GenerationChanged();
// Updates pass only when metadata.resourceVersion changed (drops resyncs).
Predicate ResourceVersionChanged();
// Updates pass only when metadata.labels changed.
Predicate LabelChanged();
// Updates pass only when metadata.annotations changed.
Predicate AnnotationChanged();

// Every event whose object is in `namespace_`.
Predicate InNamespace(std::string namespace_);
// Every event whose object's labels match `selector` (the new object's, for
// an update).
Predicate MatchingLabels(api::LabelSelector selector);

// An event passes when every predicate lets it through (true when empty).
Predicate And(std::vector<Predicate> predicates);
// An event passes when any predicate lets it through (false when empty).
Predicate Or(std::vector<Predicate> predicates);
// An event passes when `predicate` does not let it through.
Predicate Not(Predicate predicate);

}  // namespace kcr::controller

#endif  // KCR_RUNTIME_CONTROLLER_PREDICATE_H_
