// The REST paths and operations of openapi_paths.h.
#include "apiserver/endpoints/openapi_paths.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "api/types/field.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace openapi_internal {
namespace {

using api::field::Str;
using rapidjson::Value;

// The query parameters of the operations, kube-apiserver's names and types.
struct QueryParameter {
  const char* name;
  const char* type;  // "string", "integer", "boolean"
  const char* description;
};

constexpr QueryParameter kParameters[] = {
    {"allowWatchBookmarks", "boolean",
     "allowWatchBookmarks requests watch events with type \"BOOKMARK\"."},
    {"continue", "string",
     "The continue option should be set when retrieving more results from "
     "the server, with the value of the previous page's metadata.continue."},
    {"dryRun", "string",
     "When present, indicates that modifications should not be persisted. "
     "The only valid value is All."},
    {"fieldManager", "string",
     "fieldManager is a name associated with the actor or entity that is "
     "making these changes."},
    {"fieldSelector", "string",
     "A selector to restrict the list of returned objects by their fields. "
     "Defaults to everything."},
    {"fieldValidation", "string",
     "fieldValidation instructs the server on how to handle objects in the "
     "request containing unknown or duplicate fields: Ignore, Warn or "
     "Strict."},
    {"force", "boolean",
     "Force is going to \"force\" Apply requests: it re-acquires fields "
     "owned by other people. Must be unset for non-apply patch requests."},
    {"gracePeriodSeconds", "integer",
     "The duration in seconds before the object should be deleted."},
    {"labelSelector", "string",
     "A selector to restrict the list of returned objects by their labels. "
     "Defaults to everything."},
    {"limit", "integer",
     "limit is a maximum number of responses to return for a list call."},
    {"orphanDependents", "boolean", "Deprecated: use propagationPolicy."},
    {"propagationPolicy", "string",
     "Whether and how garbage collection will be performed: Orphan, "
     "Background or Foreground."},
    {"resourceVersion", "string",
     "resourceVersion sets a constraint on what resource versions a request "
     "may be served from."},
    {"resourceVersionMatch", "string",
     "resourceVersionMatch determines how resourceVersion is applied to list "
     "calls: Exact or NotOlderThan."},
    {"sendInitialEvents", "boolean",
     "sendInitialEvents=true may be set together with watch=true to start "
     "the watch stream with synthetic events of the current state."},
    {"shardSelector", "string",
     "shardSelector restricts the list of returned objects using a CEL-based "
     "shard selector expression: shardRange(object.metadata.uid, "
     "'0x0000000000000000', '0x8000000000000000'), several joined with ||. "
     "Supported paths: object.metadata.uid, object.metadata.namespace; the "
     "bounds are 0x-prefixed 16-digit hex values over the 64-bit FNV-1a "
     "hash space [0x0000000000000000, 0x10000000000000000)."},
    {"timeoutSeconds", "integer",
     "Timeout for the list/watch call, regardless of any activity."},
    {"watch", "boolean",
     "Watch for changes to the described resources and return them as a "
     "stream of add, update, and remove notifications."},
};

const std::vector<const char*> kListParameters = {"allowWatchBookmarks",
                                                  "continue",
                                                  "fieldSelector",
                                                  "labelSelector",
                                                  "limit",
                                                  "resourceVersion",
                                                  "resourceVersionMatch",
                                                  "sendInitialEvents",
                                                  "shardSelector",
                                                  "timeoutSeconds",
                                                  "watch"};
const std::vector<const char*> kWriteParameters = {"dryRun", "fieldManager",
                                                   "fieldValidation"};
const std::vector<const char*> kPatchParameters = {"dryRun", "fieldManager",
                                                   "fieldValidation", "force"};
const std::vector<const char*> kDeleteParameters = {
    "dryRun", "gracePeriodSeconds", "orphanDependents", "propagationPolicy"};

// The group as operation ids spell it: "Core" for the core group, and
// built-in groups without ".k8s.io" (RbacAuthorization).
std::string OperationGroup(const OpenApiKind& api) {
  if (api.group.empty()) return "core";
  std::string_view g = api.group;
  constexpr std::string_view kSuffix = ".k8s.io";
  if (api.builtin && g.size() > kSuffix.size() &&
      g.substr(g.size() - kSuffix.size()) == kSuffix) {
    g.remove_suffix(kSuffix.size());
  }
  return std::string(g);
}

// "example.org", "v1" -> "ExampleOrgV1" (operation ids) and
// "exampleOrg_v1" (tags).
std::string Camel(std::string_view text) {
  std::string out;
  bool upper = true;
  for (char c : text) {
    if (c == '.' || c == '-') {
      upper = true;
      continue;
    }
    out += upper ? absl::ascii_toupper(c) : c;
    upper = false;
  }
  return out;
}

std::string GroupVersionId(const OpenApiKind& api) {
  return Camel(OperationGroup(api)) + Camel(api.version);
}

std::string Tag(const OpenApiKind& api) {
  std::string g = Camel(OperationGroup(api));
  if (!g.empty()) g[0] = absl::ascii_tolower(g[0]);
  return Cat(g, "_", api.version);
}

Value Parameter(std::string_view name, std::string_view in,
                std::string_view type, std::string_view description,
                bool required, Allocator& a) {
  Value p(rapidjson::kObjectType);
  p.AddMember("name", Str(name, a), a);
  p.AddMember("in", Str(in, a), a);
  p.AddMember("description", Str(description, a), a);
  if (required) p.AddMember("required", true, a);
  Value schema(rapidjson::kObjectType);
  schema.AddMember("type", Str(type, a), a);
  schema.AddMember("uniqueItems", true, a);
  p.AddMember("schema", std::move(schema), a);
  return p;
}

Value QueryParameters(const std::vector<const char*>& names, Allocator& a) {
  Value out(rapidjson::kArrayType);
  for (const char* name : names) {
    for (const QueryParameter& q : kParameters) {
      if (std::string_view(q.name) == name) {
        out.PushBack(
            Parameter(q.name, "query", q.type, q.description, false, a), a);
      }
    }
  }
  return out;
}

Value Content(const std::vector<const char*>& types, std::string_view ref,
              Allocator& a) {
  Value content(rapidjson::kObjectType);
  for (const char* t : types) {
    Value media(rapidjson::kObjectType);
    media.AddMember("schema", RefTo(ref, a), a);
    content.AddMember(Str(t, a), std::move(media), a);
  }
  return content;
}

struct OperationSpec {
  const char* method;       // "get", "put", ...
  const char* action;       // x-kubernetes-action
  std::string id;           // operationId
  std::string description;  //
  std::vector<const char*> parameters;
  // Request body: its media types and schema; none when empty.
  std::vector<const char*> body_types;
  std::string body_schema;
  bool body_required = true;
  // Response codes (with the response schema) and the group-version-kind
  // the operation acts on.
  std::vector<const char*> codes;
  std::string response_schema;
  std::string gvk_group, gvk_version, gvk_kind;
};

Value Operation(const OperationSpec& o, std::string_view tag, Allocator& a) {
  Value op(rapidjson::kObjectType);
  Value tags(rapidjson::kArrayType);
  tags.PushBack(Str(tag, a), a);
  op.AddMember("tags", std::move(tags), a);
  op.AddMember("description", Str(o.description, a), a);
  op.AddMember("operationId", Str(o.id, a), a);
  if (!o.parameters.empty()) {
    op.AddMember("parameters", QueryParameters(o.parameters, a), a);
  }
  if (!o.body_types.empty()) {
    Value body(rapidjson::kObjectType);
    body.AddMember("content", Content(o.body_types, o.body_schema, a), a);
    if (o.body_required) body.AddMember("required", true, a);
    op.AddMember("requestBody", std::move(body), a);
  }
  Value responses(rapidjson::kObjectType);
  for (const char* code : o.codes) {
    Value r(rapidjson::kObjectType);
    const std::string_view c(code);
    r.AddMember("description",
                Str(c == "200"   ? "OK"
                    : c == "201" ? "Created"
                                 : "Accepted",
                    a),
                a);
    r.AddMember(
        "content",
        Content({"application/json", "application/yaml"}, o.response_schema, a),
        a);
    responses.AddMember(Str(code, a), std::move(r), a);
  }
  Value unauthorized(rapidjson::kObjectType);
  unauthorized.AddMember("description", "Unauthorized", a);
  responses.AddMember("401", std::move(unauthorized), a);
  op.AddMember("responses", std::move(responses), a);
  op.AddMember("x-kubernetes-action", Str(o.action, a), a);
  Value gvk(rapidjson::kObjectType);
  gvk.AddMember("group", Str(o.gvk_group, a), a);
  gvk.AddMember("kind", Str(o.gvk_kind, a), a);
  gvk.AddMember("version", Str(o.gvk_version, a), a);
  op.AddMember("x-kubernetes-group-version-kind", std::move(gvk), a);
  return op;
}

// A path item: the path's own parameters, then its operations.
Value PathItem(const std::vector<Value*>& parameters,
               std::vector<std::pair<const char*, Value>> operations,
               Allocator& a) {
  Value item(rapidjson::kObjectType);
  for (auto& [method, op] : operations) {
    item.AddMember(Str(method, a), std::move(op), a);
  }
  Value params(rapidjson::kArrayType);
  for (Value* p : parameters) {
    Value copy;
    copy.CopyFrom(*p, a);
    params.PushBack(std::move(copy), a);
  }
  item.AddMember("parameters", std::move(params), a);
  return item;
}

}  // namespace

