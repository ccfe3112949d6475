#include "runtime/client/request.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/json/json_util.h"
#include "api/meta/api_path.h"
#include "base/status_macros.h"
#include "base/string_view.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "runtime/client/list_decoder.h"

namespace kcr::client {
namespace {

using Query = std::vector<std::pair<std::string, std::string>>;

// What client-go's metadata client accepts (less protobuf): the object as
// meta.k8s.io/v1 PartialObjectMetadata(List), else plain JSON from a server
// that cannot convert.
constexpr char kAcceptMetadata[] =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,"
    "application/json";
constexpr char kAcceptMetadataList[] =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
    "application/json";

// Percent-encodes a query component (everything but RFC 3986 unreserved).
std::string EscapeQuery(std::string_view s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' ||
        c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

void AddListQuery(const ListOptions& o, Query* q) {
  if (!o.label_selector.empty())
    q->emplace_back("labelSelector", o.label_selector);
  if (!o.field_selector.empty())
    q->emplace_back("fieldSelector", o.field_selector);
  if (!o.shard_selector.empty())
    q->emplace_back("shardSelector", o.shard_selector);
  if (o.limit > 0) q->emplace_back("limit", absl::StrCat(o.limit));
  if (!o.continue_token.empty()) q->emplace_back("continue", o.continue_token);
  if (!o.resource_version.empty())
    q->emplace_back("resourceVersion", o.resource_version);
  if (!o.resource_version_match.empty()) {
    q->emplace_back("resourceVersionMatch", o.resource_version_match);
  }
  if (o.timeout_seconds.has_value()) {
    q->emplace_back("timeoutSeconds", absl::StrCat(*o.timeout_seconds));
  }
}

// dryRun and fieldManager, which every write takes.
void AddWriteQuery(bool dry_run, const std::string& field_manager, Query* q) {
  if (dry_run) q->emplace_back("dryRun", "All");
  if (!field_manager.empty()) q->emplace_back("fieldManager", field_manager);
}

std::string DeleteOptionsJson(const DeleteOptions& o) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("kind");
  w.String("DeleteOptions");
  w.Key("apiVersion");
  w.String("v1");
  if (o.grace_period_seconds.has_value()) {
    w.Key("gracePeriodSeconds");
    w.Int64(*o.grace_period_seconds);
  }
  if (o.preconditions.uid.has_value() ||
      o.preconditions.resource_version.has_value()) {
    w.Key("preconditions");
    w.StartObject();
    if (o.preconditions.uid.has_value()) {
      w.Key("uid");
      w.String(*o.preconditions.uid);
    }
    if (o.preconditions.resource_version.has_value()) {
      w.Key("resourceVersion");
      w.String(*o.preconditions.resource_version);
    }
    w.EndObject();
  }
  if (!o.propagation_policy.empty()) {
    w.Key("propagationPolicy");
    w.String(o.propagation_policy);
  }
  if (o.dry_run) {
    w.Key("dryRun");
    w.StartArray();
    w.String("All");
    w.EndArray();
  }
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

// The namespace a request on `resource` addresses ("" for cluster-scoped
// resources and all namespaces): the resource's, else the object's.
absl::StatusOr<std::string> NamespaceFor(const Resource& resource,
                                         const api::Object* object) {
  if (!resource.namespaced) return std::string();
  if (!resource.namespace_.empty()) {
    if (object != nullptr && !object->namespace_().empty() &&
        object->namespace_() != resource.namespace_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the namespace of the object (", ToAbsl(object->namespace_()),
          ") does not match the namespace of the request (",
          resource.namespace_, ")"));
    }
    return resource.namespace_;
  }
  if (object != nullptr) return std::string(object->namespace_());
  return std::string();
}

absl::StatusOr<std::string> CollectionPathOf(const Resource& resource) {
  return api::CollectionPath(resource.gvr, resource.namespaced,
                             resource.namespaced ? resource.namespace_ : "");
}

}  // namespace

std::string Request::Target() const {
  std::string out = path;
  char sep = '?';
  for (const auto& [k, v] : query) {
    out += sep;
    out += EscapeQuery(k);
    out += '=';
    out += EscapeQuery(v);
    sep = '&';
  }
  return out;
}

absl::StatusOr<Request> GetRequest(const Resource& resource,
                                   std::string_view name,
                                   const GetOptions& options) {
  KCR_ASSIGN_OR_RETURN(std::string ns, NamespaceFor(resource, nullptr));
  Request r{"GET"};
  KCR_ASSIGN_OR_RETURN(
      r.path, api::ItemPath(resource.gvr, resource.namespaced, ns, name));
  if (!options.resource_version.empty()) {
    r.query.emplace_back("resourceVersion", options.resource_version);
  }
  if (options.metadata_only) r.accept = kAcceptMetadata;
  r.idempotent = true;
  return r;
}

absl::StatusOr<Request> ListRequest(const Resource& resource,
                                    const ListOptions& options) {
  Request r{"GET"};
  KCR_ASSIGN_OR_RETURN(r.path, CollectionPathOf(resource));
  AddListQuery(options, &r.query);
  if (options.metadata_only) r.accept = kAcceptMetadataList;
  r.idempotent = true;
  r.stream_body = true;
  return r;
}

absl::StatusOr<Request> WatchRequest(const Resource& resource,
                                     const ListOptions& options) {
  Request r{"GET"};
  KCR_ASSIGN_OR_RETURN(r.path, CollectionPathOf(resource));
  r.query.emplace_back("watch", "true");
  AddListQuery(options, &r.query);
  if (options.allow_watch_bookmarks)
    r.query.emplace_back("allowWatchBookmarks", "true");
  if (options.send_initial_events)
    r.query.emplace_back("sendInitialEvents", "true");
  if (options.metadata_only) r.accept = kAcceptMetadata;
  r.idempotent = true;
  r.watch = true;
  if (options.timeout_seconds.has_value()) {
    r.watch_timeout =
        absl::Seconds(*options.timeout_seconds) + absl::Minutes(1);
  }
  return r;
}

absl::StatusOr<Request> CreateRequest(const Resource& resource,
                                      const api::Object& object,
                                      const CreateOptions& options) {
  KCR_ASSIGN_OR_RETURN(std::string ns, NamespaceFor(resource, &object));
  if (resource.namespaced && ns.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("create ", resource.gvr.resource, ": no namespace"));
  }
  Request r{"POST"};
  KCR_ASSIGN_OR_RETURN(
      r.path, api::CollectionPath(resource.gvr, resource.namespaced, ns));
  AddWriteQuery(options.dry_run, options.field_manager, &r.query);
  r.body = object.ToJson();
  r.content_type = "application/json";
  return r;
}

