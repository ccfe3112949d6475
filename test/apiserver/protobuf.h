// Decoding of Kubernetes' protobuf request bodies
// (Content-Type: application/vnd.kubernetes.protobuf) into JSON, for the
// kinds that kubectl's typed `create` subcommands send that way:
// `kubectl create namespace|configmap|secret|serviceaccount`. The body is
// the "k8s\0" magic plus a runtime.Unknown envelope {typeMeta, raw}; raw is
// the generated message of k8s.io/api core/v1 (field numbers from its
// generated.proto). Responses are always JSON, which those clients accept.
#ifndef KCR_TEST_APISERVER_PROTOBUF_H_
#define KCR_TEST_APISERVER_PROTOBUF_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace kcr {
namespace apiserver {

// The JSON object of a protobuf-encoded v1 Namespace, ConfigMap, Secret or
// ServiceAccount. InvalidArgument for malformed protobuf; Unimplemented
// for any other kind (the caller answers 415).
absl::StatusOr<std::string> KubernetesProtobufToJson(std::string_view body);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_TEST_APISERVER_PROTOBUF_H_
