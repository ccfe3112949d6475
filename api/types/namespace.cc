#include "api/types/namespace.h"

#include "api/types/field.h"

namespace kcr {
namespace api {

absl::StatusOr<NamespaceView> NamespaceView::Create(ObjectPtr ns) {
  if (absl::Status s = Check(ns, "Namespace"); !s.ok()) return s;
  return NamespaceView(std::move(ns));
}

std::string_view NamespaceView::phase() const {
  return field::String(field::Object(&object().json(), "status"), "phase");
}

bool NamespaceView::active() const {
  if (terminating()) return false;
  return phase() == "Active" || phase().empty();
}

bool NamespaceView::terminating() const {
  return phase() == "Terminating" || object().being_deleted();
}

}  // namespace api
}  // namespace kcr
