// Decoding of Kubernetes' protobuf request bodies
// (Content-Type: application/vnd.kubernetes.protobuf) into JSON, for the
// kinds that kubectl's typed generators send that way: `kubectl create
// namespace|configmap|secret|serviceaccount|deployment|service|job|cronjob`
// (v1 Namespace, ConfigMap, Secret, ServiceAccount, Service, apps/v1
// Deployment, batch/v1 Job and CronJob) and v1 Pod, and the DeleteOptions of a
// DELETE (`kubectl delete
// --grace-period`, `kubectl drain`). The body is the "k8s\0" magic plus a
// runtime.Unknown envelope {typeMeta, raw}; raw is the generated message of
// k8s.io/api (field numbers from its Go struct tags). Responses are always
// JSON, which those clients accept.
//
// The JSON is what Go's encoding/json writes for the same object (what
// `kubectl create ... --dry-run=client -o json` prints): zero scalars of
// omitempty fields are left out, pointers and required fields kept, the
// zero metav1.Time is null, IntOrString a number or a string, Quantity a
// string. Nothing is dropped: a field number the tables do not know, at any
// depth, fails the whole body.
#ifndef KCR_APISERVER_ENDPOINTS_PROTOBUF_H_
#define KCR_APISERVER_ENDPOINTS_PROTOBUF_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace kcr {
namespace apiserver {

// The JSON object of a protobuf-encoded object of the kinds above.
// InvalidArgument for malformed protobuf (the caller answers 400);
// Unimplemented, with a message naming what is missing, for any other kind
// or a field the decoder does not know (the caller answers 415, and the
// client can send JSON instead).
absl::StatusOr<std::string> KubernetesProtobufToJson(std::string_view body);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_PROTOBUF_H_
