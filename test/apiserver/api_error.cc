#include "test/apiserver/api_error.h"

#include <utility>

#include "test/apiserver/str_util.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace apiserver {
namespace {

constexpr char kPayloadUrl[] = "type.kcr.io/kubernetes.Status";

absl::StatusCode AbslCode(int http_code) {
  switch (http_code) {
    case 400:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 405:
    case 406:
    case 415:
      return absl::StatusCode::kUnimplemented;
    case 409:
      return absl::StatusCode::kAborted;
    case 410:
      return absl::StatusCode::kOutOfRange;
    case 413:
      return absl::StatusCode::kResourceExhausted;
    case 422:
      return absl::StatusCode::kInvalidArgument;
    case 429:
      return absl::StatusCode::kResourceExhausted;
    case 503:
      return absl::StatusCode::kUnavailable;
    case 504:
      return absl::StatusCode::kDeadlineExceeded;
    default:
      return absl::StatusCode::kInternal;
  }
}

ApiError Make(int code, std::string_view reason, std::string message) {
  ApiError e;
  e.code = code;
  e.reason = std::string(reason);
  e.message = std::move(message);
  return e;
}

std::string ReasonOf(const absl::Status& status) {
  if (status.ok()) return "";
  return ApiError::FromStatus(status).reason;
}

}  // namespace

std::string GroupResource::Qualified() const {
  if (group.empty()) return resource;
  return Cat(resource, ".", group);
}

std::string GroupKind::Qualified() const {
  if (group.empty()) return kind;
  return Cat(kind, ".", group);
}

std::string ApiError::ToJson() const {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("kind");
  w.String("Status");
  w.Key("apiVersion");
  w.String("v1");
  w.Key("metadata");
  w.StartObject();
  w.EndObject();
  w.Key("status");
  w.String("Failure");
  if (!message.empty()) {
    w.Key("message");
    w.String(message.data(), message.size());
  }
  if (!reason.empty()) {
    w.Key("reason");
    w.String(reason.data(), reason.size());
  }
  if (!name.empty() || !group.empty() || !kind.empty() || !uid.empty() ||
      !causes.empty() || retry_after_seconds.has_value()) {
    w.Key("details");
    w.StartObject();
    if (!name.empty()) {
      w.Key("name");
      w.String(name.data(), name.size());
    }
    if (!group.empty()) {
      w.Key("group");
      w.String(group.data(), group.size());
    }
    if (!kind.empty()) {
      w.Key("kind");
      w.String(kind.data(), kind.size());
    }
    if (!uid.empty()) {
      w.Key("uid");
      w.String(uid.data(), uid.size());
    }
    if (!causes.empty()) {
      w.Key("causes");
      w.StartArray();
      for (const StatusCause& c : causes) {
        w.StartObject();
        if (!c.reason.empty()) {
          w.Key("reason");
          w.String(c.reason.data(), c.reason.size());
        }
        if (!c.message.empty()) {
          w.Key("message");
          w.String(c.message.data(), c.message.size());
        }
        if (!c.field.empty()) {
          w.Key("field");
          w.String(c.field.data(), c.field.size());
        }
        w.EndObject();
      }
      w.EndArray();
    }
    if (retry_after_seconds.has_value()) {
      w.Key("retryAfterSeconds");
      w.Int(*retry_after_seconds);
    }
    w.EndObject();
  }
  w.Key("code");
  w.Int(code);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

absl::Status ApiError::ToStatus() const {
  absl::Status s(AbslCode(code), message.empty() ? reason : message);
  s.SetPayload(kPayloadUrl, absl::Cord(ToJson()));
  return s;
}

ApiError ApiError::FromStatus(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kPayloadUrl);
  if (payload.has_value()) {
    rapidjson::Document d;
    std::string text(*payload);
    d.Parse(text.data(), text.size());
    if (!d.HasParseError() && d.IsObject()) {
      ApiError e;
      auto str = [](const rapidjson::Value& o, const char* k) -> std::string {
        auto it = o.FindMember(k);
        if (it == o.MemberEnd() || !it->value.IsString()) return "";
        return std::string(it->value.GetString(), it->value.GetStringLength());
      };
      e.message = str(d, "message");
      e.reason = str(d, "reason");
      auto code = d.FindMember("code");
      if (code != d.MemberEnd() && code->value.IsInt()) {
        e.code = code->value.GetInt();
      }
      auto det = d.FindMember("details");
      if (det != d.MemberEnd() && det->value.IsObject()) {
        const rapidjson::Value& dv = det->value;
        e.name = str(dv, "name");
        e.group = str(dv, "group");
        e.kind = str(dv, "kind");
        e.uid = str(dv, "uid");
        auto ra = dv.FindMember("retryAfterSeconds");
        if (ra != dv.MemberEnd() && ra->value.IsInt()) {
          e.retry_after_seconds = ra->value.GetInt();
        }
        auto cs = dv.FindMember("causes");
        if (cs != dv.MemberEnd() && cs->value.IsArray()) {
          for (const auto& c : cs->value.GetArray()) {
            if (!c.IsObject()) continue;
            e.causes.push_back(
                {str(c, "reason"), str(c, "message"), str(c, "field")});
          }
        }
      }
      return e;
    }
  }
  std::string msg(status.message());
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      return Make(404, "NotFound", msg);
    case absl::StatusCode::kAlreadyExists:
      return Make(409, "AlreadyExists", msg);
    case absl::StatusCode::kAborted:
      return Make(409, "Conflict", msg);
    case absl::StatusCode::kInvalidArgument:
      return Make(400, "BadRequest", msg);
    case absl::StatusCode::kPermissionDenied:
      return Make(403, "Forbidden", msg);
    case absl::StatusCode::kUnauthenticated:
      return Make(401, "Unauthorized", msg);
    case absl::StatusCode::kOutOfRange:
      return Make(410, "Expired", msg);
    case absl::StatusCode::kUnavailable:
      return Make(503, "ServiceUnavailable", msg);
    case absl::StatusCode::kDeadlineExceeded:
      return Make(504, "Timeout", msg);
    default:
      return InternalError(msg);
  }
}

