#include "apiserver/registry.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "api/json/json_util.h"
#include "api/json/yaml_to_json.h"
#include "api/patch/json_patch.h"
#include "api/patch/merge_patch.h"
#include "apiserver/api_error.h"
#include "apiserver/managed_fields.h"
#include "apiserver/str_util.h"
#include "glog/logging.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "runtime/base/status_macros.h"

namespace kcr {
namespace apiserver {
namespace {

using Mutation = Storage::Mutation;
using api::FieldError;
using rapidjson::Value;

constexpr char kCrdFinalizer[] = "customresourcecleanup.apiextensions.k8s.io";
constexpr char kOrphanFinalizer[] = "orphan";
constexpr char kForegroundFinalizer[] = "foregroundDeletion";

bool IsCRDResource(const ResourceInfo& r) {
  return r.group() == "apiextensions.k8s.io" &&
         r.resource() == "customresourcedefinitions";
}
bool IsNamespaceResource(const ResourceInfo& r) {
  return r.group().empty() && r.resource() == "namespaces";
}

const Value* Member(const Value& obj, const char* key) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

std::string StringAt(const api::ObjectBuilder& b, const char* pointer) {
  const Value* v = b.Find(pointer);
  if (v == nullptr || !v->IsString()) return "";
  return std::string(v->GetString(), v->GetStringLength());
}

std::string Quote(std::string_view s) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return std::string(buf.GetString(), buf.GetSize());
}

FieldError Err(FieldError::Type type, std::string field, std::string value,
               std::string detail) {
  FieldError e;
  e.type = type;
  e.field = std::move(field);
  e.value = std::move(value);
  e.detail = std::move(detail);
  return e;
}

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

// ObjectMeta validation as kube-apiserver does it for names and labels.
void ValidateMeta(const ResourceInfo& r, const api::ObjectBuilder& b,
                  std::vector<FieldError>* errors) {
  std::string name = StringAt(b, "/metadata/name");
  if (!name.empty()) {
    if (IsNamespaceResource(r)) {
      if (name.size() > 63) {
        errors->push_back(Err(FieldError::Type::kInvalid, "metadata.name",
                              Quote(name),
                              "must be no more than 63 characters"));
      } else if (!IsDns1123Label(name)) {
        errors->push_back(Err(
            FieldError::Type::kInvalid, "metadata.name", Quote(name),
            "a lowercase RFC 1123 label must consist of lower case "
            "alphanumeric characters or '-', and must start and end with an "
            "alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
            "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"));
      }
    } else if (r.group().empty() && r.resource() == "services") {
      if (!IsDns1035Label(name)) {
        errors->push_back(Err(
            FieldError::Type::kInvalid, "metadata.name", Quote(name),
            "a DNS-1035 label must consist of lower case alphanumeric "
            "characters or '-', start with an alphabetic character, and end "
            "with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
            "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"));
      }
    } else if (name.size() > 253) {
      errors->push_back(Err(FieldError::Type::kInvalid, "metadata.name",
                            Quote(name),
                            "must be no more than 253 characters"));
    } else if (!IsDns1123Subdomain(name)) {
      errors->push_back(Err(
          FieldError::Type::kInvalid, "metadata.name", Quote(name),
          "a lowercase RFC 1123 subdomain must consist of lower case "
          "alphanumeric characters, '-' or '.', and must start and end with "
          "an alphanumeric character (e.g. 'example.com', regex used for "
          "validation is "
          "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'"
          ")"));
    }
  }
  const Value* labels = b.Find("/metadata/labels");
  if (labels != nullptr && labels->IsObject()) {
    for (const auto& m : labels->GetObject()) {
      std::string_view key(m.name.GetString(), m.name.GetStringLength());
      absl::Status ks = api::ValidateLabelKey(ToAbsl(key));
      if (!ks.ok()) {
        std::string detail(ks.message());
        if (absl::StartsWith(detail, "invalid label key: ")) {
          detail = detail.substr(strlen("invalid label key: "));
        }
        errors->push_back(Err(FieldError::Type::kInvalid, "metadata.labels",
                              Quote(key), detail));
      }
      if (!m.value.IsString()) continue;
      std::string_view value(m.value.GetString(), m.value.GetStringLength());
      if (!IsLabelValue(value)) {
        errors->push_back(Err(
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
}

std::vector<std::string> Finalizers(const api::ObjectBuilder& b) {
  std::vector<std::string> out;
  const Value* f = b.Find("/metadata/finalizers");
  if (f == nullptr || !f->IsArray()) return out;
  for (const auto& v : f->GetArray()) {
    if (v.IsString()) out.emplace_back(v.GetString(), v.GetStringLength());
  }
  return out;
}

std::vector<std::string> NamespaceSpecFinalizers(const api::ObjectBuilder& b) {
  std::vector<std::string> out;
  const Value* f = b.Find("/spec/finalizers");
  if (f == nullptr || !f->IsArray()) return out;
  for (const auto& v : f->GetArray()) {
    if (v.IsString()) out.emplace_back(v.GetString(), v.GetStringLength());
  }
  return out;
}

bool EqualMember(const Value& a, const Value& b, const char* key) {
  const Value* x = Member(a, key);
  const Value* y = Member(b, key);
  if (x == nullptr || y == nullptr) return x == y;
  return json::JsonDeepEqual(*x, *y);
}

// Whether two managedFields lists differ at most in their entries' `time`.
bool SameManagedFieldsButTimes(const Value& a, const Value& b) {
  if (!a.IsArray() || !b.IsArray() || a.Size() != b.Size()) return false;
  for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
    const Value& x = a[i];
    const Value& y = b[i];
    if (!x.IsObject() || !y.IsObject()) return false;
    size_t counted = 0;
    for (const auto& m : x.GetObject()) {
      if (std::string_view(m.name.GetString()) == "time") continue;
      ++counted;
      const Value* other = Member(y, m.name.GetString());
      if (other == nullptr || !json::JsonDeepEqual(m.value, *other))
        return false;
    }
    const size_t y_count = y.MemberCount() - (Member(y, "time") != nullptr);
    if (counted != y_count) return false;
  }
  return true;
}

// Whether the change from `old` to `cur` bumps metadata.generation.
bool GenerationChanged(GenerationPolicy policy, bool has_status,
                       const Value& old, const Value& cur) {
  switch (policy) {
    case GenerationPolicy::kNone:
      return false;
    case GenerationPolicy::kSpec:
      return !EqualMember(old, cur, "spec");
    case GenerationPolicy::kSpecAndAnnotations: {
      if (!EqualMember(old, cur, "spec")) return true;
      const Value* om = Member(old, "metadata");
      const Value* cm = Member(cur, "metadata");
      if (om == nullptr || cm == nullptr) return om != cm;
      return !EqualMember(*om, *cm, "annotations");
    }
    case GenerationPolicy::kAllButMetadata: {
      // With a status subresource, status is not part of the spec.
      auto ignored = [has_status](std::string_view k) {
        return k == "metadata" || k == "apiVersion" || k == "kind" ||
               (has_status && k == "status");
      };
      auto count = [&](const Value& v) {
        size_t n = 0;
        for (const auto& m : v.GetObject()) {
          if (!ignored(std::string_view(m.name.GetString(),
                                        m.name.GetStringLength()))) {
            ++n;
          }
        }
        return n;
      };
      if (count(old) != count(cur)) return true;
      for (const auto& m : cur.GetObject()) {
        std::string_view k(m.name.GetString(), m.name.GetStringLength());
        if (ignored(k)) continue;
        const Value* o = Member(old, m.name.GetString());
        if (o == nullptr || !json::JsonDeepEqual(*o, m.value)) return true;
      }
      return false;
    }
  }
  return false;
}

// Copies member `key` of `from` (or removes it from `to` when absent).
void CopyMember(const Value& from, const char* key, api::ObjectBuilder* to) {
  const Value* v = Member(from, key);
  std::string pointer = Cat("/", key);
  if (v == nullptr) {
    to->Remove(pointer);
  } else {
    (void)to->Set(pointer, *v);
  }
}

void CopyMetadataMember(const Value& from_root, const char* key,
                        api::ObjectBuilder* to) {
  const Value* md = Member(from_root, "metadata");
  const Value* v = md == nullptr ? nullptr : Member(*md, key);
  std::string pointer = Cat("/metadata/", key);
  if (v == nullptr) {
    to->Remove(pointer);
  } else {
    (void)to->Set(pointer, *v);
  }
}

void SetIfAbsent(api::ObjectBuilder* b, const std::string& pointer,
                 std::string_view value) {
  if (b->Find(pointer) == nullptr) (void)b->SetString(pointer, value);
}

void DefaultPodSpec(api::ObjectBuilder* b, const std::string& spec) {
  const Value* s = b->Find(spec);
  if (s == nullptr || !s->IsObject()) return;
  SetIfAbsent(b, spec + "/restartPolicy", "Always");
  SetIfAbsent(b, spec + "/dnsPolicy", "ClusterFirst");
  SetIfAbsent(b, spec + "/schedulerName", "default-scheduler");
  if (b->Find(spec + "/terminationGracePeriodSeconds") == nullptr) {
    (void)b->SetInt(spec + "/terminationGracePeriodSeconds", 30);
  }
  if (b->Find(spec + "/securityContext") == nullptr) {
    (void)b->SetJson(spec + "/securityContext", "{}");
  }
  for (const char* list : {"/containers", "/initContainers"}) {
    const Value* cs = b->Find(spec + list);
    if (cs == nullptr || !cs->IsArray()) continue;
    for (rapidjson::SizeType i = 0; i < cs->Size(); ++i) {
      std::string c = Cat(spec, list, "/", i);
      const Value* cv = b->Find(c);
      if (cv == nullptr || !cv->IsObject()) continue;
      SetIfAbsent(b, c + "/terminationMessagePath", "/dev/termination-log");
      SetIfAbsent(b, c + "/terminationMessagePolicy", "File");
      if (b->Find(c + "/imagePullPolicy") == nullptr) {
        std::string image = StringAt(*b, (c + "/image").c_str());
        bool latest = image.find(':') == std::string::npos ||
                      absl::EndsWith(image, ":latest");
        (void)b->SetString(c + "/imagePullPolicy",
                           latest ? "Always" : "IfNotPresent");
      }
      if (b->Find(c + "/resources") == nullptr) {
        (void)b->SetJson(c + "/resources", "{}");
      }
    }
  }
}

// The defaults kube-apiserver applies when it decodes these kinds (the
// ones kubectl and controllers rely on).
void ApplyBuiltinDefaults(const ResourceInfo& r, api::ObjectBuilder* b) {
  if (r.custom) return;
  if (r.group().empty() && r.resource() == "pods") {
    DefaultPodSpec(b, "/spec");
  } else if (r.group() == "apps" && r.resource() == "deployments") {
    if (b->Find("/spec") == nullptr) return;
    if (b->Find("/spec/replicas") == nullptr)
      (void)b->SetInt("/spec/replicas", 1);
    if (b->Find("/spec/revisionHistoryLimit") == nullptr) {
      (void)b->SetInt("/spec/revisionHistoryLimit", 10);
    }
    if (b->Find("/spec/progressDeadlineSeconds") == nullptr) {
      (void)b->SetInt("/spec/progressDeadlineSeconds", 600);
    }
    // As apps/v1 SetDefaults_Deployment: an empty strategy (what kubectl's
    // generators send) is a RollingUpdate of 25% / 25%.
    // SetString creates a missing strategy or rollingUpdate and does nothing
    // under one that is not an object.
    SetIfAbsent(b, "/spec/strategy/type", "RollingUpdate");
    const Value* type = b->Find("/spec/strategy/type");
    if (type != nullptr && type->IsString() &&
        std::string_view(type->GetString()) == "RollingUpdate") {
      SetIfAbsent(b, "/spec/strategy/rollingUpdate/maxUnavailable", "25%");
      SetIfAbsent(b, "/spec/strategy/rollingUpdate/maxSurge", "25%");
    }
    DefaultPodSpec(b, "/spec/template/spec");
  } else if (r.group().empty() && r.resource() == "services") {
    if (b->Find("/spec") != nullptr) {
      SetIfAbsent(b, "/spec/type", "ClusterIP");
      SetIfAbsent(b, "/spec/sessionAffinity", "None");
    }
  } else if (r.group().empty() && r.resource() == "secrets") {
    SetIfAbsent(b, "/type", "Opaque");
  }
}

std::string Now(const Clock* clock) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", clock->Now(),
                          absl::UTCTimeZone());
}

// Sets status.acceptedNames, conditions and storedVersions of a CRD, as
// the naming and establishing controllers of apiextensions-apiserver do
// (at once).
void SetCRDStatus(api::ObjectBuilder* b, const Value* old_status,
                  const std::string& now) {
  const Value* names = b->Find("/spec/names");
  rapidjson::Document accepted(rapidjson::kObjectType);
  auto& a = accepted.GetAllocator();
  std::string kind, plural;
  if (names != nullptr && names->IsObject()) {
    accepted.CopyFrom(*names, a);
    kind = StringAt(*b, "/spec/names/kind");
    plural = StringAt(*b, "/spec/names/plural");
    if (!accepted.HasMember("singular") && !kind.empty()) {
      std::string s = kind;
      for (char& c : s) c = static_cast<char>(tolower(c));
      accepted.AddMember("singular", Value(s.c_str(), a), a);
    }
    if (!accepted.HasMember("listKind") && !kind.empty()) {
      accepted.AddMember("listKind", Value((kind + "List").c_str(), a), a);
    }
  }
  (void)b->Set("/status/acceptedNames", accepted);
  // Keep a condition's lastTransitionTime while its status is unchanged.
  auto transition = [&](std::string_view type, std::string_view status) {
    if (old_status != nullptr) {
      const Value* conds = Member(*old_status, "conditions");
      if (conds != nullptr && conds->IsArray()) {
        for (const auto& c : conds->GetArray()) {
          const Value* t = Member(c, "type");
          const Value* s = Member(c, "status");
          const Value* ltt = Member(c, "lastTransitionTime");
          if (t && t->IsString() && t->GetString() == type && s &&
              s->IsString() && s->GetString() == status && ltt &&
              ltt->IsString()) {
            return std::string(ltt->GetString());
          }
        }
      }
    }
    return now;
  };
  bool deleting = b->Find("/metadata/deletionTimestamp") != nullptr;
  std::string conds = Cat(
      R"([{"type":"NamesAccepted","status":"True","lastTransitionTime":")",
      transition("NamesAccepted", "True"),
      R"(","reason":"NoConflicts","message":"no conflicts found"},)",
      R"({"type":"Established","status":"True","lastTransitionTime":")",
      transition("Established", "True"),
      R"(","reason":"InitialNamesAccepted","message":"the initial names have been accepted"})");
  if (deleting) {
    CatAppend(
        &conds,
        R"(,{"type":"Terminating","status":"True","lastTransitionTime":")",
        transition("Terminating", "True"),
        R"(","reason":"InstanceDeletionInProgress","message":"CustomResource deletion is in progress"})");
  }
  conds += "]";
  (void)b->SetJson("/status/conditions", conds);
  // storedVersions: every version ever stored, plus the current storage one.
  std::vector<std::string> stored;
  if (old_status != nullptr) {
    const Value* sv = Member(*old_status, "storedVersions");
    if (sv != nullptr && sv->IsArray()) {
      for (const auto& v : sv->GetArray()) {
        if (v.IsString()) stored.emplace_back(v.GetString());
      }
    }
  }
  const Value* versions = b->Find("/spec/versions");
  if (versions != nullptr && versions->IsArray()) {
    for (const auto& v : versions->GetArray()) {
      const Value* st = Member(v, "storage");
      const Value* n = Member(v, "name");
      if (st && st->IsBool() && st->GetBool() && n && n->IsString() &&
          std::find(stored.begin(), stored.end(), n->GetString()) ==
              stored.end()) {
        stored.emplace_back(n->GetString());
      }
    }
  }
  rapidjson::Document sv(rapidjson::kArrayType);
  for (const std::string& s : stored) {
    sv.PushBack(Value(s.c_str(), sv.GetAllocator()), sv.GetAllocator());
  }
  (void)b->Set("/status/storedVersions", sv);
}

}  // namespace