absl::StatusOr<Request> UpdateRequest(const Resource& resource,
                                      const api::Object& object,
                                      const UpdateOptions& options,
                                      std::string_view subresource) {
  KCR_ASSIGN_OR_RETURN(std::string ns, NamespaceFor(resource, &object));
  Request r{"PUT"};
  KCR_ASSIGN_OR_RETURN(r.path, api::ItemPath(resource.gvr, resource.namespaced,
                                             ns, object.name(), subresource));
  AddWriteQuery(options.dry_run, options.field_manager, &r.query);
  r.body = object.ToJson();
  r.content_type = "application/json";
  r.idempotent = true;
  return r;
}

absl::StatusOr<Request> PatchRequest(const Resource& resource,
                                     std::string_view name, PatchType type,
                                     std::string_view patch,
                                     const PatchOptions& options,
                                     std::string_view subresource) {
  if (type == PatchType::kApply && options.field_manager.empty()) {
    return absl::InvalidArgumentError("apply patch needs a field manager");
  }
  if (type != PatchType::kApply && options.force) {
    return absl::InvalidArgumentError("force is only valid for apply patches");
  }
  KCR_ASSIGN_OR_RETURN(std::string ns, NamespaceFor(resource, nullptr));
  Request r{"PATCH"};
  KCR_ASSIGN_OR_RETURN(r.path, api::ItemPath(resource.gvr, resource.namespaced,
                                             ns, name, subresource));
  AddWriteQuery(options.dry_run, options.field_manager, &r.query);
  if (options.force) r.query.emplace_back("force", "true");
  r.body = std::string(patch);
  r.content_type = std::string(api::ContentType(type));
  return r;
}

absl::StatusOr<Request> DeleteRequest(const Resource& resource,
                                      std::string_view name,
                                      const DeleteOptions& options) {
  KCR_ASSIGN_OR_RETURN(std::string ns, NamespaceFor(resource, nullptr));
  Request r{"DELETE"};
  KCR_ASSIGN_OR_RETURN(
      r.path, api::ItemPath(resource.gvr, resource.namespaced, ns, name));
  r.body = DeleteOptionsJson(options);
  r.content_type = "application/json";
  r.idempotent = true;
  return r;
}

absl::StatusOr<Request> DeleteCollectionRequest(
    const Resource& resource, const DeleteOptions& options,
    const ListOptions& list_options) {
  Request r{"DELETE"};
  KCR_ASSIGN_OR_RETURN(r.path, CollectionPathOf(resource));
  AddListQuery(list_options, &r.query);
  r.body = DeleteOptionsJson(options);
  r.content_type = "application/json";
  r.idempotent = true;
  return r;
}

absl::StatusOr<Request> GetRawRequest(std::string_view path) {
  if (path.empty() || path[0] != '/') {
    return absl::InvalidArgumentError("GetRaw: the path must start with '/'");
  }
  Request r{"GET"};
  r.path = std::string(path);
  r.idempotent = true;
  return r;
}

absl::StatusOr<api::ObjectPtr> DecodeObject(
    const std::string& body, const api::ParseOptions& parse_options) {
  auto obj = api::Object::Parse(body, parse_options);
  if (!obj.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "response is not a Kubernetes object: ", obj.status().message()));
  }
  return obj;
}

absl::StatusOr<ObjectList> DecodeList(std::string_view body,
                                      const api::ParseOptions& parse_options) {
  ObjectList list;
  ListDecoder decoder(ListDecoderOptions{.parse_options = parse_options},
                      [&list](api::ObjectPtr item) {
                        list.items.push_back(std::move(item));
                        return absl::OkStatus();
                      });
  KCR_RETURN_IF_ERROR(decoder.Feed(body));
  KCR_RETURN_IF_ERROR(decoder.Finish());
  const ListMeta& meta = decoder.meta();
  list.api_version = meta.api_version;
  list.kind = meta.kind;
  list.resource_version = meta.resource_version;
  list.continue_token = meta.continue_token;
  list.remaining_item_count = meta.remaining_item_count;
  return list;
}

}  // namespace kcr::client
