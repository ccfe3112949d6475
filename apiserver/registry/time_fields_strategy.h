// Strategies of the built-in kinds whose fields are Kubernetes timestamps
// (Leases, Events): kube-apiserver decodes such a field into a
// metav1.Time or metav1.MicroTime, so whatever offset or precision a
// client sends, it stores UTC with "Z", whole seconds for a Time and six
// fractional digits for a MicroTime ("+01:00" and ".5" come back as
// "...Z" and ".500000Z"). A value that is not an RFC 3339 time is refused.
#ifndef KCR_APISERVER_REGISTRY_TIME_FIELDS_STRATEGY_H_
#define KCR_APISERVER_REGISTRY_TIME_FIELDS_STRATEGY_H_

#include "apiserver/registry/strategy.h"

namespace kcr {
namespace apiserver {

// coordination.k8s.io/v1 Lease: spec.acquireTime, spec.renewTime.
const Strategy& LeaseStrategy();
// v1 Event: firstTimestamp, lastTimestamp (Time); eventTime,
// series.lastObservedTime (MicroTime).
const Strategy& EventStrategy();

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_TIME_FIELDS_STRATEGY_H_
