#include "runtime/controller/reconciler.h"

#include <cstdint>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/string_view.h"

namespace kcr::controller {

std::string Request::ToString() const {
  if (namespace_.empty()) return name;
  return absl::StrCat(namespace_, "/", name);
}

ReconcileContext::ReconcileContext(Context ctx, std::string_view controller,
                                   const Request& request,
                                   std::string reconcile_id)
    : ctx_(std::move(ctx)),
      controller_(controller),
      reconcile_id_(std::move(reconcile_id)),
      log_prefix_(absl::StrCat(
          "controller=", ToAbsl(controller), " namespace=", request.namespace_,
          " name=", request.name, " reconcileID=", reconcile_id_)) {}

std::string NewReconcileId() {
  // One generator per thread: absl::BitGen is not thread-safe, and seeding
  // one per call would be slow.
  thread_local absl::BitGen gen;
  uint64_t hi = absl::Uniform<uint64_t>(gen);
  uint64_t lo = absl::Uniform<uint64_t>(gen);
  hi = (hi & ~uint64_t{0xF000}) | uint64_t{0x4000};            // version 4
  lo = (lo & ~(uint64_t{0xC} << 60)) | (uint64_t{0x8} << 60);  // variant 1
  return absl::StrFormat("%08x-%04x-%04x-%04x-%012x", hi >> 32,
                         (hi >> 16) & 0xFFFF, hi & 0xFFFF, lo >> 48,
                         lo & 0xFFFFFFFFFFFFULL);
}

}  // namespace kcr::controller
