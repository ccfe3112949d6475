// The Swagger 2.0 document of openapi_v2.h.
#include "apiserver/endpoints/openapi_v2.h"

#include <utility>

#include "api/types/field.h"
#include "apiserver/endpoints/openapi_schemas.h"
#include "base/str_cat.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace {

using api::field::Str;
using openapi_internal::AddReferencedCommonSchemas;
using openapi_internal::Allocator;
using openapi_internal::HasPrefix;
using openapi_internal::KindSchema;
using openapi_internal::kRefPrefixV3;
using openapi_internal::ListSchema;
using openapi_internal::SchemaName;
using openapi_internal::Set;
using openapi_internal::ToJson;
using rapidjson::Value;

constexpr char kRefPrefixV2[] = "#/definitions/";

// Swagger 2.0 form of a v3 schema: references under #/definitions/, a
// described reference as a plain $ref with its description, and the
// keywords 2.0 lacks (nullable, anyOf, oneOf, not) dropped, as
// kube-apiserver's v2 conversion of CRD schemas does.
void ToSwaggerV2(Value* v, Allocator& a) {
  if (v->IsArray()) {
    for (Value& e : v->GetArray()) ToSwaggerV2(&e, a);
    return;
  }
  if (!v->IsObject()) return;
  for (const char* drop : {"nullable", "anyOf", "oneOf", "not"}) {
    v->RemoveMember(drop);
  }
  auto all_of = v->FindMember("allOf");
  if (all_of != v->MemberEnd() && all_of->value.IsArray() &&
      all_of->value.Size() == 1 && all_of->value[0].IsObject() &&
      all_of->value[0].HasMember("$ref")) {
    Value ref;
    ref.CopyFrom(all_of->value[0]["$ref"], a);
    v->RemoveMember("allOf");
    v->RemoveMember("default");
    Set(v, "$ref", std::move(ref), a);
  }
  for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it) {
    if (std::string_view(it->name.GetString()) == "$ref" &&
        it->value.IsString()) {
      std::string_view ref(it->value.GetString(), it->value.GetStringLength());
      if (HasPrefix(ref, kRefPrefixV3)) {
        it->value =
            Str(Cat(kRefPrefixV2, ref.substr(sizeof(kRefPrefixV3) - 1)), a);
      }
      continue;
    }
    ToSwaggerV2(&it->value, a);
  }
}

}  // namespace

std::string BuildSwaggerV2Document(const std::vector<OpenApiKind>& apis,
                                   std::string_view version) {
  rapidjson::Document doc(rapidjson::kObjectType);
  Allocator& a = doc.GetAllocator();
  Value schemas(rapidjson::kObjectType);
  for (const OpenApiKind& api : apis) {
    Set(&schemas, SchemaName(api, api.kind), KindSchema(api, a), a);
    Set(&schemas, SchemaName(api, api.list_kind), ListSchema(api, a), a);
  }
  AddReferencedCommonSchemas(Value(rapidjson::kObjectType), &schemas, a);
  ToSwaggerV2(&schemas, a);
  doc.AddMember("swagger", "2.0", a);
  Value info(rapidjson::kObjectType);
  info.AddMember("title", "Kubernetes", a);
  info.AddMember("version", Str(version, a), a);
  doc.AddMember("info", std::move(info), a);
  doc.AddMember("paths", Value(rapidjson::kObjectType), a);
  doc.AddMember("definitions", std::move(schemas), a);
  return ToJson(doc);
}

}  // namespace apiserver
}  // namespace kcr
