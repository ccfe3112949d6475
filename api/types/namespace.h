// Namespace (v1): status.phase, Active or Terminating.
#ifndef KCR_API_TYPES_NAMESPACE_H_
#define KCR_API_TYPES_NAMESPACE_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "api/object.h"
#include "api/types/view.h"

namespace kcr {
namespace api {

class NamespaceView : public TypedView {
 public:
  // Where it lives on the server (GroupVersionResource and scope).
  static constexpr char kGroup[] = "";
  static constexpr char kVersion[] = "v1";
  static constexpr char kPlural[] = "namespaces";
  static constexpr bool kNamespaced = false;

  static absl::StatusOr<NamespaceView> Create(ObjectPtr ns);

  // status.phase: "Active", "Terminating", or "" when absent.
  std::string_view phase() const;
  // Phase Active, or no phase yet and not being deleted (a namespace
  // object fresh from create has no status).
  bool active() const;
  // Phase Terminating, or deletionTimestamp set.
  bool terminating() const;

 private:
  explicit NamespaceView(ObjectPtr o) : TypedView(std::move(o)) {}
};

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_TYPES_NAMESPACE_H_