struct WriteManager {
  std::string field_manager;
  std::string user_agent;
  std::string subresource;
  // An apply: managedFields come with the applied object.
  bool apply = false;
};

namespace {

absl::StatusOr<api::ObjectPtr> ScaleOf(const ResourceInfo& r,
                                       const api::ObjectPtr& o);

absl::Status PatchError(std::string_view message) {
  ApiError e;
  e.code = 422;
  e.reason = "Invalid";
  e.message = std::string(message);
  return e.ToStatus();
}

absl::Status ParseBody(std::string_view text, rapidjson::Document* doc,
                       bool allow_yaml) {
  absl::Status s = json::ParseJson(text, doc);
  if (s.ok()) return s;
  if (allow_yaml) {
    auto y = json::YamlToJson(text);
    if (y.ok()) {
      doc->CopyFrom(**y, doc->GetAllocator());
      return absl::OkStatus();
    }
    // An apply body is YAML (JSON being a form of it): say what YAML found.
    return ApiError::BadRequest(
               Cat("error decoding YAML: ", y.status().message()))
        .ToStatus();
  }
  return ApiError::BadRequest(Cat("error decoding patch: ", s.message()))
      .ToStatus();
}

}  // namespace

Registry::Registry(Storage* storage, ResourceRegistry* resources,
                   RegistryOptions options)
    : storage_(storage), resources_(resources), options_(std::move(options)) {}

