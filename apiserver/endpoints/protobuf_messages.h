// The protobuf message tables of the Kubernetes types the server decodes
// (protobuf.h lists them): k8s.io/api's core/v1, apps/v1, batch/v1, rbac/v1
// and authorization/v1 kinds, the meta/v1 types they embed, and DeleteOptions.
// Field numbers come from the Go struct tags, JSON names and omitempty
// from the json tags.
//
// Internal to KubernetesProtobufToJson (protobuf.h).
#ifndef KCR_APISERVER_ENDPOINTS_PROTOBUF_MESSAGES_H_
#define KCR_APISERVER_ENDPOINTS_PROTOBUF_MESSAGES_H_

#include <string>

#include "apiserver/endpoints/protobuf_decoder.h"

namespace kcr {
namespace apiserver {
namespace protobuf_internal {

// The table of `kind` in `api_version`, or null when it is not decoded.
// DeleteOptions is found in every group version.
const Message* FindMessage(const std::string& api_version,
                           const std::string& kind);

}  // namespace protobuf_internal
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_PROTOBUF_MESSAGES_H_
