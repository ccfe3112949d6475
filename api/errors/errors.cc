#include "api/errors/errors.h"

#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_join.h"
#include "api/json/json_util.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace api {
namespace {

// The payload key under which the Status object travels with an
// absl::Status.
constexpr char kPayloadUrl[] = "type.kcr.io/kubernetes.Status";

// The one table (see the header). `for_http_code`: the reason an answer
// with this code gets when it carries no Status. `for_absl_code`: the
// reason a status without payload gets from its absl code.
struct ReasonRow {
  std::string_view reason;
  int http_code;
  absl::StatusCode code;
  bool for_http_code;
  bool for_absl_code;
};

constexpr ReasonRow kReasons[] = {
    {"BadRequest", 400, absl::StatusCode::kInvalidArgument, true, true},
    {"Unauthorized", 401, absl::StatusCode::kUnauthenticated, true, true},
    {"Forbidden", 403, absl::StatusCode::kPermissionDenied, true, true},
    {"NotFound", 404, absl::StatusCode::kNotFound, true, true},
    {"MethodNotAllowed", 405, absl::StatusCode::kUnimplemented, true, false},
    {"NotAcceptable", 406, absl::StatusCode::kUnimplemented, true, false},
    {"AlreadyExists", 409, absl::StatusCode::kAlreadyExists, false, true},
    {"Conflict", 409, absl::StatusCode::kAborted, true, true},
    {"Expired", 410, absl::StatusCode::kOutOfRange, true, true},
    {"Gone", 410, absl::StatusCode::kOutOfRange, false, false},
    {"RequestEntityTooLarge", 413, absl::StatusCode::kInvalidArgument, true,
     false},
    {"UnsupportedMediaType", 415, absl::StatusCode::kUnimplemented, true,
     false},
    {"Invalid", 422, absl::StatusCode::kInvalidArgument, true, false},
    {"TooManyRequests", 429, absl::StatusCode::kResourceExhausted, true, false},
    {"InternalError", 500, absl::StatusCode::kInternal, true, false},
    {"ServerTimeout", 500, absl::StatusCode::kDeadlineExceeded, false, false},
    {"ServiceUnavailable", 503, absl::StatusCode::kUnavailable, true, true},
    {"Timeout", 504, absl::StatusCode::kDeadlineExceeded, true, true},
};

const ReasonRow* RowForReason(std::string_view reason) {
  for (const ReasonRow& row : kReasons) {
    if (row.reason == reason) return &row;
  }
  return nullptr;
}

std::string Str(std::string_view s) { return std::string(s); }

StatusError Make(int32_t code, std::string_view reason, std::string message) {
  StatusError e;
  e.code = code;
  e.reason = Str(reason);
  e.message = std::move(message);
  return e;
}

// An int32 member; nullopt when absent, not a number, or out of range.
std::optional<int32_t> GetInt(const rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject()) return std::nullopt;
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || !it->value.IsNumber()) return std::nullopt;
  if (it->value.IsInt()) return it->value.GetInt();
  const double d = it->value.GetDouble();
  if (!(d <= 2147483647.0 && d >= -2147483648.0)) return std::nullopt;
  return static_cast<int32_t>(d);
}

void WriteString(rapidjson::Writer<rapidjson::StringBuffer>& w, const char* key,
                 const std::string& value) {
  if (value.empty()) return;
  w.Key(key);
  // Messages quote what a client sent (a name from the URL, a protobuf
  // apiVersion), which need not be UTF-8; Go's encoder writes U+FFFD for
  // such bytes, and so must this, for the Status to stay JSON.
  std::string valid;
  const std::string& text =
      json::ReplaceInvalidUtf8(value, &valid) ? valid : value;
  w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
}

// apimachinery's cause type for a field error.
std::string FieldErrorReason(FieldError::Type type) {
  switch (type) {
    case FieldError::Type::kRequired:
      return "FieldValueRequired";
    case FieldError::Type::kInvalid:
      return "FieldValueInvalid";
    case FieldError::Type::kNotSupported:
      return "FieldValueNotSupported";
    case FieldError::Type::kTooMany:
      return "FieldValueTooMany";
    case FieldError::Type::kForbidden:
      return "FieldValueForbidden";
    case FieldError::Type::kTooLong:
      return "FieldValueTooLong";
    case FieldError::Type::kDuplicate:
      return "FieldValueDuplicate";
  }
  return "FieldValueInvalid";
}

// field.Error.ErrorBody(): the message without the field path.
std::string FieldErrorBody(const FieldError& error) {
  FieldError copy = error;
  copy.field.clear();
  return copy.ToString();
}

