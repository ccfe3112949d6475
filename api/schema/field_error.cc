#include "api/schema/field_error.h"

#include "absl/strings/str_cat.h"

namespace kcr {
namespace api {

std::string FieldError::ToString() const {
  std::string body;
  switch (type) {
    case Type::kRequired:
      body = "Required value";
      if (!detail.empty()) absl::StrAppend(&body, ": ", detail);
      break;
    case Type::kInvalid:
      body = absl::StrCat("Invalid value: ", value);
      if (!detail.empty()) absl::StrAppend(&body, ": ", detail);
      break;
    case Type::kNotSupported:
      body = absl::StrCat("Unsupported value: ", value);
      if (!detail.empty()) absl::StrAppend(&body, ": ", detail);
      break;
    case Type::kTooMany:
      body = absl::StrCat("Too many: ", value);
      if (!detail.empty()) absl::StrAppend(&body, ": ", detail);
      break;
    case Type::kForbidden:
      body = "Forbidden";
      if (!detail.empty()) absl::StrAppend(&body, ": ", detail);
      break;
    case Type::kTooLong:
      body = "Too long";
      if (!detail.empty()) absl::StrAppend(&body, ": ", detail);
      break;
    case Type::kDuplicate:
      body = absl::StrCat("Duplicate value: ", value);
      if (!detail.empty()) absl::StrAppend(&body, ": ", detail);
      break;
  }
  if (field.empty()) return body;
  return absl::StrCat(field, ": ", body);
}

std::vector<std::string> ToStrings(const std::vector<FieldError>& errors) {
  std::vector<std::string> out;
  out.reserve(errors.size());
  for (const FieldError& e : errors) out.push_back(e.ToString());
  return out;
}

}  // namespace api
}  // namespace kcr
