#include "apiserver/registry/registry.h"

#include <algorithm>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "api/json/json_util.h"
#include "api/json/yaml_to_json.h"
#include "api/object_builder.h"
#include "api/patch/json_patch.h"
#include "api/patch/merge_patch.h"
#include "api/types/time.h"
#include "apiserver/internal/api_error.h"
#include "apiserver/registry/apps_strategy.h"
#include "apiserver/registry/builtin_schema.h"
#include "apiserver/storage/continue_token.h"
#include "apiserver/registry/core_strategy.h"
#include "apiserver/registry/crd_strategy.h"
#include "apiserver/registry/custom_resource_strategy.h"
#include "apiserver/registry/managed_fields.h"
#include "apiserver/internal/names.h"
#include "apiserver/internal/object_fields.h"
#include "apiserver/registry/object_meta_validation.h"
#include "apiserver/registry/rbac_strategy.h"
#include "apiserver/registry/scale.h"
#include "apiserver/internal/str_util.h"
#include "apiserver/registry/strategy.h"
#include "apiserver/registry/time_fields_strategy.h"
#include "glog/logging.h"
#include "base/status_macros.h"

namespace kcr {
namespace apiserver {
namespace {

using Mutation = Storage::Mutation;
using api::FieldError;
using rapidjson::Value;

constexpr char kOrphanFinalizer[] = "orphan";
constexpr char kForegroundFinalizer[] = "foregroundDeletion";

// The strategy of `r`'s kind; never null.
const Strategy& StrategyFor(const ResourceInfo& r) {
  if (r.custom) return CustomResourceStrategy();
  if (IsCRDResource(r)) return CRDStrategy();
  if (r.group() == "apps" && r.resource() == "deployments") {
    return DeploymentStrategy();
  }
  if (r.group() == "apps" && r.resource() == "replicasets") {
    return ReplicaSetStrategy();
  }
  if (r.group() == "coordination.k8s.io" && r.resource() == "leases") {
    return LeaseStrategy();
  }
  if (r.group() == kRbacGroup) {
    if (r.resource() == "roles") return RoleStrategy();
    if (r.resource() == "clusterroles") return ClusterRoleStrategy();
    if (r.resource() == "rolebindings") return RoleBindingStrategy();
    if (r.resource() == "clusterrolebindings") {
      return ClusterRoleBindingStrategy();
    }
  }
  if (!r.group().empty()) return DefaultStrategy();
  if (r.resource() == "events") return EventStrategy();
  if (r.resource() == "namespaces") return NamespaceStrategy();
  if (r.resource() == "pods") return PodStrategy();
  if (r.resource() == "services") return ServiceStrategy();
  if (r.resource() == "secrets") return SecretStrategy();
  if (r.resource() == "configmaps") return ConfigMapStrategy();
  return DefaultStrategy();
}

// ObjectMeta validation: the kind's name rule and the labels.
void ValidateMeta(const Strategy& strategy, const api::ObjectBuilder& b,
                  std::vector<FieldError>* errors) {
  strategy.ValidateName(StringAt(b, "/metadata/name"), errors);
  ValidateLabels(b, errors);
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

std::string Now(const Clock* clock) { return api::FormatRfc3339(clock->Now()); }

}  // namespace

struct WriteManager {
  std::string field_manager;
  std::string user_agent;
  std::string subresource;
  // An apply: managedFields come with the applied object.
  bool apply = false;
};

namespace {

// 400 unless the body's apiVersion (when set) is the resource's or
// `also_accepted`, and its kind (when set) the resource's.
absl::Status CheckTypeMeta(const ResourceInfo& r, const api::ObjectBuilder& b,
                           std::string_view also_accepted) {
  std::string api_version = StringAt(b, "/apiVersion");
  std::string kind = StringAt(b, "/kind");
  if (!api_version.empty() && api_version != r.api_version() &&
      api_version != also_accepted) {
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
  return absl::OkStatus();
}

// A namespaced object takes the request's namespace; 400 if it names
// another.
absl::Status SetRequestNamespace(std::string_view ns, api::ObjectBuilder* b) {
  std::string body_ns = StringAt(*b, "/metadata/namespace");
  if (body_ns.empty()) {
    b->SetNamespace(ns);
  } else if (body_ns != ns) {
    return ApiError::BadRequest(
               "the namespace of the provided object does not match the "
               "namespace sent on the request")
        .ToStatus();
  }
  return absl::OkStatus();
}

absl::Status NameMismatch(std::string_view body_name,
                          std::string_view url_name) {
  return ApiError::BadRequest(Cat("the name of the object (", body_name,
                                  ") does not match the name on the URL (",
                                  url_name, ")"))
      .ToStatus();
}

bool IsCoreServices(const ResourceInfo& r) {
  return r.group().empty() && r.resource() == "services";
}

absl::Status PatchError(std::string_view message) {
  ApiError e;
  e.code = 422;
  e.reason = "Invalid";
  e.message = std::string(message);
  e.has_details = true;  // NewGenericServerResponse's empty details
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
    : storage_(storage),
      resources_(resources),
      options_(std::move(options)),
      service_allocator_(std::make_unique<ServiceAllocator>()) {
  for (const api::ObjectPtr& s : storage_->Snapshot("/services")) {
    service_allocator_->Observe(nullptr, s.get());
  }
}

std::string Registry::Now() const { return apiserver::Now(options_.clock); }

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
    errors.push_back(FieldErr(FieldError::Type::kForbidden, "sendInitialEvents",
                              "", "sendInitialEvents is forbidden for list"));
  }
  if (!match.empty()) {
    if (match != "Exact" && match != "NotOlderThan") {
      errors.push_back(FieldErr(
          FieldError::Type::kNotSupported, "resourceVersionMatch", Quote(match),
          "supported values: \"Exact\", \"NotOlderThan\", \"\""));
    } else if (rv.empty()) {
      errors.push_back(FieldErr(FieldError::Type::kForbidden,
                                "resourceVersionMatch", "",
                                "resourceVersionMatch is forbidden unless "
                                "resourceVersion is provided"));
    } else if (!options.continue_token.empty()) {
      errors.push_back(
          FieldErr(FieldError::Type::kForbidden, "resourceVersionMatch", "",
                   "resourceVersionMatch is forbidden when continue "
                   "is provided"));
    } else if (match == "Exact" && rv == "0") {
      errors.push_back(
          FieldErr(FieldError::Type::kForbidden, "resourceVersionMatch", "",
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
    if (so.at_resource_version != 0 &&
        so.at_resource_version < storage_->OldestResourceVersion()) {
      // As kube-apiserver: the answer carries a token that goes on from the
      // same key at the latest revision (rv -1), which the message offers.
      ApiError e = ApiError::Expired(
          "The provided continue parameter is too old to display a "
          "consistent list result. You can start a new list without "
          "the continue parameter, or use the continue token in this "
          "response to retrieve the remainder of the results. "
          "Continuing with the provided token results in an "
          "inconsistent list - objects that were created, modified, "
          "or deleted between the time the first chunk was returned "
          "and now may show up in the list.");
      e.continue_token = EncodeContinue(-1, so.start_key);
      return e.ToStatus();
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
  KCR_RETURN_IF_ERROR(CheckTypeMeta(r, *b, r.api_version()));
  b->SetApiVersion(api::GroupVersion(r.group(), r.storage_version).ToString());
  b->SetKind(r.kind());
  if (b->Find("/metadata") == nullptr || !b->Find("/metadata")->IsObject()) {
    (void)b->SetJson("/metadata", "{}");
  }
  if (r.namespaced()) {
    KCR_RETURN_IF_ERROR(SetRequestNamespace(ns, b));
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
    return ApiError::Invalid(
               r.group_kind(), "",
               {FieldErr(FieldError::Type::kRequired, "metadata.name", "",
                         "name or generateName is required")})
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
  const Strategy& strategy = StrategyFor(r);
  strategy.Default(b);
  DropEmptyMaps(r, b);
  strategy.PrepareForCreate(r, b, Now());
  // Validation (the name is checked once it is final, in CreateLocked).
  std::vector<FieldError> errors;
  strategy.Validate(r, b, &errors);
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
    ApiError e =
        ApiError::Forbidden(r.group_resource(), name,
                            Cat("unable to create new content in namespace ",
                                ns, " because it is being terminated"));
    // The cause kube-apiserver's NamespaceLifecycle admission adds, by which
    // clients tell this refusal from an authorization one.
    e.causes.push_back({"NamespaceTerminating",
                        Cat("namespace ", ns, " is being terminated"),
                        "metadata.namespace"});
    return e.ToStatus();
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
  ValidateMeta(StrategyFor(r), b, &errors);
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

// "<Kind> in version "v1" cannot be handled as a <Kind>: <why>", 400.
absl::Status DecodeError(const ResourceInfo& r, std::string_view why) {
  return ApiError::BadRequest(Cat(r.kind(), " in version ", Quote(r.version()),
                                  " cannot be handled as a ", r.kind(), ": ",
                                  why))
      .ToStatus();
}

// A patched built-in object decodes as the kind's Go type: a type error is
// kube-apiserver's 422 on the field "patch"; unknown fields are dropped.
absl::Status DecodePatched(const ResourceInfo& r, rapidjson::Value* patched) {
  const GoType* type =
      r.custom ? nullptr : BuiltinKindType(r.group(), r.kind());
  if (type == nullptr) return absl::OkStatus();
  DecodeReport report = CheckDecode(*type, *patched);
  if (!report.error.empty()) {
    auto text = json::JsonToString(*patched);
    return ApiError::Invalid(
               {}, "",
               {FieldErr(FieldError::Type::kInvalid, "patch",
                         Quote(text.ok() ? *text : ""), report.error)})
        .ToStatus();
  }
  DropUnknownFields(*type, patched);
  return absl::OkStatus();
}

// Drops what decoding a built-in kind's body into its Go type drops.
void DropBuiltinUnknownFields(const ResourceInfo& r, api::ObjectBuilder* b) {
  const GoType* type =
      r.custom ? nullptr : BuiltinKindType(r.group(), r.kind());
  if (type != nullptr) DropUnknownFields(*type, &b->json());
}

}  // namespace

absl::Status Registry::CheckUnknownFields(const ResourceInfo& r,
                                          const rapidjson::Value& object,
                                          const std::string& mode,
                                          std::vector<std::string>* warnings) {
  return CheckFields(r, object, mode, false, warnings);
}

absl::Status Registry::CheckFields(const ResourceInfo& r,
                                   const rapidjson::Value& object,
                                   const std::string& mode, bool patch,
                                   std::vector<std::string>* warnings) {
  if (!object.IsObject()) return absl::OkStatus();
  std::vector<std::string> unknown;
  if (!r.custom) {
    const GoType* type = BuiltinKindType(r.group(), r.kind());
    if (type == nullptr) return absl::OkStatus();
    DecodeReport report = CheckDecode(*type, object, patch);
    // A patch decodes once applied (DecodePatched).
    if (!patch && !report.error.empty()) return DecodeError(r, report.error);
    if (mode == "Ignore") return absl::OkStatus();
    unknown = std::move(report.unknown_fields);
  } else {
    if (r.schema == nullptr || mode == "Ignore") return absl::OkStatus();
    rapidjson::Document pruned;
    pruned.CopyFrom(object, pruned.GetAllocator());
    r.schema->Prune(&pruned, pruned.GetAllocator());
    CollectUnknown(object, pruned, "", 0, &unknown);
  }
  if (unknown.empty()) return absl::OkStatus();
  std::vector<std::string> texts;
  for (const std::string& f : unknown)
    texts.push_back(Cat("unknown field ", Quote(f)));
  if (mode == "Strict") {
    std::string why =
        Cat("strict decoding error: ", absl::StrJoin(texts, ", "));
    // kube-apiserver's patcher answers the strict error alone, its create
    // and update handlers with the decoder's "cannot be handled" prefix.
    if (patch) return ApiError::BadRequest(why).ToStatus();
    return DecodeError(r, why);
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
  DropBuiltinUnknownFields(r, &object);
  KCR_RETURN_IF_ERROR(PrepareCreate(r, ns, &object));
  KCR_RETURN_IF_ERROR(RecordWriteManagedFields(
      r, nullptr, &object.json(), object.allocator(), options.field_manager,
      options.user_agent, "", options_.clock->Now()));
  std::string name = StringAt(object, "/metadata/name");
  std::string prefix = StringAt(object, "/metadata/generateName");
  bool generated = name.empty();
  KCR_RETURN_IF_ERROR(CheckNamespace(r, ns, name));
  // Cluster IP and node ports, given back unless the Service is stored.
  std::optional<ServiceAllocator::Allocation> allocation;
  if (IsCoreServices(r)) {
    KCR_ASSIGN_OR_RETURN(allocation, service_allocator_->Allocate(
                                         r.group_kind(), nullptr, &object));
  }
  auto release = absl::MakeCleanup([&] {
    if (allocation.has_value()) service_allocator_->Release(*allocation);
  });
  for (int attempt = 0;; ++attempt) {
    if (generated) {
      name = GenerateName(prefix);
      object.SetName(name);
      StrategyFor(r).NameGenerated(name, &object);
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
    if (!options.dry_run) {
      std::move(release).Cancel();
      AfterWrite(r, *result);
    }
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
  const Strategy& strategy = StrategyFor(r);
  // Type meta: any served version of the resource is accepted.
  KCR_RETURN_IF_ERROR(CheckTypeMeta(r, b, current->api_version()));
  // Optimistic concurrency.
  std::string rv = StringAt(b, "/metadata/resourceVersion");
  if (rv.empty() || rv == "0") {
    if (!r.allow_unconditional_update && !is_patch) {
      return ApiError::Invalid(r.group_kind(), name,
                               {FieldErr(FieldError::Type::kInvalid,
                                         "metadata.resourceVersion", "0x0",
                                         "must be specified for an update")})
          .ToStatus();
    }
  } else if (rv != current->resource_version()) {
    return ApiError::StaleConflict(r.group_resource(), name).ToStatus();
  }

  api::ObjectBuilder out;
  if (sub == "status") {
    out = current->ToBuilder();
    CopyMember(b.json(), "status", &out);
    strategy.PrepareForStatusUpdate(b.json(), &out);
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
    strategy.PrepareForUpdate(cur, &out);
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
  strategy.Default(&out);
  DropEmptyMaps(r, &out);

  std::vector<FieldError> errors;
  if (current->being_deleted()) {
    std::vector<std::string> old_f,
        new_f = StringsAt(out, "/metadata/finalizers");
    for (auto f : current->finalizers()) old_f.emplace_back(f);
    std::vector<std::string> added;
    for (const std::string& f : new_f) {
      if (std::find(old_f.begin(), old_f.end(), f) == old_f.end()) {
        added.push_back(Quote(f));
      }
    }
    if (!added.empty()) {
      errors.push_back(
          FieldErr(FieldError::Type::kForbidden, "metadata.finalizers", "",
                   Cat("no new finalizers can be added if the object is "
                       "being deleted, found new finalizers []string{",
                       absl::StrJoin(added, ", "), "}")));
    }
  }
  ValidateMeta(strategy, out, &errors);
  strategy.ValidateUpdate(r, cur, &out, Now(), &errors);
  if (!errors.empty()) {
    return ApiError::Invalid(r.group_kind(), name, errors).ToStatus();
  }
  // Status writes never bump the generation (kube's status strategies).
  if (sub != "status" &&
      GenerationChanged(r.generation, r.has_status(), cur, out.json())) {
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
  if (current->being_deleted() &&
      StringsAt(out, "/metadata/finalizers").empty() &&
      !strategy.WaitsForFinalize(out)) {
    return Mutation::Remove();
  }
  if (IsCoreServices(r) && sub.empty()) {
    KCR_RETURN_IF_ERROR(
        service_allocator_->Allocate(r.group_kind(), current.get(), &out)
            .status());
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
    return NameMismatch(body_name, name);
  }
  if (r.namespaced()) KCR_RETURN_IF_ERROR(SetRequestNamespace(ns, &object));
  std::vector<std::string> warnings;
  KCR_RETURN_IF_ERROR(CheckUnknownFields(r, object.json(),
                                         options.field_validation, &warnings));
  DropBuiltinUnknownFields(r, &object);
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
    option_errors.push_back(FieldErr(FieldError::Type::kRequired,
                                     "fieldManager", "",
                                     "is required for apply patch"));
  }
  if (type != PatchType::kApply && options.force.has_value()) {
    option_errors.push_back(
        FieldErr(FieldError::Type::kForbidden, "force", "",
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
    KCR_RETURN_IF_ERROR(CheckFields(r, patch_doc, options.field_validation,
                                    /*patch=*/true, &warnings));
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
          KCR_RETURN_IF_ERROR(DecodePatched(r, &patched));
          api::ObjectBuilder b;
          b.json().CopyFrom(patched, b.allocator());
          std::string pname = StringAt(b, "/metadata/name");
          if (pname.empty()) {
            b.SetName(name);
          } else if (pname != name) {
            return NameMismatch(pname, name);
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
        if (sub != "scale") KCR_RETURN_IF_ERROR(DecodePatched(r, &patched));
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
          return NameMismatch(pname, name);
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
               {FieldErr(FieldError::Type::kNotSupported, "propagationPolicy",
                         Quote(options.propagation_policy),
                         "supported values: \"Foreground\", \"Background\", "
                         "\"Orphan\", \"nil\"")})
        .ToStatus();
  }
  if (options.orphan_dependents.has_value() &&
      !options.propagation_policy.empty()) {
    return ApiError::Invalid(
               {"meta.k8s.io", "DeleteOptions"}, "",
               {FieldErr(
                   FieldError::Type::kInvalid, "propagationPolicy",
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
        const Strategy& strategy = StrategyFor(r);
        bool wait = !StringsAt(b, "/metadata/finalizers").empty() ||
                    strategy.WaitsForFinalize(b);
        if (!wait) return Mutation::Remove();
        (void)b.SetString("/metadata/deletionTimestamp", now);
        (void)b.SetInt("/metadata/deletionGracePeriodSeconds", 0);
        if (cur->generation() > 0) b.SetGeneration(cur->generation() + 1);
        strategy.PrepareForDelete(cur->json(), &b, now);
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
  KCR_ASSIGN_OR_RETURN(const int64_t n, ScaleReplicas(scale, name));
  const Value* rv = api::ResolveJsonPointer(scale, "/metadata/resourceVersion");
  std::string want_rv = rv != nullptr && rv->IsString() ? rv->GetString() : "";
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
  if (IsCoreServices(r)) {
    if (result.op == Mutation::Op::kRemove) {
      service_allocator_->Observe(result.object.get(), nullptr);
    } else {
      service_allocator_->Observe(result.previous.get(), result.object.get());
    }
  }
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
    if (crd->being_deleted() && crd->HasFinalizer(kCrdCleanupFinalizer)) {
      CleanUpCRD(crd);
    }
    return;
  }
  if (r.custom && result.op == Mutation::Op::kRemove) {
    api::ObjectPtr crd = storage_->Get(
        "apiextensions.k8s.io/customresourcedefinitions", "", r.crd_name);
    if (crd != nullptr && crd->being_deleted() &&
        crd->HasFinalizer(kCrdCleanupFinalizer) &&
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
        if (cur == nullptr || !cur->HasFinalizer(kCrdCleanupFinalizer)) {
          return Mutation::Keep();
        }
        api::ObjectBuilder b = cur->ToBuilder();
        b.RemoveFinalizer(kCrdCleanupFinalizer);
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
