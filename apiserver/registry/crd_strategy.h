// The strategy of CustomResourceDefinitions: validated as
// apiextensions-apiserver does, held by the cleanup finalizer until their
// objects are gone, and given the status the naming and establishing
// controllers of apiextensions-apiserver would set (at once, on every
// write).
#ifndef KCR_APISERVER_REGISTRY_CRD_STRATEGY_H_
#define KCR_APISERVER_REGISTRY_CRD_STRATEGY_H_

#include <string>

#include "api/object.h"
#include "api/object_builder.h"
#include "apiserver/registry/resources.h"
#include "apiserver/registry/strategy.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

// Holds a deleted CRD until every object of it is gone.
inline constexpr char kCrdCleanupFinalizer[] =
    "customresourcecleanup.apiextensions.k8s.io";

bool IsCRDResource(const ResourceInfo& resource);

const Strategy& CRDStrategy();

// Sets status.acceptedNames, conditions (NamesAccepted, Established, and
// Terminating once deleting) and storedVersions of the CRD in *crd.
// `old_status` (may be null) keeps each unchanged condition's
// lastTransitionTime and the versions stored before; `now` is RFC 3339.
void SetCRDStatus(api::ObjectBuilder* crd, const rapidjson::Value* old_status,
                  const std::string& now);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_CRD_STRATEGY_H_
