// The patch algorithms of api/patch and apiserver/fieldmanager bound to the
// Registry's PatchHandlers seam: strategic merge patch for the built-in kinds
// (415 for custom resources, as kube-apiserver) and server-side apply with
// field ownership in metadata.managedFields (409 Conflict listing each
// conflicting field and its manager). ApiServer installs them unless its
// options carry others.
//
// Thread-safe: the handlers hold only the clock.
#ifndef KCR_APISERVER_ENDPOINTS_PATCH_HANDLERS_H_
#define KCR_APISERVER_ENDPOINTS_PATCH_HANDLERS_H_

#include "apiserver/registry/registry.h"
#include "apiserver/registry/resources.h"
#include "base/clock.h"

namespace kcr {
namespace apiserver {

// Handlers that time managedFields entries with `clock` (must outlive
// them).
PatchHandlers DefaultPatchHandlers(const Clock* clock);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_PATCH_HANDLERS_H_
