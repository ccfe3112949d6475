#include "controllers/simpledeployment/simpledeployment_types.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "api/crd/crd_schema.h"
#include "base/status_macros.h"

namespace kcr::simpledeployment {

using namespace api::crd;            // NOLINT: the CRD field types and
using namespace api::crd::internal;  // NOLINT: helpers are this file's idiom.

absl::StatusOr<SimpleDeployment> SimpleDeployment::FromJson(
    const rapidjson::Value& json) {
  SimpleDeployment d;
  KCR_RETURN_IF_ERROR(
      ReadTypeAndMetadata(json, kApiVersion, kKind, &d.metadata));
  const rapidjson::Value* spec;
  KCR_RETURN_IF_ERROR(ReadObject(json, "spec", "", &spec));
  if (spec != nullptr) {
    d.has_spec = true;
    KCR_RETURN_IF_ERROR(
        ReadIntOrString(*spec, "sleepytime", "spec", &d.spec.sleepytime));
  }
  const rapidjson::Value* status;
  KCR_RETURN_IF_ERROR(ReadObject(json, "status", "", &status));
  if (status != nullptr) d.status = RawJson(*status);
  return d;
}

rapidjson::Document SimpleDeployment::ToJson() const {
  rapidjson::Document d = NewDocument(kApiVersion, kKind, metadata);
  auto& a = d.GetAllocator();
  if (has_spec) {
    rapidjson::Value s(rapidjson::kObjectType);
    WriteIntOrString(&s, "sleepytime", spec.sleepytime, a);
    WriteMember(&d, "spec", &s, a);
  }
  WriteRaw(&d, "status", status, a);
  return d;
}

absl::StatusOr<int64_t> SimpleDeployment::SleepytimeSeconds() const {
  if (!spec.sleepytime.has_value()) return 0;
  rapidjson::Document v;
  if (spec.sleepytime->is_int) {
    v.SetInt64(spec.sleepytime->int_value);
  } else {
    v.SetString(
        spec.sleepytime->str_value.data(),
        static_cast<rapidjson::SizeType>(spec.sleepytime->str_value.size()),
        v.GetAllocator());
  }
  return ParseSleepytime(&v);
}

std::vector<std::string> SimpleDeployment::Children() const {
  std::vector<std::string> out;
  if (status.empty() || !status.value().IsObject()) return out;
  const rapidjson::Value& st = status.value();
  auto create = st.FindMember("create_fn");
  if (create == st.MemberEnd() || !create->value.IsObject()) return out;
  auto children = create->value.FindMember("children");
  if (children == create->value.MemberEnd() || !children->value.IsArray()) {
    return out;
  }
  for (const auto& c : children->value.GetArray()) {
    if (c.IsString()) out.emplace_back(c.GetString(), c.GetStringLength());
  }
  return out;
}

absl::StatusOr<int64_t> ParseSleepytime(const rapidjson::Value* value) {
  if (value == nullptr || value->IsNull()) return 0;
  // Judged by the CRD's own schema, so that the handlers refuse exactly
  // what the API server would, in its words.
  rapidjson::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  rapidjson::Value spec(rapidjson::kObjectType);
  spec.AddMember("sleepytime", rapidjson::Value(*value, a), a);
  doc.AddMember("spec", spec, a);
  const std::vector<std::string> errors =
      ValidateJson(SimpleDeployment::Schema(), doc);
  if (!errors.empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(errors, "; "));
  }
  if (value->IsInt64()) return value->GetInt64();
  // 120.0 is the integer 120 to the schema, as to Go's JSON decoding.
  if (value->IsNumber() &&
      value->GetDouble() == std::floor(value->GetDouble())) {
    return static_cast<int64_t>(value->GetDouble());
  }
  if (value->IsString()) {
    // The schema's pattern allows one to nine digits only.
    int64_t seconds = 0;
    for (rapidjson::SizeType i = 0; i < value->GetStringLength(); ++i) {
      const char ch = value->GetString()[i];
      if (ch < '0' || ch > '9') {
        return absl::InvalidArgumentError(
            "spec.sleepytime: not a whole number of seconds");
      }
      seconds = seconds * 10 + (ch - '0');
    }
    return seconds;
  }
  return absl::InvalidArgumentError(
      "spec.sleepytime: must be an integer or a string of digits");
}

}  // namespace kcr::simpledeployment
