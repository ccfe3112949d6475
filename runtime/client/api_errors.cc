#include "runtime/client/api_errors.h"

#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/errors/errors.h"
#include "api/json/json_util.h"
#include "base/string_view.h"
#include "rapidjson/document.h"

namespace kcr::client {
namespace {

// The body as a Status object, or nullopt if it is not one.
std::optional<api::StatusError> ParseStatusBody(std::string_view body) {
  if (body.empty()) return std::nullopt;
  rapidjson::Document doc;
  // Iterative and depth-bounded: a hostile error body is not a Status, never
  // a stack overflow.
  if (!json::ParseJson(body, &doc).ok() || !doc.IsObject()) {
    return std::nullopt;
  }
  auto kind = doc.FindMember("kind");
  if (kind == doc.MemberEnd() || !kind->value.IsString() ||
      std::string_view(kind->value.GetString(),
                       kind->value.GetStringLength()) != "Status") {
    return std::nullopt;
  }
  return api::StatusError::FromObject(doc);
}

}  // namespace

absl::Status StatusFromResponse(int http_code, std::string_view body,
                                std::string_view retry_after) {
  api::StatusError e;
  if (std::optional<api::StatusError> parsed = ParseStatusBody(body)) {
    e = *std::move(parsed);
  } else {
    e.code = http_code;
    e.reason = std::string(api::ReasonForHttpCode(http_code));
    absl::string_view text = absl::StripAsciiWhitespace(ToAbsl(body));
    if (text.size() > 256) text = text.substr(0, 256);
    e.message =
        text.empty()
            ? absl::StrCat("the server responded with HTTP status ", http_code)
            : absl::StrCat("the server responded with HTTP status ", http_code,
                           ": ", text);
  }
  // The HTTP code is the truth when the body lacks one.
  if (e.code == 0) e.code = http_code;
  if (e.message.empty()) {
    e.message = absl::StrCat(e.reason.empty() ? "error" : e.reason, " (HTTP ",
                             http_code, ")");
  }
  if (!e.retry_after_seconds.has_value() && !retry_after.empty()) {
    int seconds = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(ToAbsl(retry_after)),
                         &seconds) &&
        seconds > 0) {
      e.retry_after_seconds = seconds;
    }
  }
  if (e.code >= 200 && e.code <= 299) {
    // A Status body that claims success on a failed answer: the answer's
    // code wins, so the caller still sees an error.
    e.code = http_code;
  }
  return e.ToStatus();
}

}  // namespace kcr::client
