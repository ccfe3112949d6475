#include "apiserver/response_writers.h"

#include <utility>

namespace kcr {
namespace apiserver {

void SendJson(HttpExchange* ex, int code, std::string body) {
  HttpResponse r;
  r.status = code;
  r.body = std::move(body);
  ex->Respond(std::move(r));
}

void SendApiError(HttpExchange* ex, const ApiError& e) {
  HttpResponse r;
  r.status = e.code;
  r.body = e.ToJson();
  if (e.retry_after_seconds.has_value()) {
    r.headers.push_back(
        {"Retry-After", std::to_string(*e.retry_after_seconds)});
  }
  ex->Respond(std::move(r));
}

void SendError(HttpExchange* ex, const absl::Status& s) {
  SendApiError(ex, ApiError::FromStatus(s));
}

}  // namespace apiserver
}  // namespace kcr
