#include "apiserver/registry/object_meta_validation.h"

#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "api/object_builder.h"
#include "api/selector/label_selector.h"
#include "apiserver/internal/object_fields.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace {

using api::FieldError;

bool IsAlnumLower(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool IsDns1123Label(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!IsAlnumLower(s.front()) || !IsAlnumLower(s.back())) return false;
  for (char c : s) {
    if (!IsAlnumLower(c) && c != '-') return false;
  }
  return true;
}

bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view part =
        s.substr(start, dot == std::string_view::npos ? std::string_view::npos
                                                      : dot - start);
    if (part.empty() || !IsAlnumLower(part.front()) ||
        !IsAlnumLower(part.back())) {
      return false;
    }
    for (char c : part) {
      if (!IsAlnumLower(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool IsDns1035Label(std::string_view s) {
  return IsDns1123Label(s) && s.front() >= 'a' && s.front() <= 'z';
}

bool IsLabelValue(std::string_view v) {
  if (v.empty()) return true;
  if (v.size() > 63) return false;
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9');
  };
  if (!alnum(v.front()) || !alnum(v.back())) return false;
  for (char c : v) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

void InvalidName(std::string_view name, const char* detail,
                 std::vector<FieldError>* errors) {
  errors->push_back(FieldErr(FieldError::Type::kInvalid, "metadata.name",
                             Quote(name), detail));
}

}  // namespace

void ValidateSubdomainName(std::string_view name,
                           std::vector<FieldError>* errors) {
  if (name.empty()) return;
  if (name.size() > 253) {
    InvalidName(name, "must be no more than 253 characters", errors);
  } else if (!IsDns1123Subdomain(name)) {
    InvalidName(
        name,
        "a lowercase RFC 1123 subdomain must consist of lower case "
        "alphanumeric characters, '-' or '.', and must start and end with "
        "an alphanumeric character (e.g. 'example.com', regex used for "
        "validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'"
        ")",
        errors);
  }
}

void ValidateDns1123LabelName(std::string_view name,
                              std::vector<FieldError>* errors) {
  if (name.empty()) return;
  if (name.size() > 63) {
    InvalidName(name, "must be no more than 63 characters", errors);
  } else if (!IsDns1123Label(name)) {
    InvalidName(name,
                "a lowercase RFC 1123 label must consist of lower case "
                "alphanumeric characters or '-', and must start and end with "
                "an alphanumeric character (e.g. 'my-name',  or '123-abc', "
                "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                errors);
  }
}

void ValidateDns1035LabelName(std::string_view name,
                              std::vector<FieldError>* errors) {
  if (name.empty()) return;
  if (!IsDns1035Label(name)) {
    InvalidName(name,
                "a DNS-1035 label must consist of lower case alphanumeric "
                "characters or '-', start with an alphabetic character, and "
                "end with an alphanumeric character (e.g. 'my-name',  or "
                "'abc-123', regex used for validation is "
                "'[a-z]([-a-z0-9]*[a-z0-9])?')",
                errors);
  }
}

void ValidateLabels(const api::ObjectBuilder& object,
                    std::vector<FieldError>* errors) {
  const rapidjson::Value* labels = object.Find("/metadata/labels");
  if (labels == nullptr || !labels->IsObject()) return;
  for (const auto& m : labels->GetObject()) {
    std::string_view key(m.name.GetString(), m.name.GetStringLength());
    absl::Status ks = api::ValidateLabelKey(key);
    if (!ks.ok()) {
      std::string detail(ks.message());
      if (absl::StartsWith(detail, "invalid label key: ")) {
        detail = detail.substr(strlen("invalid label key: "));
      }
      errors->push_back(FieldErr(FieldError::Type::kInvalid, "metadata.labels",
                                 Quote(key), detail));
    }
    if (!m.value.IsString()) continue;
    std::string_view value(m.value.GetString(), m.value.GetStringLength());
    if (!IsLabelValue(value)) {
      errors->push_back(FieldErr(
          FieldError::Type::kInvalid, "metadata.labels", Quote(value),
          value.size() > 63
              ? "must be no more than 63 characters"
              : "a valid label must be an empty string or consist of "
                "alphanumeric characters, '-', '_' or '.', and must start "
                "and end with an alphanumeric character (e.g. 'MyValue',  "
                "or 'my_value',  or '12345', regex used for validation is "
                "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"));
    }
  }
}

}  // namespace apiserver
}  // namespace kcr
