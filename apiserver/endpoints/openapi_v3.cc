// The v3 documents of openapi_v3.h: per group-version, the paths of its
// kinds, their schemas and what those refer to, and the BearerToken
// security scheme.
#include "apiserver/endpoints/openapi_v3.h"

#include <utility>

#include "api/types/field.h"
#include "apiserver/endpoints/openapi_paths.h"
#include "apiserver/endpoints/openapi_schemas.h"
#include "base/str_cat.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace {

using api::field::Str;
using openapi_internal::AddPaths;
using openapi_internal::AddReferencedCommonSchemas;
using openapi_internal::Allocator;
using openapi_internal::GroupVersionPath;
using openapi_internal::KindSchema;
using openapi_internal::ListSchema;
using openapi_internal::SchemaName;
using openapi_internal::Set;
using openapi_internal::ToJson;
using rapidjson::Value;

}  // namespace

std::map<std::string, std::string> BuildOpenApiV3Documents(
    const std::vector<OpenApiKind>& apis) {
  std::map<std::string, std::vector<const OpenApiKind*>> by_gv;
  for (const OpenApiKind& api : apis) {
    by_gv[GroupVersionPath(api).substr(1)].push_back(&api);
  }
  std::map<std::string, std::string> out;
  for (const auto& [gv, members] : by_gv) {
    rapidjson::Document doc(rapidjson::kObjectType);
    Allocator& a = doc.GetAllocator();
    doc.AddMember("openapi", "3.0.0", a);
    Value info(rapidjson::kObjectType);
    info.AddMember("title",
                   rapidjson::StringRef(members.front()->builtin
                                            ? "Kubernetes"
                                            : "Kubernetes CRD Swagger"),
                   a);
    info.AddMember("version", "v0.1.0", a);
    doc.AddMember("info", std::move(info), a);
    Value paths(rapidjson::kObjectType);
    Value schemas(rapidjson::kObjectType);
    for (const OpenApiKind* api : members) {
      AddPaths(*api, &paths, a);
      Set(&schemas, SchemaName(*api, api->kind), KindSchema(*api, a), a);
      Set(&schemas, SchemaName(*api, api->list_kind), ListSchema(*api, a), a);
    }
    AddReferencedCommonSchemas(paths, &schemas, a);
    doc.AddMember("paths", std::move(paths), a);
    Value components(rapidjson::kObjectType);
    components.AddMember("schemas", std::move(schemas), a);
    Value security_schemes(rapidjson::kObjectType);
    Value bearer(rapidjson::kObjectType);
    bearer.AddMember("type", "apiKey", a);
    bearer.AddMember("description", "Bearer Token authentication", a);
    bearer.AddMember("name", "authorization", a);
    bearer.AddMember("in", "header", a);
    security_schemes.AddMember("BearerToken", std::move(bearer), a);
    components.AddMember("securitySchemes", std::move(security_schemes), a);
    doc.AddMember("components", std::move(components), a);
    Value security(rapidjson::kArrayType);
    Value requirement(rapidjson::kObjectType);
    requirement.AddMember("BearerToken", Value(rapidjson::kArrayType), a);
    security.PushBack(std::move(requirement), a);
    doc.AddMember("security", std::move(security), a);
    out[gv] = ToJson(doc);
  }
  return out;
}

std::string OpenApiV3IndexJson(
    const std::map<std::string, std::string>& hash_by_group_version) {
  rapidjson::Document doc(rapidjson::kObjectType);
  Allocator& a = doc.GetAllocator();
  Value paths(rapidjson::kObjectType);
  for (const auto& [gv, hash] : hash_by_group_version) {
    Value entry(rapidjson::kObjectType);
    entry.AddMember("serverRelativeURL",
                    Str(Cat("/openapi/v3/", gv, "?hash=", hash), a), a);
    paths.AddMember(Str(gv, a), std::move(entry), a);
  }
  doc.AddMember("paths", std::move(paths), a);
  return ToJson(doc);
}

}  // namespace apiserver
}  // namespace kcr
