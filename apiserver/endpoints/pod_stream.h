// pods/exec, pods/attach and pods/portforward: the streaming subresources
// kubectl exec, attach and port-forward (and client libraries' stream())
// use. No container runs on the local API server, so there is nothing to
// stream; these answer as kube-apiserver does when the kubelet behind it
// cannot run the request, so clients print one clear error instead of a
// 404 or a hang:
//
//  * The request is checked first, as kube-apiserver's streamLocation does:
//    a missing pod is 404 NotFound, a missing or unknown container 400
//    ("container x is not valid for pod p"), a pod not on a node 400 ("pod
//    p does not have a host assigned"), a request that is not an upgrade
//    400 ("Upgrade request required").
//  * The upgrade is then answered (101 Switching Protocols) and the failure
//    reported on the protocol's error channel:
//      - WebSocket (kubectl 1.30+ exec/attach; the Python client's exec and
//        port-forward): the k8s channel protocols v5/v4/v3/v2.channel.k8s.io,
//        channel.k8s.io and their base64 variants; exec and attach write a
//        Status on channel 3 (plain text before v4), port-forward the port
//        prefix on each port's data and error channels and then the error;
//        then a close frame.
//      - SPDY/3.1 (older kubectl, and every kubectl's port-forward): each
//        stream the client opens gets its SYN_REPLY; exec and attach write
//        the Status on the error stream (the first one client-go opens)
//        once the streams the request asked for are open, and end every
//        stream; port-forward answers each connection's error stream with
//        the error and keeps the session until the client leaves.
//    kubectl port-forward over WebSocket (SPDY tunnelled in WebSocket,
//    "SPDY/3.1+portforward.k8s.io") is refused before the upgrade, and
//    kubectl falls back to SPDY as it does against older servers.
//
// Thread-safe: one call per request, on the request's thread.
#ifndef KCR_APISERVER_ENDPOINTS_POD_STREAM_H_
#define KCR_APISERVER_ENDPOINTS_POD_STREAM_H_

#include <string>
#include <string_view>

#include "apiserver/endpoints/http_server.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/resources.h"

namespace kcr {
namespace apiserver {

// Serves `subresource` ("exec", "attach" or "portforward") of pod ns/name.
void ServePodStream(Registry* registry, const ResourceInfo& pods,
                    const std::string& ns, const std::string& name,
                    const std::string& subresource, const HttpRequest& req,
                    HttpExchange* ex);

// RFC 6455's Sec-WebSocket-Accept for a Sec-WebSocket-Key.
std::string WebSocketAccept(std::string_view key);

// One unmasked, final WebSocket frame (server to client).
std::string WebSocketFrame(int opcode, std::string_view payload);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_POD_STREAM_H_
