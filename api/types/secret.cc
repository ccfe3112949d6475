#include "api/types/secret.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "api/json_pointer.h"
#include "api/types/field.h"
#include "base/string_view.h"

namespace kcr {
namespace api {
namespace {

// Decoded length of standard base64 text, without decoding it.
size_t DecodedSize(std::string_view b64) {
  size_t n = b64.size();
  while (n > 0 && b64[n - 1] == '=') --n;
  return n * 3 / 4;
}

}  // namespace

absl::StatusOr<SecretView> SecretView::Create(ObjectPtr secret) {
  if (absl::Status s = Check(secret, "Secret"); !s.ok()) return s;
  const rapidjson::Value* root = &secret->json();
  for (const char* key : {"data", "stringData"}) {
    if (absl::Status s = field::CheckStringMap(field::Member(root, key), key);
        !s.ok()) {
      return s;
    }
  }
  return SecretView(std::move(secret));
}

std::string_view SecretView::type() const {
  std::string_view t = field::String(&object().json(), "type");
  return t.empty() ? std::string_view("Opaque") : t;
}

StringMapView SecretView::data() const {
  const rapidjson::Value* v = field::Member(&object().json(), "data");
  return StringMapView(v != nullptr && v->IsObject() ? v : nullptr);
}

absl::StatusOr<std::string> SecretView::Decoded(std::string_view key) const {
  std::optional<std::string_view> b64 = data().Get(key);
  if (!b64.has_value()) {
    return absl::NotFoundError(
        absl::StrCat("no data key ", absl::CHexEscape(ToAbsl(key))));
  }
  std::string out;
  if (!absl::Base64Unescape(ToAbsl(*b64), &out)) {
    // The message names the key only, never the value.
    return absl::InvalidArgumentError(absl::StrCat(
        "data.", absl::CHexEscape(ToAbsl(key)), " is not valid base64"));
  }
  return out;
}

std::string SecretView::DebugString() const {
  std::string out =
      absl::StrCat("Secret ", ToAbsl(object().Key()),
                   " type=", absl::CHexEscape(ToAbsl(type())), " data={");
  bool first = true;
  for (const auto& [key, value] : data()) {
    absl::StrAppend(&out, first ? "" : ", ", absl::CHexEscape(ToAbsl(key)),
                    ": ", DecodedSize(value), " bytes");
    first = false;
  }
  out += "}";
  return out;
}

std::ostream& operator<<(std::ostream& os, const SecretView& secret) {
  return os << secret.DebugString();
}

SecretBuilder::SecretBuilder(std::string_view namespace_, std::string_view name)
    : builder_("v1", "Secret") {
  builder_.SetName(name).SetNamespace(namespace_);
}

SecretBuilder::SecretBuilder(const Object& secret) : builder_(secret) {}

SecretBuilder& SecretBuilder::SetType(std::string_view type) {
  (void)builder_.SetString("/type", type);
  return *this;
}

SecretBuilder& SecretBuilder::SetData(std::string_view key,
                                      std::string_view value) {
  std::string encoded;
  absl::Base64Escape(ToAbsl(value), &encoded);
  return SetEncodedData(key, encoded);
}

SecretBuilder& SecretBuilder::SetEncodedData(std::string_view key,
                                             std::string_view base64) {
  (void)builder_.SetString("/data/" + api::json_pointer::EscapeToken(key),
                           base64);
  return *this;
}

}  // namespace api
}  // namespace kcr