void AddPaths(const OpenApiKind& api, Value* paths, Allocator& a) {
  const std::string tag = Tag(api);
  const std::string gv = GroupVersionId(api);
  const std::string ns_word = api.namespaced ? "Namespaced" : "";
  const std::string kind_schema = SchemaName(api, api.kind);
  const std::string list_schema = SchemaName(api, api.list_kind);
  const std::string status_schema = Cat(kMeta, "Status");
  const std::string base =
      Cat(GroupVersionPath(api),
          api.namespaced ? "/namespaces/{namespace}/" : "/", api.plural);
  Value name_param = Parameter("name", "path", "string",
                               Cat("name of the ", api.kind), true, a);
  Value ns_param = Parameter(
      "namespace", "path", "string",
      "object name and auth scope, such as for teams and projects", true, a);
  Value pretty_param = Parameter(
      "pretty", "query", "string",
      "If 'true', then the output is pretty printed. Defaults to 'false' "
      "unless the user-agent indicates a browser or command-line HTTP tool "
      "(curl and wget).",
      false, a);
  std::vector<Value*> collection_params = {&pretty_param};
  std::vector<Value*> object_params = {&name_param, &pretty_param};
  if (api.namespaced) {
    collection_params.insert(collection_params.begin(), &ns_param);
    object_params.insert(object_params.begin() + 1, &ns_param);
  }
  auto spec = [&](const char* method, const char* action, std::string id,
                  std::string description) {
    OperationSpec o;
    o.method = method;
    o.action = action;
    o.id = std::move(id);
    o.description = std::move(description);
    o.gvk_group = api.group;
    o.gvk_version = api.version;
    o.gvk_kind = api.kind;
    return o;
  };
  const std::vector<const char*> any_body = {"*/*"};
  const std::vector<const char*> patch_bodies = {
      "application/apply-patch+yaml", "application/json-patch+json",
      "application/merge-patch+json"};

  // The collection: list, create, delete collection.
  {
    OperationSpec list = spec("get", "list", Cat("list", gv, ns_word, api.kind),
                              Cat("list or watch objects of kind ", api.kind));
    list.parameters = kListParameters;
    list.codes = {"200"};
    list.response_schema = list_schema;
    OperationSpec create =
        spec("post", "post", Cat("create", gv, ns_word, api.kind),
             Cat("create ", api.kind));
    create.parameters = kWriteParameters;
    create.body_types = any_body;
    create.body_schema = kind_schema;
    create.codes = {"200", "201", "202"};
    create.response_schema = kind_schema;
    OperationSpec collection =
        spec("delete", "deletecollection",
             Cat("delete", gv, "Collection", ns_word, api.kind),
             Cat("delete collection of ", api.kind));
    collection.parameters = kListParameters;
    collection.parameters.insert(collection.parameters.end(),
                                 kDeleteParameters.begin(),
                                 kDeleteParameters.end());
    collection.body_types = any_body;
    collection.body_schema = Cat(kMeta, "DeleteOptions");
    collection.body_required = false;
    collection.codes = {"200"};
    collection.response_schema = status_schema;
    std::vector<std::pair<const char*, Value>> ops;
    for (OperationSpec* o : {&list, &create, &collection}) {
      ops.emplace_back(o->method, Operation(*o, tag, a));
    }
    Set(paths, base, PathItem(collection_params, std::move(ops), a), a);
  }
  // One object: read, replace, patch, delete.
  {
    OperationSpec read = spec("get", "get", Cat("read", gv, ns_word, api.kind),
                              Cat("read the specified ", api.kind));
    read.codes = {"200"};
    read.response_schema = kind_schema;
    OperationSpec replace =
        spec("put", "put", Cat("replace", gv, ns_word, api.kind),
             Cat("replace the specified ", api.kind));
    replace.parameters = kWriteParameters;
    replace.body_types = any_body;
    replace.body_schema = kind_schema;
    replace.codes = {"200", "201"};
    replace.response_schema = kind_schema;
    OperationSpec patch =
        spec("patch", "patch", Cat("patch", gv, ns_word, api.kind),
             Cat("partially update the specified ", api.kind));
    patch.parameters = kPatchParameters;
    patch.body_types = patch_bodies;
    patch.body_schema = Cat(kMeta, "Patch");
    patch.codes = {"200", "201"};
    patch.response_schema = kind_schema;
    OperationSpec del =
        spec("delete", "delete", Cat("delete", gv, ns_word, api.kind),
             Cat("delete a ", api.kind));
    del.parameters = kDeleteParameters;
    del.body_types = any_body;
    del.body_schema = Cat(kMeta, "DeleteOptions");
    del.body_required = false;
    del.codes = {"200", "202"};
    del.response_schema = status_schema;
    std::vector<std::pair<const char*, Value>> ops;
    for (OperationSpec* o : {&read, &replace, &patch, &del}) {
      ops.emplace_back(o->method, Operation(*o, tag, a));
    }
    Set(paths, base + "/{name}", PathItem(object_params, std::move(ops), a), a);
  }
  // Subresources: read, replace, patch.
  struct Sub {
    bool served;
    const char* name;
    const char* word;
    std::string schema;
    std::string group, version, kind;
  };
  const Sub subs[] = {
      {api.has_status, "status", "Status", kind_schema, api.group, api.version,
       api.kind},
      {api.has_scale, "scale", "Scale", "io.k8s.api.autoscaling.v1.Scale",
       "autoscaling", "v1", "Scale"},
  };
  for (const Sub& sub : subs) {
    if (!sub.served) continue;
    auto sub_spec = [&](const char* method, const char* action,
                        const char* verb, const char* what) {
      OperationSpec o =
          spec(method, action, Cat(verb, gv, ns_word, api.kind, sub.word),
               Cat(what, " ", sub.name, " of the specified ", api.kind));
      o.gvk_group = sub.group;
      o.gvk_version = sub.version;
      o.gvk_kind = sub.kind;
      o.response_schema = sub.schema;
      return o;
    };
    OperationSpec read = sub_spec("get", "get", "read", "read");
    read.codes = {"200"};
    OperationSpec replace = sub_spec("put", "put", "replace", "replace");
    replace.parameters = kWriteParameters;
    replace.body_types = any_body;
    replace.body_schema = sub.schema;
    replace.codes = {"200", "201"};
    OperationSpec patch =
        sub_spec("patch", "patch", "patch", "partially update");
    patch.parameters = kPatchParameters;
    patch.body_types = patch_bodies;
    patch.body_schema = Cat(kMeta, "Patch");
    patch.codes = {"200", "201"};
    std::vector<std::pair<const char*, Value>> ops;
    for (OperationSpec* o : {&read, &replace, &patch}) {
      ops.emplace_back(o->method, Operation(*o, tag, a));
    }
    Set(paths, Cat(base, "/{name}/", sub.name),
        PathItem(object_params, std::move(ops), a), a);
  }
  // Every namespace's objects at once.
  if (api.namespaced) {
    OperationSpec list =
        spec("get", "list", Cat("list", gv, api.kind, "ForAllNamespaces"),
             Cat("list or watch objects of kind ", api.kind));
    list.parameters = kListParameters;
    list.codes = {"200"};
    list.response_schema = list_schema;
    std::vector<std::pair<const char*, Value>> ops;
    ops.emplace_back("get", Operation(list, tag, a));
    Set(paths, Cat(GroupVersionPath(api), "/", api.plural),
        PathItem({&pretty_param}, std::move(ops), a), a);
  }
}

}  // namespace openapi_internal
}  // namespace apiserver
}  // namespace kcr