std::string Registry::Now() const { return apiserver::Now(options_.clock); }

std::string Registry::NewUid() {
  thread_local absl::BitGen gen;
  uint64_t hi = absl::Uniform<uint64_t>(gen);
  uint64_t lo = absl::Uniform<uint64_t>(gen);
  hi = (hi & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  return absl::StrFormat("%08x-%04x-%04x-%04x-%012x", hi >> 32,
                         (hi >> 16) & 0xffff, hi & 0xffff, lo >> 48,
                         lo & 0xffffffffffffULL);
}

std::string Registry::GenerateName(std::string_view prefix) {
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  thread_local absl::BitGen gen;
  std::string out(prefix.substr(0, 58));
  for (int i = 0; i < 5; ++i) {
    out += kAlphabet[absl::Uniform<size_t>(gen, 0, sizeof(kAlphabet) - 1)];
  }
  return out;
}

std::string Registry::EncodeContinue(int64_t rv, std::string_view start) {
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

absl::Status Registry::DecodeContinue(std::string_view token, int64_t* rv,
                                      std::string* start) {
  std::string json;
  auto bad = [](std::string_view why) {
    return ApiError::BadRequest(Cat("invalid continue token: ", why))
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
  if (r == nullptr || !r->IsInt64() || r->GetInt64() <= 0 || s == nullptr ||
      !s->IsString()) {
    return bad(
        "continue key is not valid: incorrect encoded start resourceVersion "
        "(version meta.k8s.io/v1)");
  }
  *rv = r->GetInt64();
  *start = std::string(s->GetString(), s->GetStringLength());
  return absl::OkStatus();
}

api::ObjectPtr Registry::AtVersion(const api::ObjectPtr& object,
                                   const ResourceInfo& resource) {
  if (object == nullptr || !resource.custom) return object;
  std::string want = resource.api_version();
  if (object->api_version() == want) return object;
  api::ObjectBuilder b = object->ToBuilder();
  b.SetApiVersion(want);
  auto built = b.Build();
  return built.ok() ? *built : object;
}

bool Registry::Matches(const api::Object& object, const ListOptions& options) {
  if (!options.label_selector.Empty() &&
      !options.label_selector.Matches(object.metadata().HasMember("labels")
                                          ? &object.metadata()["labels"]
                                          : nullptr)) {
    return false;
  }
  if (!options.field_selector.Empty() &&
      !options.field_selector.Matches(object.json())) {
    return false;
  }
  return true;
}

absl::Status Registry::ValidateSelectors(const ResourceInfo& resource,
                                         const ListOptions& options) {
  for (const api::FieldRequirement& r : options.field_selector.requirements()) {
    if (!resource.SupportsFieldLabel(r.field)) {
      return ApiError::BadRequest(Cat("field label not supported: ", r.field))
          .ToStatus();
    }
  }
  return absl::OkStatus();
}

absl::Status Registry::Bootstrap() {
  ResourceInfoPtr ns = resources_->Lookup("", "v1", "namespaces");
  for (const char* name :
       {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    if (storage_->Get(ns->StorageKey(), "", name) != nullptr) continue;
    api::ObjectBuilder b("v1", "Namespace");
    b.SetName(name);
    b.SetLabel("kubernetes.io/metadata.name", name);
    KCR_RETURN_IF_ERROR(Create(*ns, "", std::move(b)).status());
  }
  return absl::OkStatus();
}

absl::StatusOr<api::ObjectPtr> Registry::Get(const ResourceInfo& resource,
                                             std::string_view ns,
                                             std::string_view name) const {
  api::ObjectPtr o = storage_->Get(resource.StorageKey(), ns, name);
  if (o == nullptr) {
    return ApiError::NotFound(resource.group_resource(), name).ToStatus();
  }
  return AtVersion(o, resource);
}

absl::StatusOr<ListResult> Registry::List(const ResourceInfo& resource,
                                          std::string_view ns,
                                          const ListOptions& options) const {
  std::vector<FieldError> errors;
  const std::string& rv = options.resource_version;
  const std::string& match = options.resource_version_match;
  if (options.send_initial_events_set) {
    errors.push_back(Err(FieldError::Type::kForbidden, "sendInitialEvents", "",
                         "sendInitialEvents is forbidden for list"));
  }
  if (!match.empty()) {
    if (match != "Exact" && match != "NotOlderThan") {
      errors.push_back(Err(
          FieldError::Type::kNotSupported, "resourceVersionMatch", Quote(match),
          "supported values: \"Exact\", \"NotOlderThan\", \"\""));
    } else if (rv.empty()) {
      errors.push_back(Err(FieldError::Type::kForbidden, "resourceVersionMatch",
                           "",
                           "resourceVersionMatch is forbidden unless "
                           "resourceVersion is provided"));
    } else if (!options.continue_token.empty()) {
      errors.push_back(Err(FieldError::Type::kForbidden, "resourceVersionMatch",
                           "",
                           "resourceVersionMatch is forbidden when continue "
                           "is provided"));
    } else if (match == "Exact" && rv == "0") {
      errors.push_back(Err(FieldError::Type::kForbidden, "resourceVersionMatch",
                           "",
                           "resourceVersionMatch \"exact\" is forbidden for "
                           "resourceVersion \"0\""));
    }
  }
  if (!errors.empty()) {
    return ApiError::Invalid({"meta.k8s.io", "ListOptions"}, "", errors)
        .ToStatus();
  }
  KCR_RETURN_IF_ERROR(ValidateSelectors(resource, options));
  int64_t requested = 0;
  if (!rv.empty() && !absl::SimpleAtoi(rv, &requested)) {
    return ApiError::BadRequest(Cat("invalid resource version: ", Quote(rv)))
        .ToStatus();
  }
  Storage::ListOptions so;
  so.ns = std::string(ns);
  so.limit = options.limit > 0 ? options.limit : 0;
  bool selective =
      !options.label_selector.Empty() || !options.field_selector.Empty();
  if (selective) {
    ListOptions copy = options;
    so.filter = [copy](const api::Object& o) { return Matches(o, copy); };
  }
  if (!options.continue_token.empty()) {
    if (!rv.empty() && rv != "0") {
      return ApiError::BadRequest(
                 "specifying resource version is not allowed when using "
                 "continue")
          .ToStatus();
    }
    KCR_RETURN_IF_ERROR(DecodeContinue(options.continue_token,
                                       &so.at_resource_version, &so.start_key));
    if (so.at_resource_version < storage_->OldestResourceVersion()) {
      return ApiError::Expired(
                 "The provided continue parameter is too old to display a "
                 "consistent list result. You can start a new list without "
                 "the continue parameter, or use the continue token in this "
                 "response to retrieve the remainder of the results. "
                 "Continuing with the provided token results in an "
                 "inconsistent list - objects that were created, modified, "
                 "or deleted between the time the first chunk was returned "
                 "and now may show up in the list.")
          .ToStatus();
    }
  } else if (match == "Exact") {
    so.at_resource_version = requested;
  } else if (requested > 0 && requested > storage_->CurrentResourceVersion()) {
    ApiError e;
    e.code = 504;
    e.reason = "Timeout";
    e.message = Cat("Too large resource version: ", requested,
                    ", current: ", storage_->CurrentResourceVersion());
    e.causes.push_back(
        {"ResourceVersionTooLarge", "Too large resource version", ""});
    e.retry_after_seconds = 1;
    return e.ToStatus();
  }
  KCR_ASSIGN_OR_RETURN(Storage::ListResult page,
                       storage_->List(resource.StorageKey(), so));
  ListResult out;
  out.items.reserve(page.items.size());
  for (api::ObjectPtr& o : page.items) {
    out.items.push_back(AtVersion(o, resource));
  }
  out.resource_version = Cat(page.resource_version);
  if (!page.continue_key.empty()) {
    out.continue_token =
        EncodeContinue(page.resource_version, page.continue_key);
    if (!selective) out.remaining_item_count = page.remaining;
  }
  return out;
}

absl::Status Registry::PrepareCreate(const ResourceInfo& r, std::string_view ns,
                                     api::ObjectBuilder* b) const {
  std::string api_version = StringAt(*b, "/apiVersion");
  std::string kind = StringAt(*b, "/kind");
  if (!api_version.empty() && api_version != r.api_version()) {
    return ApiError::BadRequest(
               Cat("the API version in the data (", api_version,
                   ") does not match the expected API version (",
                   r.api_version(), ")"))
        .ToStatus();
  }
  if (!kind.empty() && kind != r.kind()) {
    return ApiError::BadRequest(Cat("the kind in the data (", kind,
                                    ") does not match the expected kind (",
                                    r.kind(), ")"))
        .ToStatus();
  }
  b->SetApiVersion(api::GroupVersion(r.group(), r.storage_version).ToString());
  b->SetKind(r.kind());
  if (b->Find("/metadata") == nullptr || !b->Find("/metadata")->IsObject()) {
    (void)b->SetJson("/metadata", "{}");
  }
  std::string body_ns = StringAt(*b, "/metadata/namespace");
  if (r.namespaced()) {
    if (body_ns.empty()) {
      b->SetNamespace(ns);
    } else if (body_ns != ns) {
      return ApiError::BadRequest(
                 "the namespace of the provided object does not match the "
                 "namespace sent on the request")
          .ToStatus();
    }
  } else {
    b->Remove("/metadata/namespace");
  }
  if (!StringAt(*b, "/metadata/resourceVersion").empty()) {
    return ApiError::InternalError(
               "resourceVersion should not be set on objects to be created")
        .ToStatus();
  }
  std::string name = StringAt(*b, "/metadata/name");
  if (name.empty() && StringAt(*b, "/metadata/generateName").empty()) {
    return ApiError::Invalid(r.group_kind(), "",
                             {Err(FieldError::Type::kRequired, "metadata.name",
                                  "", "name or generateName is required")})
        .ToStatus();
  }
  b->SetUid(NewUid());
  (void)b->SetString("/metadata/creationTimestamp", Now());
  b->Remove("/metadata/deletionTimestamp");
  b->Remove("/metadata/deletionGracePeriodSeconds");
  b->Remove("/metadata/selfLink");
  if (r.generation != GenerationPolicy::kNone) {
    b->SetGeneration(1);
  } else {
    b->Remove("/metadata/generation");
  }
  ApplyBuiltinDefaults(r, b);
  if (r.custom) {
    if (r.has_status()) b->Remove("/status");
  } else if (IsNamespaceResource(r)) {
    (void)b->SetJson("/spec/finalizers", R"(["kubernetes"])");
    (void)b->SetJson("/status", R"({"phase":"Active"})");
    if (!name.empty()) b->SetLabel("kubernetes.io/metadata.name", name);
  } else if (r.group().empty() && r.resource() == "pods") {
    (void)b->SetJson("/status",
                     R"({"phase":"Pending","qosClass":"BestEffort"})");
  } else if (r.group() == "apps" && r.resource() == "deployments") {
    (void)b->SetJson("/status", "{}");
  } else if (r.group().empty() && r.resource() == "services") {
    (void)b->SetJson("/status", R"({"loadBalancer":{}})");
  } else if (IsCRDResource(r)) {
    b->AddFinalizer(kCrdFinalizer);
    b->Remove("/status");
    SetCRDStatus(b, nullptr, Now());
  }
  // Validation (the name is checked once it is final, in CreateLocked).
  std::vector<FieldError> errors;
  if (r.custom && r.schema != nullptr) {
    errors = r.schema->Admit(&b->json(), b->allocator());
  }
  if (IsCRDResource(r)) {
    (void)ResourceRegistry::FromCRD(b->json(), &errors);
  }
  if (!errors.empty()) {
    std::string n =
        name.empty() ? StringAt(*b, "/metadata/generateName") : name;
    return ApiError::Invalid(r.group_kind(), name, errors).ToStatus();
  }
  return absl::OkStatus();
}

absl::Status Registry::CheckNamespace(const ResourceInfo& r,
                                      std::string_view ns,
                                      std::string_view name) const {
  if (!r.namespaced()) return absl::OkStatus();
  api::ObjectPtr n = storage_->Get("/namespaces", "", ns);
  if (n == nullptr) {
    return ApiError::NotFound({"", "namespaces"}, ns).ToStatus();
  }
  if (n->being_deleted()) {
    return ApiError::Forbidden(r.group_resource(), name,
                               Cat("unable to create new content in namespace ",
                                   ns, " because it is being terminated"))
        .ToStatus();
  }
  return absl::OkStatus();
}

absl::StatusOr<Mutation> Registry::CreateLocked(const ResourceInfo& r,
                                                const api::ObjectPtr& current,
                                                api::ObjectBuilder b) const {
  std::string name = StringAt(b, "/metadata/name");
  if (current != nullptr) {
    ApiError e = ApiError::AlreadyExists(r.group_resource(), name);
    if (current->being_deleted())
      e.message = "object is being deleted: " + e.message;
    return e.ToStatus();
  }
  std::vector<FieldError> errors;
  ValidateMeta(r, b, &errors);
  if (!errors.empty()) {
    return ApiError::Invalid(r.group_kind(), name, errors).ToStatus();
  }
  return Mutation::Put(std::move(b));
}

namespace {

void CollectUnknown(const Value& before, const Value& after,
                    const std::string& path, int depth,
                    std::vector<std::string>* out) {
  if (depth > 64) return;
  if (before.IsObject() && after.IsObject()) {
    for (const auto& m : before.GetObject()) {
      std::string key(m.name.GetString(), m.name.GetStringLength());
      std::string p = path.empty() ? key : path + "." + key;
      auto it = after.FindMember(m.name);
      if (it == after.MemberEnd()) {
        out->push_back(p);
      } else {
        CollectUnknown(m.value, it->value, p, depth + 1, out);
      }
    }
  } else if (before.IsArray() && after.IsArray() &&
             before.Size() == after.Size()) {
    for (rapidjson::SizeType i = 0; i < before.Size(); ++i) {
      CollectUnknown(before[i], after[i],
                     Cat(path, "[", static_cast<int>(i), "]"), depth + 1, out);
    }
  }
}

}  // namespace

absl::Status Registry::CheckUnknownFields(const ResourceInfo& r,
                                          const rapidjson::Value& object,
                                          const std::string& mode,
                                          std::vector<std::string>* warnings) {
  if (!r.custom || r.schema == nullptr || mode == "Ignore" ||
      !object.IsObject()) {
    return absl::OkStatus();
  }
  rapidjson::Document pruned;
  pruned.CopyFrom(object, pruned.GetAllocator());
  r.schema->Prune(&pruned, pruned.GetAllocator());
  std::vector<std::string> unknown;
  CollectUnknown(object, pruned, "", 0, &unknown);
  if (unknown.empty()) return absl::OkStatus();
  std::vector<std::string> texts;
  for (const std::string& f : unknown)
    texts.push_back(Cat("unknown field ", Quote(f)));
  if (mode == "Strict") {
    return ApiError::BadRequest(
               Cat(r.kind(), " in version ", Quote(r.version()),
                   " cannot be handled as a ", r.kind(),
                   ": strict decoding error: ", absl::StrJoin(texts, ", ")))
        .ToStatus();
  }
  if (warnings != nullptr) {
    warnings->insert(warnings->end(), texts.begin(), texts.end());
  }
  return absl::OkStatus();
}

namespace {

// Runs a write for real, or (dry run) computes it without storing.
absl::StatusOr<Storage::WriteResult> RunWrite(
    Storage* storage, const std::string& collection, std::string_view ns,
    std::string_view name, bool dry_run, const Storage::UpdateFunc& fn) {
  if (!dry_run) return storage->Write(collection, ns, name, fn);
  api::ObjectPtr preview;
  Mutation::Op op = Mutation::Op::kKeep;
  auto result = storage->Write(
      collection, ns, name,
      [&](const api::ObjectPtr& cur) -> absl::StatusOr<Mutation> {
        KCR_ASSIGN_OR_RETURN(Mutation m, fn(cur));
        op = m.op;
        if (m.op == Mutation::Op::kPut) {
          if (cur != nullptr) {
            m.object->SetResourceVersion(cur->resource_version());
          }
          KCR_ASSIGN_OR_RETURN(preview, m.object->Build());
        } else {
          preview = cur;
        }
        return Mutation::Keep();
      });
  if (!result.ok()) return result.status();
  result->object = preview;
  result->op = op;
  return result;
}

}  // namespace

absl::StatusOr<WriteResult> Registry::Create(const ResourceInfo& r,
                                             std::string_view ns,
                                             api::ObjectBuilder object,
                                             const WriteOptions& options) {
  if (!options.subresource.empty()) {
    return ApiError::MethodNotSupported(r.group_resource(), "create")
        .ToStatus();
  }
  std::vector<std::string> warnings;
  KCR_RETURN_IF_ERROR(CheckUnknownFields(r, object.json(),
                                         options.field_validation, &warnings));
  KCR_RETURN_IF_ERROR(PrepareCreate(r, ns, &object));
  KCR_RETURN_IF_ERROR(RecordWriteManagedFields(
      r, nullptr, &object.json(), object.allocator(), options.field_manager,
      options.user_agent, "", options_.clock->Now()));
  std::string name = StringAt(object, "/metadata/name");
  std::string prefix = StringAt(object, "/metadata/generateName");
  bool generated = name.empty();
  KCR_RETURN_IF_ERROR(CheckNamespace(r, ns, name));
  for (int attempt = 0;; ++attempt) {
    if (generated) {
      name = GenerateName(prefix);
      object.SetName(name);
      if (IsNamespaceResource(r)) {
        object.SetLabel("kubernetes.io/metadata.name", name);
      }
    }
    std::string obj_ns = r.namespaced() ? std::string(ns) : "";
    const api::ObjectBuilder& proto = object;
    auto result =
        RunWrite(storage_, r.StorageKey(), obj_ns, name, options.dry_run,
                 [&](const api::ObjectPtr& cur) -> absl::StatusOr<Mutation> {
                   KCR_ASSIGN_OR_RETURN(api::ObjectPtr copy, proto.Build());
                   return CreateLocked(r, cur, copy->ToBuilder());
                 });
    if (!result.ok()) {
      if (generated && api::IsAlreadyExists(result.status()) && attempt < 8) {
        continue;
      }
      return result.status();
    }
    if (!options.dry_run) AfterWrite(r, *result);
    WriteResult out;
    out.object = AtVersion(result->object, r);
    out.created = true;
    out.warnings = warnings;
    return out;
  }
}

absl::StatusOr<Mutation> Registry::UpdateLocked(
    const ResourceInfo& r, const api::ObjectPtr& current, api::ObjectBuilder b,
    const std::string& sub, bool is_patch, const WriteManager* manager) const {
  std::string name = StringAt(b, "/metadata/name");
  rapidjson::Document applied_fields;
  if (manager != nullptr && manager->apply) {
    const Value* mf = b.Find("/metadata/managedFields");
    if (mf != nullptr)
      applied_fields.CopyFrom(*mf, applied_fields.GetAllocator());
  }
  if (current == nullptr) {
    return ApiError::NotFound(r.group_resource(), name).ToStatus();
  }
  const Value& cur = current->json();
  // Type meta: any served version of the resource is accepted.
  std::string api_version = StringAt(b, "/apiVersion");
  std::string kind = StringAt(b, "/kind");
  if (!api_version.empty() && api_version != r.api_version() &&
      api_version != current->api_version()) {
    return ApiError::BadRequest(
               Cat("the API version in the data (", api_version,
                   ") does not match the expected API version (",
                   r.api_version(), ")"))
        .ToStatus();
  }
  if (!kind.empty() && kind != r.kind()) {
    return ApiError::BadRequest(Cat("the kind in the data (", kind,
                                    ") does not match the expected kind (",
                                    r.kind(), ")"))
        .ToStatus();
  }
  // Optimistic concurrency.
  std::string rv = StringAt(b, "/metadata/resourceVersion");
  if (rv.empty() || rv == "0") {
    if (!r.allow_unconditional_update && !is_patch) {
      return ApiError::Invalid(
                 r.group_kind(), name,
                 {Err(FieldError::Type::kInvalid, "metadata.resourceVersion",
                      "0x0", "must be specified for an update")})
          .ToStatus();
    }
  } else if (rv != current->resource_version()) {
    return ApiError::StaleConflict(r.group_resource(), name).ToStatus();
  }

  api::ObjectBuilder out;
  if (sub == "status") {
    out = current->ToBuilder();
    CopyMember(b.json(), "status", &out);
  } else if (sub == "finalize") {
    out = current->ToBuilder();
    const Value* f = b.Find("/spec/finalizers");
    if (f == nullptr) {
      out.Remove("/spec/finalizers");
    } else {
      (void)out.Set("/spec/finalizers", *f);
    }
  } else {
    out = std::move(b);
    if (r.has_status()) CopyMember(cur, "status", &out);
    if (IsNamespaceResource(r)) {
      const Value* spec = Member(cur, "spec");
      const Value* f = spec == nullptr ? nullptr : Member(*spec, "finalizers");
      if (f == nullptr) {
        out.Remove("/spec/finalizers");
      } else {
        (void)out.Set("/spec/finalizers", *f);
      }
    }
  }
  // Fields no update may change.
  out.SetApiVersion(current->api_version());
  out.SetKind(current->kind());
  for (const char* key :
       {"name", "namespace", "uid", "creationTimestamp", "deletionTimestamp",
        "deletionGracePeriodSeconds", "generation"}) {
    CopyMetadataMember(cur, key, &out);
  }
  out.Remove("/metadata/selfLink");
  ApplyBuiltinDefaults(r, &out);

  std::vector<FieldError> errors;
  if (current->being_deleted()) {
    std::vector<std::string> old_f, new_f = Finalizers(out);
    for (auto f : current->finalizers()) old_f.emplace_back(f);
    std::vector<std::string> added;
    for (const std::string& f : new_f) {
      if (std::find(old_f.begin(), old_f.end(), f) == old_f.end()) {
        added.push_back(Quote(f));
      }
    }
    if (!added.empty()) {
      errors.push_back(
          Err(FieldError::Type::kForbidden, "metadata.finalizers", "",
              Cat("no new finalizers can be added if the object is "
                  "being deleted, found new finalizers []string{",
                  absl::StrJoin(added, ", "), "}")));
    }
  }
  ValidateMeta(r, out, &errors);
  if (r.custom && r.schema != nullptr) {
    std::vector<FieldError> schema_errors =
        r.schema->Admit(&out.json(), out.allocator());
    errors.insert(errors.end(), schema_errors.begin(), schema_errors.end());
  }
  if (IsCRDResource(r)) {
    (void)ResourceRegistry::FromCRD(out.json(), &errors);
    if (errors.empty()) SetCRDStatus(&out, Member(cur, "status"), Now());
  }
  if (!errors.empty()) {
    return ApiError::Invalid(r.group_kind(), name, errors).ToStatus();
  }
  if (GenerationChanged(r.generation, r.has_status(), cur, out.json())) {
    out.SetGeneration(current->generation() + 1);
  }
  if (manager != nullptr && manager->apply) {
    out.Remove("/metadata/managedFields");
    if (!applied_fields.IsNull())
      (void)out.Set("/metadata/managedFields", applied_fields);
  } else if (manager != nullptr) {
    KCR_RETURN_IF_ERROR(RecordWriteManagedFields(
        r, &cur, &out.json(), out.allocator(), manager->field_manager,
        manager->user_agent, manager->subresource, options_.clock->Now()));
  }
  // An update that changes nothing is not written (no new resourceVersion).
  out.SetResourceVersion(current->resource_version());
  if (json::JsonDeepEqual(out.json(), cur)) {
    return Mutation::Keep();
  }
  // Nor is one that changes nothing but the managers' timestamps
  // (kube-apiserver's IgnoreManagedFieldsTimestampsTransformer).
  const Value* old_meta = Member(cur, "metadata");
  const Value* old_fields =
      old_meta != nullptr ? Member(*old_meta, "managedFields") : nullptr;
  const Value* new_fields = out.Find("/metadata/managedFields");
  if (old_fields != nullptr && new_fields != nullptr &&
      SameManagedFieldsButTimes(*old_fields, *new_fields)) {
    Value fresh(*new_fields, out.allocator());
    (void)out.Set("/metadata/managedFields", *old_fields);
    if (json::JsonDeepEqual(out.json(), cur)) return Mutation::Keep();
    (void)out.Set("/metadata/managedFields", fresh);
  }
  if (current->being_deleted() && Finalizers(out).empty() &&
      (!IsNamespaceResource(r) || NamespaceSpecFinalizers(out).empty())) {
    return Mutation::Remove();
  }
  return Mutation::Put(std::move(out));
}

absl::StatusOr<WriteResult> Registry::Update(const ResourceInfo& r,
                                             std::string_view ns,
                                             std::string_view name,
                                             api::ObjectBuilder object,
                                             const WriteOptions& options) {
  std::string body_name = StringAt(object, "/metadata/name");
  if (body_name != name) {
    return ApiError::BadRequest(Cat("the name of the object (", body_name,
                                    ") does not match the name on the URL (",
                                    name, ")"))
        .ToStatus();
  }
  std::string body_ns = StringAt(object, "/metadata/namespace");
  if (r.namespaced()) {
    if (body_ns.empty()) {
      object.SetNamespace(ns);
    } else if (body_ns != ns) {
      return ApiError::BadRequest(
                 "the namespace of the provided object does not match the "
                 "namespace sent on the request")
          .ToStatus();
    }
  }
  std::vector<std::string> warnings;
  KCR_RETURN_IF_ERROR(CheckUnknownFields(r, object.json(),
                                         options.field_validation, &warnings));
  std::string obj_ns = r.namespaced() ? std::string(ns) : "";
  const api::ObjectBuilder& proto = object;
  auto result = RunWrite(
      storage_, r.StorageKey(), obj_ns, name, options.dry_run,
      [&](const api::ObjectPtr& cur) -> absl::StatusOr<Mutation> {
        KCR_ASSIGN_OR_RETURN(api::ObjectPtr copy, proto.Build());
        const WriteManager manager{options.field_manager, options.user_agent,
                                   options.subresource, false};
        return UpdateLocked(r, cur, copy->ToBuilder(), options.subresource,
                            false, &manager);
      });
  if (!result.ok()) return result.status();
  if (!options.dry_run) AfterWrite(r, *result);
  WriteResult out;
  out.warnings = warnings;
  out.object = AtVersion(result->object, r);
  return out;
}

absl::StatusOr<WriteResult> Registry::Patch(
    const ResourceInfo& r, std::string_view ns, std::string_view name,
    PatchType type, std::string_view patch, const PatchOptions& options) {
  // The one place patch content types are dispatched.
  static constexpr char kAccepted[] =
      "the body of the request was in an unknown format - accepted media "
      "types include: application/json-patch+json, "
      "application/merge-patch+json, application/apply-patch+yaml";
  if (type == PatchType::kStrategicMerge &&
      (r.custom || !options_.patch_handlers.strategic_merge)) {
    std::string msg =
        r.custom ? kAccepted
                 : "the body of the request was in an unknown format - "
                   "accepted media types include: "
                   "application/json-patch+json, "
                   "application/merge-patch+json (strategic merge "
                   "patch is not yet supported by this server)";
    return ApiError::UnsupportedMediaType(msg).ToStatus();
  }
  if (type == PatchType::kApply && !options_.patch_handlers.apply) {
    return ApiError::UnsupportedMediaType(
               "the body of the request was in an unknown format - accepted "
               "media types include: application/json-patch+json, "
               "application/merge-patch+json (server-side apply is not yet "
               "supported by this server)")
        .ToStatus();
  }
  std::vector<FieldError> option_errors;
  if (type == PatchType::kApply && options.field_manager.empty()) {
    option_errors.push_back(Err(FieldError::Type::kRequired, "fieldManager", "",
                                "is required for apply patch"));
  }
  if (type != PatchType::kApply && options.force.has_value()) {
    option_errors.push_back(Err(FieldError::Type::kForbidden, "force", "",
                                "may not be specified for non-apply patch"));
  }
  if (!option_errors.empty()) {
    return ApiError::Invalid({"meta.k8s.io", "PatchOptions"}, "", option_errors)
        .ToStatus();
  }
  rapidjson::Document patch_doc;
  KCR_RETURN_IF_ERROR(ParseBody(patch, &patch_doc, type == PatchType::kApply));
  if (type == PatchType::kJson && !patch_doc.IsArray()) {
    return ApiError::BadRequest(
               "json: cannot unmarshal object into Go value of type "
               "jsonpatch.Patch")
        .ToStatus();
  }
  if ((type == PatchType::kApply || type == PatchType::kStrategicMerge) &&
      !patch_doc.IsObject()) {
    return ApiError::BadRequest("the patch is not a JSON object").ToStatus();
  }
  std::vector<std::string> warnings;
  if (type != PatchType::kJson) {
    KCR_RETURN_IF_ERROR(
        CheckUnknownFields(r, patch_doc, options.field_validation, &warnings));
  }
  std::string obj_ns = r.namespaced() ? std::string(ns) : "";
  const std::string sub = options.subresource;
  if (type == PatchType::kApply && sub.empty() &&
      storage_->Get(r.StorageKey(), obj_ns, name) == nullptr) {
    KCR_RETURN_IF_ERROR(CheckNamespace(r, ns, name));
  }
  bool created = false;
  auto result = RunWrite(
      storage_, r.StorageKey(), obj_ns, name, options.dry_run,
      [&](const api::ObjectPtr& cur) -> absl::StatusOr<Mutation> {
        created = false;
        rapidjson::Document patched;
        PatchHandlers::ApplyRequest apply_request{
            options.field_manager, options.force.value_or(false), sub};
        if (cur == nullptr) {
          if (type != PatchType::kApply || !sub.empty()) {
            return ApiError::NotFound(r.group_resource(), name).ToStatus();
          }
          KCR_RETURN_IF_ERROR(options_.patch_handlers.apply(
              r, nullptr, patch_doc, apply_request, &patched));
          if (!patched.IsObject()) {
            return ApiError::BadRequest(
                       "the applied object is not a JSON object")
                .ToStatus();
          }
          api::ObjectBuilder b;
          b.json().CopyFrom(patched, b.allocator());
          std::string pname = StringAt(b, "/metadata/name");
          if (pname.empty()) {
            b.SetName(name);
          } else if (pname != name) {
            return ApiError::BadRequest(
                       Cat("the name of the object (", pname,
                           ") does not match the name on the URL (", name, ")"))
                .ToStatus();
          }
          KCR_RETURN_IF_ERROR(PrepareCreate(r, ns, &b));
          created = true;
          return CreateLocked(r, nullptr, std::move(b));
        }
        // Patch the object as served at the requested version.
        api::ObjectPtr live = AtVersion(cur, r);
        rapidjson::Document live_doc;
        if (sub == "scale") {
          // Storage is locked here: build the Scale from `cur`, not Get.
          if (!r.has_scale()) return ApiError::PathNotFound().ToStatus();
          KCR_ASSIGN_OR_RETURN(api::ObjectPtr scale, ScaleOf(r, live));
          live_doc.CopyFrom(scale->json(), live_doc.GetAllocator());
        } else {
          live_doc.CopyFrom(live->json(), live_doc.GetAllocator());
        }
        absl::Status s;
        switch (type) {
          case PatchType::kMerge: {
            auto m = api::ApplyMergePatch(live_doc, patch_doc);
            if (!m.ok()) return PatchError(ToStd(m.status().message()));
            patched = std::move(*m);
            break;
          }
          case PatchType::kJson: {
            auto m = api::ApplyJsonPatch(live_doc, patch_doc);
            if (!m.ok()) return PatchError(ToStd(m.status().message()));
            patched = std::move(*m);
            break;
          }
          case PatchType::kStrategicMerge:
            s = options_.patch_handlers.strategic_merge(r, live_doc, patch_doc,
                                                        &patched);
            break;
          case PatchType::kApply:
            s = options_.patch_handlers.apply(r, &live_doc, patch_doc,
                                              apply_request, &patched);
            break;
        }
        if (!s.ok()) {
          const std::optional<ApiError> e = api::GetStatusError(s);
          if (!e.has_value() || e->reason.empty()) {
            return PatchError(ToStd(s.message()));
          }
          return s;
        }
        if (!patched.IsObject()) {
          return ApiError::BadRequest("the patched object is not a JSON object")
              .ToStatus();
        }
        if (sub == "scale") {
          const Value* replicas =
              api::ResolveJsonPointer(patched, "/spec/replicas");
          if (replicas == nullptr || !replicas->IsInt64()) {
            return ApiError::BadRequest("spec.replicas must be an integer")
                .ToStatus();
          }
          api::ObjectBuilder b = cur->ToBuilder();
          (void)b.SetInt(r.scale.spec_replicas, replicas->GetInt64());
          const WriteManager manager{options.field_manager, options.user_agent,
                                     "scale", false};
          return UpdateLocked(r, cur, std::move(b), "", true, &manager);
        }
        api::ObjectBuilder b;
        b.json().CopyFrom(patched, b.allocator());
        std::string pname = StringAt(b, "/metadata/name");
        if (pname != name) {
          return ApiError::BadRequest(
                     Cat("the name of the object (", pname,
                         ") does not match the name on the URL (", name, ")"))
              .ToStatus();
        }
        if (StringAt(b, "/metadata/resourceVersion").empty()) {
          b.SetResourceVersion(cur->resource_version());
        }
        const WriteManager manager{options.field_manager, options.user_agent,
                                   sub, type == PatchType::kApply};
        return UpdateLocked(r, cur, std::move(b), sub, true, &manager);
      });
  if (!result.ok()) return result.status();
  if (!options.dry_run) AfterWrite(r, *result);
  WriteResult out;
  out.warnings = warnings;
  out.created = created;
  out.object = AtVersion(result->object, r);
  if (sub == "scale")
    return WriteResult{GetScale(r, ns, name).value_or(out.object), false};
  return out;
}

absl::StatusOr<DeleteResult> Registry::Delete(const ResourceInfo& r,
                                              std::string_view ns,
                                              std::string_view name,
                                              const DeleteOptions& options) {
  if (!options.propagation_policy.empty() &&
      options.propagation_policy != "Background" &&
      options.propagation_policy != "Foreground" &&
      options.propagation_policy != "Orphan") {
    return ApiError::Invalid(
               {"meta.k8s.io", "DeleteOptions"}, "",
               {Err(FieldError::Type::kNotSupported, "propagationPolicy",
                    Quote(options.propagation_policy),
                    "supported values: \"Foreground\", \"Background\", "
                    "\"Orphan\", \"nil\"")})
        .ToStatus();
  }
  if (options.orphan_dependents.has_value() &&
      !options.propagation_policy.empty()) {
    return ApiError::Invalid(
               {"meta.k8s.io", "DeleteOptions"}, "",
               {Err(FieldError::Type::kInvalid, "propagationPolicy",
                    Quote(options.propagation_policy),
                    "orphanDependents and deletionPropagation cannot be both "
                    "set")})
        .ToStatus();
  }
  std::string obj_ns = r.namespaced() ? std::string(ns) : "";
  std::string now = Now();
  auto result = RunWrite(
      storage_, r.StorageKey(), obj_ns, name, options.dry_run,
      [&](const api::ObjectPtr& cur) -> absl::StatusOr<Mutation> {
        if (cur == nullptr) {
          return ApiError::NotFound(r.group_resource(), name).ToStatus();
        }
        if (!options.precondition_uid.empty() &&
            options.precondition_uid != cur->uid()) {
          return ApiError::Conflict(
                     r.group_resource(), name,
                     Cat("Precondition failed: UID in precondition: ",
                         options.precondition_uid,
                         ", UID in object meta: ", cur->uid()))
              .ToStatus();
        }
        if (!options.precondition_resource_version.empty() &&
            options.precondition_resource_version != cur->resource_version()) {
          return ApiError::Conflict(
                     r.group_resource(), name,
                     Cat("Precondition failed: ResourceVersion in "
                         "precondition: ",
                         options.precondition_resource_version,
                         ", ResourceVersion in object meta: ",
                         cur->resource_version()))
              .ToStatus();
        }
        if (cur->being_deleted()) return Mutation::Keep();
        api::ObjectBuilder b = cur->ToBuilder();
        bool orphan = options.propagation_policy == "Orphan" ||
                      options.orphan_dependents.value_or(false);
        if (orphan) b.AddFinalizer(kOrphanFinalizer);
        if (options.propagation_policy == "Foreground") {
          b.AddFinalizer(kForegroundFinalizer);
        }
        bool wait =
            !Finalizers(b).empty() ||
            (IsNamespaceResource(r) && !NamespaceSpecFinalizers(b).empty());
        if (!wait) return Mutation::Remove();
        (void)b.SetString("/metadata/deletionTimestamp", now);
        (void)b.SetInt("/metadata/deletionGracePeriodSeconds", 0);
        if (cur->generation() > 0) b.SetGeneration(cur->generation() + 1);
        if (IsNamespaceResource(r)) {
          (void)b.SetString("/status/phase", "Terminating");
        }
        if (IsCRDResource(r)) {
          SetCRDStatus(&b, Member(cur->json(), "status"), now);
        }
        return Mutation::Put(std::move(b));
      });
  if (!result.ok()) return result.status();
  if (!options.dry_run) AfterWrite(r, *result);
  DeleteResult out;
  out.object = AtVersion(result->object, r);
  out.removed = result->op == Mutation::Op::kRemove;
  return out;
}

absl::StatusOr<ListResult> Registry::DeleteCollection(
    const ResourceInfo& r, std::string_view ns, const ListOptions& list,
    const DeleteOptions& options) {
  ListOptions all = list;
  all.limit = 0;
  all.continue_token.clear();
  KCR_ASSIGN_OR_RETURN(ListResult items, List(r, ns, all));
  ListResult out;
  out.resource_version = items.resource_version;
  for (const api::ObjectPtr& o : items.items) {
    auto d = Delete(r, o->ns(), o->name(), options);
    if (!d.ok()) {
      if (api::IsNotFound(d.status())) continue;
      return d.status();
    }
    out.items.push_back(d->object);
  }
  out.resource_version = Cat(storage_->CurrentResourceVersion());
  return out;
}

namespace {

// The autoscaling/v1 Scale of `o`. Reads no storage, so a write may call it.
absl::StatusOr<api::ObjectPtr> ScaleOf(const ResourceInfo& r,
                                       const api::ObjectPtr& o) {
  api::ObjectBuilder b("autoscaling/v1", "Scale");
  b.SetName(o->name());
  if (!o->ns().empty()) b.SetNamespace(o->ns());
  b.SetUid(o->uid());
  b.SetResourceVersion(o->resource_version());
  (void)b.SetString("/metadata/creationTimestamp", o->creation_timestamp());
  const Value* spec_replicas = o->Find(r.scale.spec_replicas);
  (void)b.SetInt("/spec/replicas",
                 spec_replicas != nullptr && spec_replicas->IsInt64()
                     ? spec_replicas->GetInt64()
                     : 0);
  const Value* status_replicas = o->Find(r.scale.status_replicas);
  (void)b.SetInt("/status/replicas",
                 status_replicas != nullptr && status_replicas->IsInt64()
                     ? status_replicas->GetInt64()
                     : 0);
  std::string selector;
  if (!r.custom) {
    const Value* sel = o->Find("/spec/selector");
    if (sel != nullptr) {
      auto s = api::LabelSelector::FromLabelSelector(*sel);
      if (s.ok()) selector = s->ToString();
    }
  } else if (!r.scale.label_selector.empty()) {
    const Value* sel = o->Find(r.scale.label_selector);
    if (sel != nullptr && sel->IsString()) selector = sel->GetString();
  }
  if (!selector.empty()) (void)b.SetString("/status/selector", selector);
  return b.Build();
}

}  // namespace

absl::StatusOr<api::ObjectPtr> Registry::GetScale(const ResourceInfo& r,
                                                  std::string_view ns,
                                                  std::string_view name) const {
  if (!r.has_scale()) {
    return ApiError::PathNotFound().ToStatus();
  }
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr o, Get(r, ns, name));
  return ScaleOf(r, o);
}

absl::StatusOr<WriteResult> Registry::UpdateScale(const ResourceInfo& r,
                                                  std::string_view ns,
                                                  std::string_view name,
                                                  const rapidjson::Value& scale,
                                                  const WriteOptions& options) {
  if (!r.has_scale()) return ApiError::PathNotFound().ToStatus();
  const Value* replicas = api::ResolveJsonPointer(scale, "/spec/replicas");
  if (replicas == nullptr || !replicas->IsInt64() || replicas->GetInt64() < 0) {
    return ApiError::Invalid({"autoscaling", "Scale"}, name,
                             {Err(FieldError::Type::kInvalid, "spec.replicas",
                                  replicas != nullptr && replicas->IsInt64()
                                      ? Cat(replicas->GetInt64())
                                      : "null",
                                  "must be greater than or equal to 0")})
        .ToStatus();
  }
  const Value* rv = api::ResolveJsonPointer(scale, "/metadata/resourceVersion");
  std::string want_rv = rv != nullptr && rv->IsString() ? rv->GetString() : "";
  int64_t n = replicas->GetInt64();
  std::string obj_ns = r.namespaced() ? std::string(ns) : "";
  auto result = RunWrite(
      storage_, r.StorageKey(), obj_ns, name, options.dry_run,
      [&](const api::ObjectPtr& cur) -> absl::StatusOr<Mutation> {
        if (cur == nullptr) {
          return ApiError::NotFound(r.group_resource(), name).ToStatus();
        }
        if (!want_rv.empty() && want_rv != cur->resource_version()) {
          return ApiError::StaleConflict(r.group_resource(), name).ToStatus();
        }
        api::ObjectBuilder b = cur->ToBuilder();
        (void)b.SetInt(r.scale.spec_replicas, n);
        const WriteManager manager{options.field_manager, options.user_agent,
                                   "scale", false};
        return UpdateLocked(r, cur, std::move(b), "", true, &manager);
      });
  if (!result.ok()) return result.status();
  if (!options.dry_run) AfterWrite(r, *result);
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr s, GetScale(r, ns, name));
  return WriteResult{s, false};
}

void Registry::AfterWrite(const ResourceInfo& r,
                          const Storage::WriteResult& result) {
  if (result.op == Mutation::Op::kKeep || result.object == nullptr) return;
  if (IsCRDResource(r)) {
    const api::ObjectPtr& crd = result.object;
    if (result.op == Mutation::Op::kRemove) {
      resources_->RemoveCRD(crd->name());
      return;
    }
    absl::Status s = resources_->AddCRD(crd->json());
    if (!s.ok()) {
      LOG(WARNING) << "crd not served name=" << crd->name() << ": " << s;
    }
    if (crd->being_deleted() && crd->HasFinalizer(kCrdFinalizer)) {
      CleanUpCRD(crd);
    }
    return;
  }
  if (r.custom && result.op == Mutation::Op::kRemove) {
    api::ObjectPtr crd = storage_->Get(
        "apiextensions.k8s.io/customresourcedefinitions", "", r.crd_name);
    if (crd != nullptr && crd->being_deleted() &&
        crd->HasFinalizer(kCrdFinalizer) &&
        storage_->Count(r.StorageKey()) == 0) {
      CleanUpCRD(crd);
    }
  }
}

void Registry::CleanUpCRD(const api::ObjectPtr& crd) {
  std::vector<ResourceInfoPtr> served;
  for (const ResourceInfoPtr& info : resources_->All()) {
    if (info->custom && info->crd_name == crd->name()) served.push_back(info);
  }
  if (!served.empty()) {
    const ResourceInfo& r = *served.front();
    for (const api::ObjectPtr& o : storage_->Snapshot(r.StorageKey())) {
      auto d = Delete(r, o->ns(), o->name(), {});
      if (!d.ok() && !api::IsNotFound(d.status())) {
        LOG(WARNING) << "crd cleanup crd=" << crd->name()
                     << " object=" << o->Key() << ": " << d.status();
      }
    }
    if (storage_->Count(r.StorageKey()) != 0) return;  // finalizers pending
  }
  ResourceInfoPtr crds = resources_->Lookup("apiextensions.k8s.io", "v1",
                                            "customresourcedefinitions");
  auto result = storage_->Write(
      crds->StorageKey(), "", crd->name(),
      [&](const api::ObjectPtr& cur) -> absl::StatusOr<Mutation> {
        if (cur == nullptr || !cur->HasFinalizer(kCrdFinalizer)) {
          return Mutation::Keep();
        }
        api::ObjectBuilder b = cur->ToBuilder();
        b.RemoveFinalizer(kCrdFinalizer);
        return UpdateLocked(*crds, cur, std::move(b), "", true);
      });
  if (!result.ok()) {
    LOG(WARNING) << "crd cleanup crd=" << crd->name() << ": "
                 << result.status();
    return;
  }
  if (result->op == Mutation::Op::kRemove) {
    resources_->RemoveCRD(crd->name());
  }
}

}  // namespace apiserver
}  // namespace kcr
