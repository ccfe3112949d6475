#include "runtime/handlers/internal/state.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "api/json/json_util.h"
#include "base/str_cat.h"
#include "base/string_view.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr::handlers::internal {
namespace {

constexpr size_t kMaxNameLength = 63;

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9');
}

rapidjson::Value Str(std::string_view s,
                     rapidjson::Document::AllocatorType& a) {
  return rapidjson::Value(s.data(), static_cast<rapidjson::SizeType>(s.size()),
                          a);
}

// The member `name` of object `v` (made as an empty object when missing or
// not an object).
rapidjson::Value& Child(rapidjson::Value& v, std::string_view name,
                        rapidjson::Document::AllocatorType& a) {
  auto it = v.FindMember(rapidjson::StringRef(
      name.data(), static_cast<rapidjson::SizeType>(name.size())));
  if (it == v.MemberEnd()) {
    v.AddMember(Str(name, a), rapidjson::Value(rapidjson::kObjectType), a);
    return (v.MemberEnd() - 1)->value;
  }
  if (!it->value.IsObject()) it->value.SetObject();
  return it->value;
}

const rapidjson::Value* Member(const rapidjson::Value& v,
                               std::string_view name) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(rapidjson::StringRef(
      name.data(), static_cast<rapidjson::SizeType>(name.size())));
  return it == v.MemberEnd() ? nullptr : &it->value;
}

void RemoveMember(rapidjson::Value& v, std::string_view name) {
  if (!v.IsObject()) return;
  v.RemoveMember(rapidjson::StringRef(
      name.data(), static_cast<rapidjson::SizeType>(name.size())));
}

// RFC 7693, for the 4-byte digests kopf's key hashing uses.
class Blake2b {
 public:
  explicit Blake2b(size_t outlen) : outlen_(outlen) {
    h_ = kIv;
    h_[0] ^= 0x01010000ULL ^ outlen;
  }

  void Update(std::string_view data) {
    for (char c : data) {
      if (c_ == 128) {
        t_ += c_;
        Compress(false);
        c_ = 0;
      }
      b_[c_++] = static_cast<uint8_t>(c);
    }
  }

  std::string Final() {
    t_ += c_;
    while (c_ < 128) b_[c_++] = 0;
    Compress(true);
    std::string out(outlen_, '\0');
    for (size_t i = 0; i < outlen_; ++i) {
      out[i] = static_cast<char>((h_[i >> 3] >> (8 * (i & 7))) & 0xFF);
    }
    return out;
  }