ApiError ApiError::NotFound(const GroupResource& gr, std::string_view name) {
  ApiError e = Make(404, "NotFound",
                    Cat(gr.Qualified(), " \"", name, "\" not found"));
  e.name = std::string(name);
  e.group = gr.group;
  e.kind = gr.resource;
  return e;
}

ApiError ApiError::PathNotFound() {
  return Make(404, "NotFound", "the server could not find the requested resource");
}

ApiError ApiError::AlreadyExists(const GroupResource& gr,
                                 std::string_view name) {
  ApiError e =
      Make(409, "AlreadyExists",
           Cat(gr.Qualified(), " \"", name, "\" already exists"));
  e.name = std::string(name);
  e.group = gr.group;
  e.kind = gr.resource;
  return e;
}

ApiError ApiError::Conflict(const GroupResource& gr, std::string_view name,
                            std::string_view why) {
  ApiError e = Make(409, "Conflict",
                    Cat("Operation cannot be fulfilled on ",
                                 gr.Qualified(), " \"", name, "\": ", why));
  e.name = std::string(name);
  e.group = gr.group;
  e.kind = gr.resource;
  return e;
}

ApiError ApiError::StaleConflict(const GroupResource& gr,
                                 std::string_view name) {
  return Conflict(gr, name,
                  "the object has been modified; please apply your changes "
                  "to the latest version and try again");
}

std::string FieldErrorReason(api::FieldError::Type type) {
  switch (type) {
    case api::FieldError::Type::kRequired:
      return "FieldValueRequired";
    case api::FieldError::Type::kInvalid:
      return "FieldValueInvalid";
    case api::FieldError::Type::kNotSupported:
      return "FieldValueNotSupported";
    case api::FieldError::Type::kTooMany:
      return "FieldValueTooMany";
    case api::FieldError::Type::kForbidden:
      return "FieldValueForbidden";
  }
  return "FieldValueInvalid";
}

