#include "apiserver/endpoints/response_writers.h"

#include <cstring>
#include <utility>

#include "rapidjson/writer.h"

namespace kcr {
namespace apiserver {

void SendJson(HttpExchange* ex, int code, std::string body) {
  HttpResponse r;
  r.status = code;
  r.body = std::move(body);
  ex->Respond(std::move(r));
}

void SendApiError(HttpExchange* ex, const api::StatusError& e) {
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
  SendApiError(ex, api::StatusError::FromStatus(s));
}

void WritePartialObjectMetadata(const api::Object& object,
                                std::string_view version,
                                rapidjson::StringBuffer* out) {
  auto put = [out](std::string_view s) {
    std::memcpy(out->Push(s.size()), s.data(), s.size());
  };
  put(R"({"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/)");
  put(version);
  put(R"(","metadata":)");
  rapidjson::Writer<rapidjson::StringBuffer> writer(*out);
  object.metadata().Accept(writer);
  put("}");
}

std::string PartialObjectMetadataJson(const api::Object& object,
                                      std::string_view version) {
  rapidjson::StringBuffer buffer;
  WritePartialObjectMetadata(object, version, &buffer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace apiserver
}  // namespace kcr
