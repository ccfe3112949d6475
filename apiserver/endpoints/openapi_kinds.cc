// The kinds of openapi_kinds.h: a CRD's served versions, and the built-in
// resources with their Go types written as OpenAPI v3 schemas.
#include "apiserver/endpoints/openapi_kinds.h"

#include <utility>

#include "api/json/json_util.h"
#include "api/types/field.h"
#include "apiserver/registry/builtin_schema.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;
using api::field::Str;

constexpr char kRefPrefix[] = "#/components/schemas/";

Value Ref(std::string_view name, Allocator& a) {
  Value ref(rapidjson::kObjectType);
  ref.AddMember("$ref", Str(Cat(kRefPrefix, name), a), a);
  return ref;
}

// The schema of a value of type `t`: structs and the apimachinery types
// with their own definitions by reference, as kube-openapi writes them.
Value GoTypeSchema(const GoType& t, Allocator& a) {
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
      return Ref(kQuantityDefinition, a);
    case Kind::kIntOrString:
      return Ref(kIntOrStringDefinition, a);
    case Kind::kTime:
      return Ref(
          t.name == "v1.MicroTime" ? kMicroTimeDefinition : kTimeDefinition, a);
    case Kind::kAny:
      type("object");
      break;
    case Kind::kStruct:
      if (t.openapi_name[0] != '\0') return Ref(t.openapi_name, a);
      type("object");
      break;
    case Kind::kMap:
      type("object");
      if (t.elem != nullptr) {
        s.AddMember("additionalProperties", GoTypeSchema(*t.elem, a), a);
      }
      break;
    case Kind::kSlice:
      type("array");
      s.AddMember("items",
                  t.elem != nullptr ? GoTypeSchema(*t.elem, a)
                                    : Value(rapidjson::kObjectType),
                  a);
      break;
  }
  return s;
}

// A member's schema with its description: a reference is wrapped in allOf
// (a $ref cannot have siblings in OpenAPI 3.0).
Value FieldSchema(const GoField& f, Allocator& a) {
  Value s = GoTypeSchema(*f.type, a);
  if (s.HasMember("$ref")) {
    Value all_of(rapidjson::kArrayType);
    all_of.PushBack(std::move(s), a);
    s = Value(rapidjson::kObjectType);
    s.AddMember("allOf", std::move(all_of), a);
  }
  if (f.description[0] != '\0') {
    s.AddMember("description", rapidjson::StringRef(f.description), a);
  }
  return s;
}

}  // namespace

Value GoStructSchema(const GoType& t, Allocator& a) {
  Value s(rapidjson::kObjectType);
  if (t.description[0] != '\0') {
    s.AddMember("description", rapidjson::StringRef(t.description), a);
  }
  s.AddMember("type", "object", a);
  Value required(rapidjson::kArrayType);
  Value props(rapidjson::kObjectType);
  for (const GoField& f : t.fields) {
    if (f.required) required.PushBack(Str(f.name, a), a);
    props.AddMember(Str(f.name, a), FieldSchema(f, a), a);
  }
  if (!required.Empty()) s.AddMember("required", std::move(required), a);
  if (!props.ObjectEmpty()) s.AddMember("properties", std::move(props), a);
  return s;
}

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
    if (const GoType* t = BuiltinKindType(k.group, k.version, k.kind);
        t != nullptr) {
      auto doc = std::make_shared<rapidjson::Document>();
      doc->SetObject();
      Value schema = GoStructSchema(*t, doc->GetAllocator());
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
