// Writing responses as kube-apiserver's endpoints/handlers/responsewriters
// does: a JSON body with a status code, and an error as a Status object
// (with Retry-After when the error asks for it).
#ifndef KCR_APISERVER_RESPONSE_WRITERS_H_
#define KCR_APISERVER_RESPONSE_WRITERS_H_

#include <string>

#include "absl/status/status.h"
#include "apiserver/api_error.h"
#include "apiserver/http_server.h"

namespace kcr {
namespace apiserver {

inline constexpr char kJson[] = "application/json";

void SendJson(HttpExchange* ex, int code, std::string body);
void SendApiError(HttpExchange* ex, const ApiError& e);
// `s` as its ApiError (500 InternalError when it carries none).
void SendError(HttpExchange* ex, const absl::Status& s);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_RESPONSE_WRITERS_H_
