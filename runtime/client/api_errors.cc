#include "runtime/client/api_errors.h"

#include <cstdlib>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr::client {
namespace {

// The payload key under which the API fields travel with an absl::Status.
constexpr char kPayloadUrl[] = "type.kcr.io/kubernetes.Status";

std::string GetString(const rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject()) return "";
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || !it->value.IsString()) return "";
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

int32_t GetInt(const rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject()) return 0;
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || !it->value.IsNumber()) return 0;
  if (it->value.IsInt()) return it->value.GetInt();
  double d = it->value.GetDouble();
  if (d > 2147483647.0 || d < -2147483648.0) return 0;
  return static_cast<int32_t>(d);
}

ApiStatus ParseApiStatus(const rapidjson::Value& v) {
  ApiStatus s;
  s.code = GetInt(v, "code");
  s.reason = GetString(v, "reason");
  s.message = GetString(v, "message");
  auto details = v.FindMember("details");
  if (details != v.MemberEnd() && details->value.IsObject()) {
    const rapidjson::Value& d = details->value;
    s.name = GetString(d, "name");
    s.group = GetString(d, "group");
    s.kind = GetString(d, "kind");
    s.uid = GetString(d, "uid");
    s.retry_after_seconds = GetInt(d, "retryAfterSeconds");
    auto causes = d.FindMember("causes");
    if (causes != d.MemberEnd() && causes->value.IsArray()) {
      for (const auto& c : causes->value.GetArray()) {
        if (!c.IsObject()) continue;
        s.causes.push_back(
            {GetString(c, "reason"), GetString(c, "message"), GetString(c, "field")});
      }
    }
  }
  return s;
}

std::string Serialize(const ApiStatus& s) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("code");
  w.Int(s.code);
  w.Key("reason");
  w.String(s.reason);
  w.Key("message");
  w.String(s.message);
  w.Key("details");
  w.StartObject();
  w.Key("name");
  w.String(s.name);
  w.Key("group");
  w.String(s.group);
  w.Key("kind");
  w.String(s.kind);
  w.Key("uid");
  w.String(s.uid);
  w.Key("retryAfterSeconds");
  w.Int(s.retry_after_seconds);
  w.Key("causes");
  w.StartArray();
  for (const auto& c : s.causes) {
    w.StartObject();
    w.Key("reason");
    w.String(c.reason);
    w.Key("message");
    w.String(c.message);
    w.Key("field");
    w.String(c.field);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

absl::StatusCode CodeFor(int http_code, std::string_view reason) {
  if (reason == "Conflict") return absl::StatusCode::kAborted;
  if (reason == "AlreadyExists") return absl::StatusCode::kAlreadyExists;
  if (reason == "Expired" || reason == "Gone") {
    return absl::StatusCode::kFailedPrecondition;
  }
  if (reason == "ServerTimeout" || reason == "Timeout") {
    return absl::StatusCode::kDeadlineExceeded;
  }
  if (reason == "ServiceUnavailable") return absl::StatusCode::kUnavailable;
  if (reason == "TooManyRequests") return absl::StatusCode::kResourceExhausted;
  if (reason == "Unauthorized") return absl::StatusCode::kUnauthenticated;
  if (reason == "Forbidden") return absl::StatusCode::kPermissionDenied;
  if (reason == "NotFound") return absl::StatusCode::kNotFound;
  if (reason == "Invalid" || reason == "BadRequest") {
    return absl::StatusCode::kInvalidArgument;
  }
  switch (http_code) {
    case 400:
    case 406:
    case 413:
    case 415:
    case 422:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 405:
      return absl::StatusCode::kUnimplemented;
    case 409:
      return absl::StatusCode::kAborted;
    case 410:
      return absl::StatusCode::kFailedPrecondition;
    case 429:
      return absl::StatusCode::kResourceExhausted;
    case 503:
      return absl::StatusCode::kUnavailable;
    case 504:
      return absl::StatusCode::kDeadlineExceeded;
    default:
      break;
  }
  if (http_code >= 500 && http_code <= 599) return absl::StatusCode::kInternal;
  return absl::StatusCode::kUnknown;
}

bool HasReasonOrCode(const absl::Status& status, std::string_view reason,
                     int code) {
  auto api = GetApiStatus(status);
  if (!api.has_value()) return false;
  if (api->reason == reason) return true;
  // As client-go: fall back to the code only when the server named no
  // reason it knows of.
  return code != 0 && api->code == code &&
         (api->reason.empty() || api->reason == "Unknown");
}

bool HasReason(const absl::Status& status, std::string_view reason) {
  return HasReasonOrCode(status, reason, 0);
}

}  // namespace

std::string_view ReasonForHttpCode(int http_code) {
  switch (http_code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 406:
      return "NotAcceptable";
    case 409:
      return "Conflict";
    case 410:
      return "Expired";
    case 413:
      return "RequestEntityTooLarge";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return "";
  }
}