// The reason and code `status` carries: ("", 0) without a payload.
std::pair<std::string, int32_t> ReasonAndCode(const absl::Status& status) {
  std::optional<StatusError> e = GetStatusError(status);
  if (!e.has_value()) return {"", 0};
  return {std::move(e->reason), e->code};
}

// apimachinery's common predicate shape: the reason, or the code when the
// reason is not one it knows.
bool HasReasonOrCode(const absl::Status& status, std::string_view reason,
                     int32_t code) {
  auto [got_reason, got_code] = ReasonAndCode(status);
  if (got_reason == reason) return !reason.empty();
  return RowForReason(got_reason) == nullptr && got_code == code;
}

bool HasReason(const absl::Status& status, std::string_view reason) {
  return !reason.empty() && ReasonAndCode(status).first == reason;
}

bool HasReasonOrAnyReasonWithCode(const absl::Status& status,
                                  std::string_view reason, int32_t code) {
  auto [got_reason, got_code] = ReasonAndCode(status);
  return got_reason == reason || got_code == code;
}

}  // namespace

absl::StatusCode AbslCodeFor(int http_code, std::string_view reason) {
  if (const ReasonRow* row = RowForReason(reason)) return row->code;
  for (const ReasonRow& row : kReasons) {
    if (row.for_http_code && row.http_code == http_code) return row.code;
  }
  if (http_code >= 500 && http_code <= 599) return absl::StatusCode::kInternal;
  return absl::StatusCode::kUnknown;
}

std::string_view ReasonForHttpCode(int http_code) {
  for (const ReasonRow& row : kReasons) {
    if (row.for_http_code && row.http_code == http_code) return row.reason;
  }
  if (http_code >= 500 && http_code <= 599) return "InternalError";
  return "";
}

