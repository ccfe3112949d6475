#include "runtime/handlers/outcome.h"

#include <utility>

#include "api/json/json_util.h"
#include "base/str_cat.h"
#include "base/string_view.h"

namespace kcr::handlers {

Outcome::Outcome(absl::Status status) {
  if (status.ok()) return;
  kind_ = Kind::kError;
  message_ = status.ToString();
}

Outcome::Outcome(rapidjson::Document value)
    : value_(std::make_shared<const rapidjson::Document>(std::move(value))) {}

Outcome Outcome::Value(std::string_view json) {
  rapidjson::Document doc;
  absl::Status parsed = json::ParseJson(json, &doc);
  if (!parsed.ok()) {
    return Outcome(absl::InvalidArgumentError(
        Cat("the handler's result is not JSON: ", ToStd(parsed.message()))));
  }
  return Outcome(std::move(doc));
}

Outcome Outcome::Temporary(std::string message, absl::Duration delay) {
  Outcome o;
  o.kind_ = Kind::kTemporary;
  o.message_ = std::move(message);
  o.delay_ = delay;
  return o;
}

Outcome Outcome::Permanent(std::string message) {
  Outcome o;
  o.kind_ = Kind::kPermanent;
  o.message_ = std::move(message);
  return o;
}

}  // namespace kcr::handlers