std::string FieldErrorBody(const api::FieldError& error) {
  api::FieldError copy = error;
  copy.field.clear();
  return copy.ToString();
}

ApiError ApiError::Invalid(const GroupKind& gk, std::string_view name,
                           const std::vector<api::FieldError>& errors) {
  std::vector<std::string> texts = api::ToStrings(errors);
  std::string agg;
  if (texts.size() == 1) {
    agg = texts[0];
  } else {
    agg = Cat("[", absl::StrJoin(texts, ", "), "]");
  }
  ApiError e = Make(
      422, "Invalid",
      Cat(gk.Qualified(), " \"", name, "\" is invalid: ", agg));
  e.name = std::string(name);
  e.group = gk.group;
  e.kind = gk.kind;
  for (const api::FieldError& fe : errors) {
    e.causes.push_back({FieldErrorReason(fe.type), FieldErrorBody(fe), fe.field});
  }
  return e;
}

ApiError ApiError::BadRequest(std::string_view message) {
  return Make(400, "BadRequest", std::string(message));
}

ApiError ApiError::Unauthorized() {
  return Make(401, "Unauthorized", "Unauthorized");
}

ApiError ApiError::Forbidden(const GroupResource& gr, std::string_view name,
                             std::string_view why) {
  std::string msg =
      name.empty()
          ? Cat(gr.Qualified(), " is forbidden: ", why)
          : Cat(gr.Qualified(), " \"", name, "\" is forbidden: ", why);
  ApiError e = Make(403, "Forbidden", std::move(msg));
  e.name = std::string(name);
  e.group = gr.group;
  e.kind = gr.resource;
  return e;
}

ApiError ApiError::MethodNotSupported(const GroupResource& gr,
                                      std::string_view action) {
  ApiError e = Make(405, "MethodNotAllowed",
                    Cat(action, " is not supported on resources of kind \"",
                                 gr.Qualified(), "\""));
  e.group = gr.group;
  e.kind = gr.resource;
  return e;
}

ApiError ApiError::NotAcceptable(std::string_view message) {
  return Make(406, "NotAcceptable", std::string(message));
}

ApiError ApiError::Expired(std::string_view message) {
  return Make(410, "Expired", std::string(message));
}

ApiError ApiError::TooManyRequests(std::string_view message,
                                   int retry_after_seconds) {
  ApiError e = Make(429, "TooManyRequests", std::string(message));
  e.retry_after_seconds = retry_after_seconds;
  return e;
}

ApiError ApiError::UnsupportedMediaType(std::string_view message) {
  return Make(415, "UnsupportedMediaType", std::string(message));
}

ApiError ApiError::RequestEntityTooLarge(std::string_view message) {
  return Make(413, "RequestEntityTooLarge", std::string(message));
}

ApiError ApiError::InternalError(std::string_view message) {
  ApiError e = Make(500, "InternalError",
                    Cat("Internal error occurred: ", message));
  e.causes.push_back({"", std::string(message), ""});
  return e;
}

ApiError ApiError::ServiceUnavailable(std::string_view message) {
  return Make(503, "ServiceUnavailable", std::string(message));
}

bool IsNotFoundError(const absl::Status& status) {
  return ReasonOf(status) == "NotFound";
}
bool IsAlreadyExistsError(const absl::Status& status) {
  return ReasonOf(status) == "AlreadyExists";
}
bool IsConflictError(const absl::Status& status) {
  return ReasonOf(status) == "Conflict";
}
bool IsInvalidError(const absl::Status& status) {
  return ReasonOf(status) == "Invalid";
}
bool IsExpiredError(const absl::Status& status) {
  std::string r = ReasonOf(status);
  return r == "Expired" || r == "Gone";
}

}  // namespace apiserver
}  // namespace kcr