std::string StatusError::ToJson() const {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("kind");
  w.String("Status");
  w.Key("apiVersion");
  w.String("v1");
  w.Key("metadata");
  w.StartObject();
  WriteString(w, "continue", continue_token);
  w.EndObject();
  w.Key("status");
  w.String("Failure");
  WriteString(w, "message", message);
  WriteString(w, "reason", reason);
  if (has_details || !name.empty() || !group.empty() || !kind.empty() ||
      !uid.empty() || !causes.empty() || retry_after_seconds.has_value()) {
    w.Key("details");
    w.StartObject();
    WriteString(w, "name", name);
    WriteString(w, "group", group);
    WriteString(w, "kind", kind);
    WriteString(w, "uid", uid);
    if (!causes.empty()) {
      w.Key("causes");
      w.StartArray();
      for (const StatusCause& c : causes) {
        w.StartObject();
        WriteString(w, "reason", c.reason);
        WriteString(w, "message", c.message);
        WriteString(w, "field", c.field);
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

absl::Status StatusError::ToStatus() const {
  absl::Status s(AbslCodeFor(code, reason), message.empty() ? reason : message);
  s.SetPayload(kPayloadUrl, absl::Cord(ToJson()));
  return s;
}

std::optional<StatusError> StatusError::FromObject(
    const rapidjson::Value& object) {
  if (!object.IsObject()) return std::nullopt;
  StatusError e;
  e.code = GetInt(object, "code").value_or(0);
  e.reason = json::StringMember(object, "reason");
  e.message = json::StringMember(object, "message");
  auto meta = object.FindMember("metadata");
  if (meta != object.MemberEnd() && meta->value.IsObject()) {
    e.continue_token = json::StringMember(meta->value, "continue");
  }
  auto details = object.FindMember("details");
  if (details != object.MemberEnd() && details->value.IsObject()) {
    const rapidjson::Value& d = details->value;
    e.has_details = true;
    e.name = json::StringMember(d, "name");
    e.group = json::StringMember(d, "group");
    e.kind = json::StringMember(d, "kind");
    e.uid = json::StringMember(d, "uid");
    e.retry_after_seconds = GetInt(d, "retryAfterSeconds");
    auto causes = d.FindMember("causes");
    if (causes != d.MemberEnd() && causes->value.IsArray()) {
      for (const auto& c : causes->value.GetArray()) {
        if (!c.IsObject()) continue;
        e.causes.push_back({json::StringMember(c, "reason"),
                            json::StringMember(c, "message"),
                            json::StringMember(c, "field")});
      }
    }
  }
  return e;
}

std::optional<StatusError> GetStatusError(const absl::Status& status) {
  if (status.ok()) return std::nullopt;
  absl::optional<absl::Cord> payload = status.GetPayload(kPayloadUrl);
  if (!payload.has_value()) return std::nullopt;
  // Written by ToJson, so small and flat: a plain parse is enough, into
  // pools on the stack. A default Document takes a 64 KiB chunk from the
  // heap, and the api/errors predicates (IsNotFound, ...) ask this of every
  // cache miss and failed write.
  const std::string text(*payload);
  char value_buffer[2048];
  char stack_buffer[512];
  rapidjson::MemoryPoolAllocator<> values(value_buffer, sizeof(value_buffer));
  rapidjson::MemoryPoolAllocator<> stack(stack_buffer, sizeof(stack_buffer));
  rapidjson::GenericDocument<rapidjson::UTF8<>,
                             rapidjson::MemoryPoolAllocator<>,
                             rapidjson::MemoryPoolAllocator<>>
      doc(&values, sizeof(stack_buffer), &stack);
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError()) return std::nullopt;
  return StatusError::FromObject(doc);
}

StatusError StatusError::FromStatus(const absl::Status& status) {
  if (std::optional<StatusError> e = GetStatusError(status)) {
    return *std::move(e);
  }
  std::string message(status.message());
  for (const ReasonRow& row : kReasons) {
    if (row.for_absl_code && row.code == status.code()) {
      return Make(row.http_code, row.reason, std::move(message));
    }
  }
  return InternalError(message);
}

absl::Status StatusFromObject(const rapidjson::Value& status_object) {
  if (!status_object.IsObject()) {
    return absl::InternalError("error event without a Status object");
  }
  if (json::StringMember(status_object, "status") == "Success")
    return absl::OkStatus();
  StatusError e = *StatusError::FromObject(status_object);
  if (e.code >= 200 && e.code <= 299) return absl::OkStatus();
  if (e.code == 0) e.code = 500;
  if (e.message.empty()) {
    e.message = e.reason.empty() ? "unknown error" : e.reason;
  }
  return e.ToStatus();
}

std::string ReasonForError(const absl::Status& status) {
  return ReasonAndCode(status).first;
}

StatusError StatusError::NotFound(const GroupResource& resource,
                                  std::string_view name) {
  StatusError e =
      Make(404, "NotFound",
           resource.ToString() + " \"" + Str(name) + "\" not found");
  e.name = Str(name);
  e.group = resource.group;
  e.kind = resource.resource;
  e.has_details = true;
  return e;
}

StatusError StatusError::PathNotFound() {
  // NewGenericServerResponse: details set, every member empty.
  StatusError e =
      Make(404, "NotFound", "the server could not find the requested resource");
  e.has_details = true;
  return e;
}

StatusError StatusError::AlreadyExists(const GroupResource& resource,
                                       std::string_view name) {
  StatusError e =
      Make(409, "AlreadyExists",
           resource.ToString() + " \"" + Str(name) + "\" already exists");
  e.name = Str(name);
  e.group = resource.group;
  e.kind = resource.resource;
  e.has_details = true;
  return e;
}

StatusError StatusError::Conflict(const GroupResource& resource,
                                  std::string_view name, std::string_view why) {
  StatusError e =
      Make(409, "Conflict",
           "Operation cannot be fulfilled on " + resource.ToString() + " \"" +
               Str(name) + "\": " + Str(why));
  e.name = Str(name);
  e.group = resource.group;
  e.kind = resource.resource;
  e.has_details = true;
  return e;
}

StatusError StatusError::StaleConflict(const GroupResource& resource,
                                       std::string_view name) {
  return Conflict(resource, name,
                  "the object has been modified; please apply your changes "
                  "to the latest version and try again");
}

StatusError StatusError::Invalid(const GroupKind& kind, std::string_view name,
                                 const std::vector<FieldError>& errors) {
  const std::vector<std::string> texts = ToStrings(errors);
  const std::string aggregate =
      texts.size() == 1 ? texts[0] : "[" + absl::StrJoin(texts, ", ") + "]";
  StatusError e =
      Make(422, "Invalid",
           kind.ToString() + " \"" + Str(name) + "\" is invalid: " + aggregate);
  e.name = Str(name);
  e.group = kind.group;
  e.kind = kind.kind;
  e.has_details = true;
  for (const FieldError& fe : errors) {
    e.causes.push_back(
        {FieldErrorReason(fe.type), FieldErrorBody(fe), fe.field});
  }
  return e;
}

StatusError StatusError::BadRequest(std::string_view message) {
  return Make(400, "BadRequest", Str(message));
}

StatusError StatusError::Unauthorized() {
  return Make(401, "Unauthorized", "Unauthorized");
}

StatusError StatusError::Forbidden(const GroupResource& resource,
                                   std::string_view name,
                                   std::string_view why) {
  std::string message = name.empty()
                            ? resource.ToString() + " is forbidden: " + Str(why)
                            : resource.ToString() + " \"" + Str(name) +
                                  "\" is forbidden: " + Str(why);
  StatusError e = Make(403, "Forbidden", std::move(message));
  e.name = Str(name);
  e.group = resource.group;
  e.kind = resource.resource;
  e.has_details = true;
  return e;
}

StatusError StatusError::MethodNotSupported(const GroupResource& resource,
                                            std::string_view action) {
  StatusError e =
      Make(405, "MethodNotAllowed",
           Str(action) + " is not supported on resources of kind \"" +
               resource.ToString() + "\"");
  e.group = resource.group;
  e.kind = resource.resource;
  e.has_details = true;
  return e;
}

StatusError StatusError::NotAcceptable(std::string_view message) {
  return Make(406, "NotAcceptable", Str(message));
}

StatusError StatusError::Expired(std::string_view message) {
  return Make(410, "Expired", Str(message));
}

StatusError StatusError::TooManyRequests(std::string_view message,
                                         int retry_after_seconds) {
  StatusError e = Make(429, "TooManyRequests", Str(message));
  e.retry_after_seconds = retry_after_seconds;
  e.has_details = true;
  return e;
}

StatusError StatusError::UnsupportedMediaType(std::string_view message) {
  return Make(415, "UnsupportedMediaType", Str(message));
}

StatusError StatusError::RequestEntityTooLarge(std::string_view message) {
  return Make(413, "RequestEntityTooLarge", Str(message));
}

StatusError StatusError::InternalError(std::string_view message) {
  StatusError e =
      Make(500, "InternalError", "Internal error occurred: " + Str(message));
  e.causes.push_back({"", Str(message), ""});
  e.has_details = true;
  return e;
}

StatusError StatusError::ServiceUnavailable(std::string_view message) {
  return Make(503, "ServiceUnavailable", Str(message));
}

bool IsNotFound(const absl::Status& s) {
  return HasReasonOrCode(s, "NotFound", 404);
}
bool IsAlreadyExists(const absl::Status& s) {
  return HasReason(s, "AlreadyExists");
}
bool IsConflict(const absl::Status& s) {
  return HasReasonOrCode(s, "Conflict", 409);
}
bool IsInvalid(const absl::Status& s) {
  return HasReasonOrCode(s, "Invalid", 422);
}
bool IsBadRequest(const absl::Status& s) {
  return HasReasonOrCode(s, "BadRequest", 400);
}
bool IsUnauthorized(const absl::Status& s) {
  return HasReasonOrCode(s, "Unauthorized", 401);
}
bool IsForbidden(const absl::Status& s) {
  return HasReasonOrCode(s, "Forbidden", 403);
}
bool IsMethodNotSupported(const absl::Status& s) {
  return HasReasonOrCode(s, "MethodNotAllowed", 405);
}
bool IsNotAcceptable(const absl::Status& s) {
  return HasReasonOrCode(s, "NotAcceptable", 406);
}
bool IsGone(const absl::Status& s) { return HasReasonOrCode(s, "Gone", 410); }
bool IsResourceExpired(const absl::Status& s) {
  return HasReason(s, "Expired");
}
bool IsRequestEntityTooLarge(const absl::Status& s) {
  return HasReasonOrAnyReasonWithCode(s, "RequestEntityTooLarge", 413);
}
bool IsUnsupportedMediaType(const absl::Status& s) {
  return HasReasonOrCode(s, "UnsupportedMediaType", 415);
}
bool IsTooManyRequests(const absl::Status& s) {
  return HasReasonOrAnyReasonWithCode(s, "TooManyRequests", 429);
}
bool IsInternalError(const absl::Status& s) {
  return HasReasonOrCode(s, "InternalError", 500);
}
bool IsServerTimeout(const absl::Status& s) {
  return HasReason(s, "ServerTimeout");
}
bool IsServiceUnavailable(const absl::Status& s) {
  return HasReasonOrCode(s, "ServiceUnavailable", 503);
}
bool IsTimeout(const absl::Status& s) {
  return HasReasonOrCode(s, "Timeout", 504);
}

std::optional<int> SuggestsClientDelay(const absl::Status& status) {
  std::optional<StatusError> e = GetStatusError(status);
  if (!e.has_value()) return std::nullopt;
  const bool has_details = e->has_details || !e->name.empty() ||
                           !e->group.empty() || !e->kind.empty() ||
                           !e->uid.empty() || !e->causes.empty() ||
                           e->retry_after_seconds.has_value();
  if (!has_details) return std::nullopt;
  if (e->reason == "ServerTimeout") return e->retry_after_seconds.value_or(0);
  if (e->retry_after_seconds.value_or(0) > 0) return *e->retry_after_seconds;
  return std::nullopt;
}

}  // namespace api
}  // namespace kcr
