// The kinds of openapi_kinds.h: a CRD's served versions, and the built-in
// resources with their Go types written as OpenAPI v3 schemas.
#include "apiserver/endpoints/openapi_kinds.h"

#include <utility>

#include "api/json/json_util.h"
#include "api/types/field.h"
#include "apiserver/registry/builtin_schema.h"

namespace kcr {
namespace apiserver {
namespace {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;
using api::field::Str;

// Nesting bound for Go types written inline (the built-in types nest a
// dozen levels at most; a cycle would stop here).
constexpr int kMaxGoTypeDepth = 32;

Value GoTypeSchema(const GoType& t, int depth, Allocator& a) {
  Value s(rapidjson::kObjectType);
  auto type = [&](const char* name, const char* format = nullptr) {
    s.AddMember("type", rapidjson::StringRef(name), a);
    if (format != nullptr)
      s.AddMember("format", rapidjson::StringRef(format), a);
  };
  using Kind = GoType::Kind;
  switch (t.kind) {
    case Kind::kString:
      type("string");
      break;
    case Kind::kBool:
      type("boolean");
      break;
    case Kind::kInt32:
      type("integer", "int32");
      break;
    case Kind::kInt64:
      type("integer", "int64");
      break;
    case Kind::kFloat64:
      type("number", "double");
      break;
    case Kind::kBytes:
      type("string", "byte");
      break;
    case Kind::kQuantity:
      type("string");
      break;
    case Kind::kIntOrString:
      type("string", "int-or-string");
      break;
    case Kind::kTime:
      type("string", "date-time");
      break;
    case Kind::kAny:
      type("object");
      break;
    case Kind::kStruct: {
      type("object");
      if (t.open || t.fields.empty() || depth >= kMaxGoTypeDepth) break;
      Value props(rapidjson::kObjectType);
      for (const auto& [name, field] : t.fields) {
        props.AddMember(Str(name, a), GoTypeSchema(*field, depth + 1, a), a);
      }
      s.AddMember("properties", std::move(props), a);
      break;
    }
    case Kind::kMap:
      type("object");
      if (t.elem != nullptr && depth < kMaxGoTypeDepth) {
        s.AddMember("additionalProperties", GoTypeSchema(*t.elem, depth + 1, a),
                    a);
      }
      break;
    case Kind::kSlice:
      type("array");
      if (t.elem != nullptr && depth < kMaxGoTypeDepth) {
        s.AddMember("items", GoTypeSchema(*t.elem, depth + 1, a), a);
      } else {
        s.AddMember("items", Value(rapidjson::kObjectType), a);
      }
      break;
  }
  return s;
}

}  // namespace

std::vector<OpenApiKind> CustomResourceKinds(const rapidjson::Value& crd) {
  std::vector<OpenApiKind> out;
  if (!crd.IsObject()) return out;
  auto spec = crd.FindMember("spec");
  if (spec == crd.MemberEnd() || !spec->value.IsObject()) return out;
  const Value& s = spec->value;
  auto names = s.FindMember("names");
  auto versions = s.FindMember("versions");
  if (names == s.MemberEnd() || !names->value.IsObject() ||
      versions == s.MemberEnd() || !versions->value.IsArray()) {
    return out;
  }
  OpenApiKind base;
  base.group = json::StringMember(s, "group");
  base.plural = json::StringMember(names->value, "plural");
  base.kind = json::StringMember(names->value, "kind");
  base.list_kind = json::StringMember(names->value, "listKind");
  if (base.list_kind.empty()) base.list_kind = base.kind + "List";
  base.namespaced = json::StringMember(s, "scope") != "Cluster";
  if (base.group.empty() || base.plural.empty() || base.kind.empty()) {
    return out;
  }
  for (const Value& v : versions->value.GetArray()) {
    if (!v.IsObject()) continue;
    auto served = v.FindMember("served");
    if (served == v.MemberEnd() || !served->value.IsBool() ||
        !served->value.GetBool()) {
      continue;
    }
    OpenApiKind api = base;
    api.version = json::StringMember(v, "name");
    if (api.version.empty()) continue;
    auto sub = v.FindMember("subresources");
    if (sub != v.MemberEnd() && sub->value.IsObject()) {
      api.has_status = sub->value.HasMember("status");
      api.has_scale = sub->value.HasMember("scale");
    }
    auto schema = v.FindMember("schema");
    if (schema != v.MemberEnd() && schema->value.IsObject()) {
      auto open_api = schema->value.FindMember("openAPIV3Schema");
      if (open_api != schema->value.MemberEnd() && open_api->value.IsObject()) {
        api.schema = &open_api->value;
      }
    }
    out.push_back(std::move(api));
  }
  return out;
}

std::vector<OpenApiKind> BuiltinKinds(const ResourceRegistry& resources) {
  std::vector<OpenApiKind> out;
  for (const ResourceInfoPtr& r : resources.All()) {
    if (r->custom) continue;
    OpenApiKind k;
    k.group = r->group();
    k.version = r->version();
    k.plural = r->resource();
    k.kind = r->kind();
    k.list_kind = r->mapping.list_kind;
    k.namespaced = r->namespaced();
    k.has_status = r->has_status();
    k.has_scale = r->has_scale();
    k.builtin = true;
    if (const GoType* t = BuiltinKindType(k.group, k.kind); t != nullptr) {
      auto doc = std::make_shared<rapidjson::Document>();
      doc->SetObject();
      Value schema = GoTypeSchema(*t, 0, doc->GetAllocator());
      static_cast<Value&>(*doc).Swap(schema);
      k.schema = doc.get();
      k.owned_schema = std::move(doc);
    }
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace apiserver
}  // namespace kcr
