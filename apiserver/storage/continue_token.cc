#include "apiserver/storage/continue_token.h"

#include "absl/strings/escaping.h"
#include "api/errors/errors.h"
#include "api/json/json_util.h"
#include "apiserver/internal/object_fields.h"
#include "base/str_cat.h"
#include "base/string_view.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace apiserver {

using rapidjson::Value;

std::string EncodeContinue(int64_t rv, std::string_view start) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("v");
  w.String("meta.k8s.io/v1");
  w.Key("rv");
  w.Int64(rv);
  w.Key("start");
  w.String(start.data(), static_cast<rapidjson::SizeType>(start.size()));
  w.EndObject();
  return absl::WebSafeBase64Escape(
      absl::string_view(buf.GetString(), buf.GetSize()));
}

absl::Status DecodeContinue(std::string_view token, int64_t* rv,
                            std::string* start) {
  std::string json;
  auto bad = [](std::string_view why) {
    return api::StatusError::BadRequest(Cat("invalid continue token: ", why))
        .ToStatus();
  };
  if (!absl::WebSafeBase64Unescape(ToAbsl(token), &json)) {
    return bad("illegal base64 data");
  }
  rapidjson::Document d;
  if (!json::ParseJson(json, &d).ok() || !d.IsObject()) {
    return bad("continue key is not valid JSON");
  }
  const Value* v = Member(d, "v");
  if (v == nullptr || !v->IsString() ||
      std::string_view(v->GetString()) != "meta.k8s.io/v1") {
    return bad(
        "continue key is not valid: incorrect encoded start resourceVersion "
        "(version meta.k8s.io/v1)");
  }
  const Value* r = Member(d, "rv");
  const Value* s = Member(d, "start");
  // rv -1 is the token of a 410 for an expired one: go on at the latest
  // revision.
  if (r == nullptr || !r->IsInt64() ||
      (r->GetInt64() <= 0 && r->GetInt64() != -1) || s == nullptr ||
      !s->IsString()) {
    return bad(
        "continue key is not valid: incorrect encoded start resourceVersion "
        "(version meta.k8s.io/v1)");
  }
  *rv = r->GetInt64() == -1 ? 0 : r->GetInt64();
  *start = std::string(s->GetString(), s->GetStringLength());
  return absl::OkStatus();
}

}  // namespace apiserver
}  // namespace kcr