 private:
  static constexpr std::array<uint64_t, 8> kIv = {
      0x6A09E667F3BCC908ULL, 0xBB67AE8584CAA73BULL, 0x3C6EF372FE94F82BULL,
      0xA54FF53A5F1D36F1ULL, 0x510E527FADE682D1ULL, 0x9B05688C2B3E6C1FULL,
      0x1F83D9ABFB41BD6BULL, 0x5BE0CD19137E2179ULL};
  static constexpr uint8_t kSigma[12][16] = {
      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
      {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
      {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
      {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
      {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
      {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
      {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
      {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
      {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
      {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
      {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3}};

  static uint64_t Rotr(uint64_t x, int n) { return (x >> n) | (x << (64 - n)); }

  static void G(uint64_t* v, int a, int b, int c, int d, uint64_t x,
                uint64_t y) {
    v[a] = v[a] + v[b] + x;
    v[d] = Rotr(v[d] ^ v[a], 32);
    v[c] = v[c] + v[d];
    v[b] = Rotr(v[b] ^ v[c], 24);
    v[a] = v[a] + v[b] + y;
    v[d] = Rotr(v[d] ^ v[a], 16);
    v[c] = v[c] + v[d];
    v[b] = Rotr(v[b] ^ v[c], 63);
  }

  void Compress(bool last) {
    uint64_t v[16];
    uint64_t m[16];
    for (int i = 0; i < 8; ++i) {
      v[i] = h_[i];
      v[i + 8] = kIv[i];
    }
    v[12] ^= t_;  // the counter's high word stays 0: inputs are short
    if (last) v[14] = ~v[14];
    for (int i = 0; i < 16; ++i) {
      uint64_t w = 0;
      for (int j = 7; j >= 0; --j) w = (w << 8) | b_[8 * i + j];
      m[i] = w;
    }
    for (const auto& s : kSigma) {
      G(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
      G(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
      G(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
      G(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
      G(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
      G(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
      G(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
      G(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    for (int i = 0; i < 8; ++i) h_[i] ^= v[i] ^ v[i + 8];
  }

  size_t outlen_;
  std::array<uint64_t, 8> h_;
  std::array<uint8_t, 128> b_{};
  uint64_t t_ = 0;
  size_t c_ = 0;
};

// kopf's make_suffix: "-" and the hash in base64 with altchars "-.", the
// padding and trailing "-" and "." dropped.
std::string Suffix(std::string_view key) {
  std::string b64;
  absl::Base64Escape(Blake2b4(key), &b64);
  for (char& c : b64) {
    if (c == '+') c = '-';
    if (c == '/') c = '.';
  }
  std::string suffix = Cat("-", b64);
  while (!suffix.empty() && (suffix.back() == '=' || suffix.back() == '-' ||
                             suffix.back() == '.')) {
    suffix.pop_back();
  }
  return suffix;
}

absl::Status FieldError(std::string_view field, std::string_view what) {
  return absl::InvalidArgumentError(Cat("progress record: ", field, " ", what));
}

}  // namespace

std::string FormatIsoTime(absl::Time t) {
  const absl::Duration sub = t - absl::FromUnixSeconds(absl::ToUnixSeconds(t));
  if (sub == absl::ZeroDuration() || absl::ToInt64Microseconds(sub) == 0) {
    return absl::FormatTime("%Y-%m-%dT%H:%M:%S", t, absl::UTCTimeZone());
  }
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6S", t, absl::UTCTimeZone());
}

absl::StatusOr<absl::Time> ParseIsoTime(std::string_view text) {
  std::string s(text);
  if (!s.empty() && (s.back() == 'Z' || s.back() == 'z')) s.pop_back();
  if (s.size() > 6 && s.compare(s.size() - 6, 6, "+00:00") == 0) {
    s.resize(s.size() - 6);
  }
  absl::Time t;
  std::string err;
  if (!absl::ParseTime("%Y-%m-%dT%H:%M:%E*S", s, absl::UTCTimeZone(), &t,
                       &err)) {
    return absl::InvalidArgumentError(
        Cat("not an ISO 8601 time: \"", text, "\""));
  }
  return t;
}

std::string Blake2b4(std::string_view data) {
  Blake2b h(4);
  h.Update(data);
  return h.Final();
}

std::string AnnotationKey(std::string_view prefix, std::string_view key) {
  std::string safe(key);
  bool replaced = false;  // beyond kopf's own replacements
  for (char& c : safe) {
    if (c == '/') {
      c = '.';
    } else if (c == '<' || c == '>') {
      c = '_';
    } else if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') {
      c = '_';
      replaced = true;
    }
  }
  const bool valid_ends =
      !safe.empty() && IsAlnum(safe.front()) && IsAlnum(safe.back());
  std::string suffix;
  if (key.size() > kMaxNameLength || replaced || !valid_ends) {
    suffix = Suffix(key);
  }
  safe.resize(std::min(safe.size(), kMaxNameLength - suffix.size()));
  std::string name = Cat(safe, suffix);
  // A name cut down to nothing, or that starts with what is not
  // alphanumeric, starts with "x" instead (kopf would send it as is and
  // have the patch refused).
  if (name.empty() || !IsAlnum(name.front())) {
    name = Cat("x", name);
    if (name.size() > kMaxNameLength) {
      name.erase(kMaxNameLength - suffix.size(), name.size() - kMaxNameLength);
    }
  }
  return prefix.empty() ? name : Cat(prefix, "/", name);
}

std::shared_ptr<rapidjson::Document> BuildEssence(const api::Object& object,
                                                  std::string_view prefix) {
  auto essence = std::make_shared<rapidjson::Document>(rapidjson::kObjectType);
  auto& a = essence->GetAllocator();
  const rapidjson::Value& root = object.json();
  for (auto it = root.MemberBegin(); it != root.MemberEnd(); ++it) {
    std::string_view name(it->name.GetString(), it->name.GetStringLength());
    if (name == "apiVersion" || name == "kind" || name == "metadata" ||
        name == "status") {
      continue;
    }
    essence->AddMember(rapidjson::Value(it->name, a),
                       rapidjson::Value(it->value, a), a);
  }
  rapidjson::Value metadata(rapidjson::kObjectType);
  if (!object.labels().empty()) {
    rapidjson::Value labels(rapidjson::kObjectType);
    for (const auto& [k, v] : object.labels()) {
      labels.AddMember(Str(k, a), Str(v, a), a);
    }
    metadata.AddMember("labels", labels, a);
  }
  rapidjson::Value annotations(rapidjson::kObjectType);
  const std::string own = Cat(prefix, "/");
  for (const auto& [k, v] : object.annotations()) {
    if (!prefix.empty() && k.substr(0, own.size()) == own) continue;
    if (k == kLastAppliedAnnotation) continue;
    annotations.AddMember(Str(k, a), Str(v, a), a);
  }
  if (annotations.MemberCount() > 0) {
    metadata.AddMember("annotations", annotations, a);
  }
  if (metadata.MemberCount() > 0) essence->AddMember("metadata", metadata, a);
  return essence;
}

void ProgressRecord::ToJson(rapidjson::Value* out,
                            rapidjson::Document::AllocatorType& a,
                            bool with_nulls) const {
  out->SetObject();
  auto put = [&](const char* name, rapidjson::Value v) {
    if (v.IsNull() && !with_nulls) return;
    out->AddMember(rapidjson::StringRef(name), v, a);
  };
  auto time = [&](const std::optional<absl::Time>& t) {
    return t ? Str(FormatIsoTime(*t), a) : rapidjson::Value();
  };
  auto str = [&](const std::optional<std::string>& s) {
    return s ? Str(*s, a) : rapidjson::Value();
  };
  put("started", time(started));
  put("stopped", time(stopped));
  put("delayed", time(delayed));
  put("purpose", str(purpose));
  put("retries", rapidjson::Value(retries));
  put("success", rapidjson::Value(success));
  put("failure", rapidjson::Value(failure));
  put("message", str(message));
}

std::string ProgressRecord::ToJsonString() const {
  rapidjson::Document doc;
  ToJson(&doc, doc.GetAllocator(), /*with_nulls=*/false);
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  doc.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

absl::StatusOr<ProgressRecord> ProgressRecord::FromJson(
    const rapidjson::Value& json, absl::Time now) {
  if (!json.IsObject()) {
    return absl::InvalidArgumentError(Cat("progress record: not an object but ",
                                          kcr::json::JsonTypeName(json)));
  }
  ProgressRecord r;
  auto time = [&](const char* name,
                  std::optional<absl::Time>* out) -> absl::Status {
    const rapidjson::Value* v = Member(json, name);
    if (v == nullptr || v->IsNull()) return absl::OkStatus();
    if (!v->IsString()) return FieldError(name, "is not a string");
    absl::StatusOr<absl::Time> t =
        ParseIsoTime(std::string_view(v->GetString(), v->GetStringLength()));
    if (!t.ok()) return FieldError(name, ToStd(t.status().message()));
    *out = *t;
    return absl::OkStatus();
  };
  auto str = [&](const char* name,
                 std::optional<std::string>* out) -> absl::Status {
    const rapidjson::Value* v = Member(json, name);
    if (v == nullptr || v->IsNull()) return absl::OkStatus();
    if (!v->IsString()) return FieldError(name, "is not a string");
    *out = std::string(v->GetString(), v->GetStringLength());
    return absl::OkStatus();
  };
  auto boolean = [&](const char* name, bool* out) -> absl::Status {
    const rapidjson::Value* v = Member(json, name);
    if (v == nullptr || v->IsNull()) return absl::OkStatus();
    if (!v->IsBool()) return FieldError(name, "is not a boolean");
    *out = v->GetBool();
    return absl::OkStatus();
  };
  for (auto s : {time("started", &r.started), time("stopped", &r.stopped),
                 time("delayed", &r.delayed), str("purpose", &r.purpose),
                 str("message", &r.message), boolean("success", &r.success),
                 boolean("failure", &r.failure)}) {
    if (!s.ok()) return s;
  }
  if (const rapidjson::Value* v = Member(json, "retries");
      v != nullptr && !v->IsNull()) {
    if (!v->IsInt()) return FieldError("retries", "is not an integer");
    if (v->GetInt() < 0) return FieldError("retries", "is negative");
    r.retries = v->GetInt();
  }
  const absl::Time horizon = now + kMaxClockSkew;
  if (r.started && *r.started > horizon) {
    return FieldError("started",
                      Cat("is in the future: ", FormatIsoTime(*r.started)));
  }
  if (r.stopped && *r.stopped > horizon) {
    return FieldError("stopped",
                      Cat("is in the future: ", FormatIsoTime(*r.stopped)));
  }
  return r;
}

bool operator==(const ProgressRecord& a, const ProgressRecord& b) {
  return a.started == b.started && a.stopped == b.stopped &&
         a.delayed == b.delayed && a.purpose == b.purpose &&
         a.retries == b.retries && a.success == b.success &&
         a.failure == b.failure && a.message == b.message;
}

rapidjson::Document NewPatch() {
  return rapidjson::Document(rapidjson::kObjectType);
}

StateStorage::StateStorage(StorageOptions options)
    : options_(std::move(options)),
      last_handled_key_(
          AnnotationKey(options_.prefix, "last-handled-configuration")),
      finalizer_(Cat(options_.prefix, "/handlers")) {}

rapidjson::Value& StateStorage::PatchAnnotations(
    rapidjson::Document* patch) const {
  auto& a = patch->GetAllocator();
  return Child(Child(*patch, "metadata", a), "annotations", a);
}

rapidjson::Value& StateStorage::PatchProgress(
    rapidjson::Document* patch) const {
  auto& a = patch->GetAllocator();
  return Child(Child(Child(*patch, "status", a), options_.status_field, a),
               "progress", a);
}

absl::StatusOr<std::shared_ptr<const rapidjson::Document>>
StateStorage::FetchLastHandled(const api::Object& object) const {
  std::optional<std::string_view> text = object.Annotation(last_handled_key_);
  if (!text) return std::shared_ptr<const rapidjson::Document>();
  auto doc = std::make_shared<rapidjson::Document>();
  absl::Status parsed = kcr::json::ParseJson(*text, doc.get());
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        Cat(last_handled_key_, ": ", parsed.message()));
  }
  if (!doc->IsObject()) {
    return absl::InvalidArgumentError(Cat(last_handled_key_,
                                          ": not an object but ",
                                          kcr::json::JsonTypeName(*doc)));
  }
  return std::shared_ptr<const rapidjson::Document>(std::move(doc));
}

void StateStorage::StoreLastHandled(const rapidjson::Value& essence,
                                    rapidjson::Document* patch) const {
  absl::StatusOr<std::string> text = kcr::json::JsonToString(essence);
  // The essence comes from a parsed Object, so it always serialises.
  std::string encoded = text.ok() ? *text : "{}";
  auto& a = patch->GetAllocator();
  rapidjson::Value& annotations = PatchAnnotations(patch);
  RemoveMember(annotations, last_handled_key_);
  annotations.AddMember(Str(last_handled_key_, a), Str(encoded, a), a);
}

void StateStorage::ClearLastHandled(rapidjson::Document* patch) const {
  auto& a = patch->GetAllocator();
  rapidjson::Value& annotations = PatchAnnotations(patch);
  RemoveMember(annotations, last_handled_key_);
  annotations.AddMember(Str(last_handled_key_, a), rapidjson::Value(), a);
}

absl::StatusOr<std::optional<ProgressRecord>> StateStorage::FetchProgress(
    const api::Object& object, std::string_view handler_id,
    absl::Time now) const {
  if (options_.progress_in_status) {
    const rapidjson::Value* status = Member(object.json(), "status");
    const rapidjson::Value* field =
        status ? Member(*status, options_.status_field) : nullptr;
    const rapidjson::Value* progress =
        field ? Member(*field, "progress") : nullptr;
    const rapidjson::Value* record =
        progress ? Member(*progress, handler_id) : nullptr;
    if (record == nullptr || record->IsNull()) {
      return std::optional<ProgressRecord>();
    }
    absl::StatusOr<ProgressRecord> r = ProgressRecord::FromJson(*record, now);
    if (!r.ok()) return r.status();
    return std::optional<ProgressRecord>(*std::move(r));
  }
  const std::string key = AnnotationKey(options_.prefix, handler_id);
  std::optional<std::string_view> text = object.Annotation(key);
  if (!text) return std::optional<ProgressRecord>();
  rapidjson::Document doc;
  absl::Status parsed = kcr::json::ParseJson(*text, &doc);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(Cat(key, ": ", parsed.message()));
  }
  absl::StatusOr<ProgressRecord> r = ProgressRecord::FromJson(doc, now);
  if (!r.ok()) {
    return absl::InvalidArgumentError(
        Cat(key, ": ", ToStd(r.status().message())));
  }
  return std::optional<ProgressRecord>(*std::move(r));
}

void StateStorage::StoreProgress(std::string_view handler_id,
                                 const ProgressRecord& record,
                                 rapidjson::Document* patch) const {
  auto& a = patch->GetAllocator();
  if (options_.progress_in_status) {
    rapidjson::Value& progress = PatchProgress(patch);
    RemoveMember(progress, handler_id);
    rapidjson::Value v;
    record.ToJson(&v, a, /*with_nulls=*/true);
    progress.AddMember(Str(handler_id, a), v, a);
    return;
  }
  const std::string key = AnnotationKey(options_.prefix, handler_id);
  rapidjson::Value& annotations = PatchAnnotations(patch);
  RemoveMember(annotations, key);
  annotations.AddMember(Str(key, a), Str(record.ToJsonString(), a), a);
}

void StateStorage::PurgeProgress(const api::Object& object,
                                 std::string_view handler_id,
                                 rapidjson::Document* patch) const {
  auto& a = patch->GetAllocator();
  if (options_.progress_in_status) {
    const rapidjson::Value* status = Member(object.json(), "status");
    const rapidjson::Value* field =
        status ? Member(*status, options_.status_field) : nullptr;
    const rapidjson::Value* progress =
        field ? Member(*field, "progress") : nullptr;
    const bool present = progress && Member(*progress, handler_id) != nullptr;
    rapidjson::Value& in_patch = PatchProgress(patch);
    RemoveMember(in_patch, handler_id);
    if (present) in_patch.AddMember(Str(handler_id, a), rapidjson::Value(), a);
    return;
  }
  const std::string key = AnnotationKey(options_.prefix, handler_id);
  rapidjson::Value& annotations = PatchAnnotations(patch);
  RemoveMember(annotations, key);
  if (object.annotations().Has(key)) {
    annotations.AddMember(Str(key, a), rapidjson::Value(), a);
  }
}

}  // namespace kcr::handlers::internal