absl::Status MakeApiError(const ApiStatus& api_status) {
  if (api_status.code >= 200 && api_status.code <= 299) return absl::OkStatus();
  absl::Status status(CodeFor(api_status.code, api_status.reason),
                      api_status.message);
  status.SetPayload(kPayloadUrl, absl::Cord(Serialize(api_status)));
  return status;
}

absl::Status StatusFromObject(const rapidjson::Value& status_object) {
  if (!status_object.IsObject()) {
    return absl::InternalError("error event without a Status object");
  }
  if (GetString(status_object, "status") == "Success") return absl::OkStatus();
  ApiStatus api = ParseApiStatus(status_object);
  if (api.code == 0) api.code = 500;
  if (api.message.empty()) {
    api.message = api.reason.empty() ? "unknown error" : api.reason;
  }
  return MakeApiError(api);
}

absl::Status ToStatus(int http_code, std::string_view body,
                      std::string_view retry_after) {
  ApiStatus api;
  bool parsed = false;
  rapidjson::Document doc;
  if (!body.empty()) {
    doc.Parse(body.data(), body.size());
    if (!doc.HasParseError() && doc.IsObject() &&
        GetString(doc, "kind") == "Status") {
      api = ParseApiStatus(doc);
      parsed = true;
    }
  }
  if (!parsed) {
    api.reason = std::string(ReasonForHttpCode(http_code));
    absl::string_view text =
        absl::StripAsciiWhitespace(absl::string_view(body.data(), body.size()));
    if (text.size() > 256) text = text.substr(0, 256);
    api.message = text.empty()
                      ? absl::StrCat("the server responded with HTTP status ",
                                     http_code)
                      : absl::StrCat("the server responded with HTTP status ",
                                     http_code, ": ", text);
  }
  // The HTTP code is the truth when the body disagrees or lacks one.
  if (api.code == 0) api.code = http_code;
  if (api.message.empty()) {
    api.message = absl::StrCat(api.reason.empty() ? "error" : api.reason,
                               " (HTTP ", http_code, ")");
  }
  if (api.retry_after_seconds == 0 && !retry_after.empty()) {
    int seconds = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(absl::string_view(
                             retry_after.data(), retry_after.size())),
                         &seconds) &&
        seconds > 0) {
      api.retry_after_seconds = seconds;
    }
  }
  return MakeApiError(api);
}

std::optional<ApiStatus> GetApiStatus(const absl::Status& status) {
  if (status.ok()) return std::nullopt;
  auto payload = status.GetPayload(kPayloadUrl);
  if (!payload.has_value()) return std::nullopt;
  std::string text(*payload);
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError() || !doc.IsObject()) return std::nullopt;
  return ParseApiStatus(doc);
}

std::string ReasonForError(const absl::Status& status) {
  auto api = GetApiStatus(status);
  return api.has_value() ? api->reason : std::string();
}

bool IsNotFound(const absl::Status& s) { return HasReasonOrCode(s, "NotFound", 404); }
bool IsAlreadyExists(const absl::Status& s) { return HasReason(s, "AlreadyExists"); }
bool IsConflict(const absl::Status& s) { return HasReasonOrCode(s, "Conflict", 409); }
bool IsInvalid(const absl::Status& s) { return HasReasonOrCode(s, "Invalid", 422); }
bool IsBadRequest(const absl::Status& s) { return HasReasonOrCode(s, "BadRequest", 400); }
bool IsUnauthorized(const absl::Status& s) {
  return HasReasonOrCode(s, "Unauthorized", 401);
}
bool IsForbidden(const absl::Status& s) { return HasReasonOrCode(s, "Forbidden", 403); }
bool IsMethodNotSupported(const absl::Status& s) {
  return HasReasonOrCode(s, "MethodNotAllowed", 405);
}
bool IsGone(const absl::Status& s) { return HasReason(s, "Gone"); }
bool IsResourceExpired(const absl::Status& s) {
  return HasReason(s, "Expired") || HasReason(s, "Gone");
}
bool IsTooManyRequests(const absl::Status& s) {
  return HasReasonOrCode(s, "TooManyRequests", 429);
}
bool IsServerTimeout(const absl::Status& s) { return HasReason(s, "ServerTimeout"); }
bool IsTimeout(const absl::Status& s) { return HasReasonOrCode(s, "Timeout", 504); }
bool IsInternalError(const absl::Status& s) {
  return HasReasonOrCode(s, "InternalError", 500);
}
bool IsServiceUnavailable(const absl::Status& s) {
  return HasReasonOrCode(s, "ServiceUnavailable", 503);
}

std::optional<int> SuggestsClientDelay(const absl::Status& status) {
  auto api = GetApiStatus(status);
  if (!api.has_value() || api->retry_after_seconds <= 0) return std::nullopt;
  if (api->code != 429 && api->code < 500) return std::nullopt;
  return api->retry_after_seconds;
}

}  // namespace kcr::client
