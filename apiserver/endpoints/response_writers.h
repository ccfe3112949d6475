// Writing responses as kube-apiserver's endpoints/handlers/responsewriters
// does: a JSON body with a status code, an error as a Status object (with
// Retry-After when the error asks for it), and an object as metadata only.
#ifndef KCR_APISERVER_ENDPOINTS_RESPONSE_WRITERS_H_
#define KCR_APISERVER_ENDPOINTS_RESPONSE_WRITERS_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "api/errors/errors.h"
#include "api/object.h"
#include "apiserver/endpoints/http_server.h"
#include "rapidjson/stringbuffer.h"

namespace kcr {
namespace apiserver {

inline constexpr char kJson[] = "application/json";

void SendJson(HttpExchange* ex, int code, std::string body);
void SendApiError(HttpExchange* ex, const api::StatusError& e);
// `s` as its api::StatusError (500 InternalError when it carries none).
void SendError(HttpExchange* ex, const absl::Status& s);

// `object` as a meta.k8s.io/<version> PartialObjectMetadata (kind,
// apiVersion and its whole metadata), as kube-apiserver answers
// "Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1".
void WritePartialObjectMetadata(const api::Object& object,
                                std::string_view version,
                                rapidjson::StringBuffer* out);
std::string PartialObjectMetadataJson(const api::Object& object,
                                      std::string_view version);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_RESPONSE_WRITERS_H_
