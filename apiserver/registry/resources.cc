#include "apiserver/registry/resources.h"

#include <algorithm>
#include <iterator>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "api/json/json_util.h"
#include "apiserver/internal/object_fields.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace {

const std::vector<std::string>& AllVerbs() {
  static const auto* v = new std::vector<std::string>{
      "create", "delete", "deletecollection", "get",
      "list",   "patch",  "update",           "watch"};
  return *v;
}

ResourceInfo Builtin(std::string group, std::string resource, std::string kind,
                     std::string singular, std::vector<std::string> short_names,
                     bool namespaced, std::vector<std::string> subresources,
                     std::string version = "v1") {
  ResourceInfo r;
  r.mapping.resource = {group, version, resource};
  r.mapping.kind = {group, version, kind};
  r.mapping.singular = std::move(singular);
  r.mapping.short_names = std::move(short_names);
  r.mapping.list_kind = kind + "List";
  r.mapping.scope = namespaced ? api::ResourceScope::kNamespaced
                               : api::ResourceScope::kCluster;
  r.mapping.subresources = std::move(subresources);
  r.verbs = AllVerbs();
  r.storage_version = std::move(version);
  return r;
}

// Discovery order of the built-in groups (as kube-apiserver lists them,
// except that apps stays first, ahead of apiregistration.k8s.io, as this
// server has always listed it).
int GroupRank(const std::string& group) {
  static const char* const kOrder[] = {"",
                                       "apps",
                                       "apiregistration.k8s.io",
                                       "events.k8s.io",
                                       "authentication.k8s.io",
                                       "authorization.k8s.io",
                                       "autoscaling",
                                       "batch",
                                       "certificates.k8s.io",
                                       "networking.k8s.io",
                                       "policy",
                                       "rbac.authorization.k8s.io",
                                       "storage.k8s.io",
                                       "admissionregistration.k8s.io",
                                       "scheduling.k8s.io",
                                       "coordination.k8s.io",
                                       "apiextensions.k8s.io",
                                       "node.k8s.io",
                                       "discovery.k8s.io",
                                       "flowcontrol.apiserver.k8s.io"};
  for (int i = 0; i < static_cast<int>(std::size(kOrder)); ++i) {
    if (group == kOrder[i]) return i;
  }
  return 100;
}

bool ResourceOrder(const ResourceInfoPtr& a, const ResourceInfoPtr& b) {
  int ra = GroupRank(a->group()), rb = GroupRank(b->group());
  if (ra != rb) return ra < rb;
  if (a->group() != b->group()) return a->group() < b->group();
  if (a->version() != b->version()) {
    return api::KubeVersionLess(a->version(), b->version());
  }
  return a->resource() < b->resource();
}

std::vector<std::string> StringList(const rapidjson::Value* v) {
  std::vector<std::string> out;
  if (v == nullptr || !v->IsArray()) return out;
  for (const auto& e : v->GetArray()) {
    if (e.IsString()) out.emplace_back(e.GetString(), e.GetStringLength());
  }
  return out;
}

// "/spec/replicas" from ".spec.replicas".
std::string DotPathToPointer(const std::string& path) {
  std::string out;
  for (char c : path) out += (c == '.') ? '/' : c;
  return out;
}

api::FieldError Required(std::string field, std::string detail = "") {
  api::FieldError e;
  e.type = api::FieldError::Type::kRequired;
  e.field = std::move(field);
  e.detail = std::move(detail);
  return e;
}

api::FieldError InvalidValue(std::string field, std::string value,
                             std::string detail) {
  api::FieldError e;
  e.type = api::FieldError::Type::kInvalid;
  e.field = std::move(field);
  e.value = std::move(value);
  e.detail = std::move(detail);
  return e;
}

}  // namespace

bool ResourceInfo::HasVerb(std::string_view verb) const {
  return std::find(verbs.begin(), verbs.end(), verb) != verbs.end();
}

bool ResourceInfo::SupportsFieldLabel(std::string_view label) const {
  if (label == "metadata.name") return true;
  if (label == "metadata.namespace") return true;
  return std::any_of(field_labels.begin(), field_labels.end(),
                     [&](const FieldLabel& f) { return f.label == label; });
}

ResourceRegistry::ResourceRegistry() {
  MutexLock l(&mu_);
  {
    ResourceInfo r = Builtin("", "namespaces", "Namespace", "namespace", {"ns"},
                             false, {"finalize", "status"});
    r.verbs = {"create", "delete", "get", "list", "patch", "update", "watch"};
    r.field_labels = {"status.phase", {"name", "metadata.name", std::nullopt}};
    AddLocked(std::move(r));
  }
  {
    ResourceInfo r =
        Builtin("", "pods", "Pod", "pod", {"po"}, true,
                {"attach", "exec", "log", "portforward", "status"});
    r.categories = {"all"};
    r.return_deleted_object = true;
    r.field_labels = {"spec.nodeName",
                      "spec.restartPolicy",
                      "spec.schedulerName",
                      "spec.serviceAccountName",
                      {"spec.hostNetwork", "", "false"},
                      "status.phase",
                      "status.podIP",
                      "status.nominatedNodeName"};
    AddLocked(std::move(r));
  }
  AddLocked(
      Builtin("", "configmaps", "ConfigMap", "configmap", {"cm"}, true, {}));
  {
    ResourceInfo r = Builtin("", "secrets", "Secret", "secret", {}, true, {});
    r.field_labels = {"type"};
    AddLocked(std::move(r));
  }
  {
    ResourceInfo r = Builtin("", "services", "Service", "service", {"svc"},
                             true, {"status"});
    r.categories = {"all"};
    r.return_deleted_object = true;
    AddLocked(std::move(r));
  }
  AddLocked(
      Builtin("", "endpoints", "Endpoints", "endpoints", {"ep"}, true, {}));
  AddLocked(Builtin("discovery.k8s.io", "endpointslices", "EndpointSlice",
                    "endpointslice", {}, true, {}));
  {
    ResourceInfo r = Builtin("", "serviceaccounts", "ServiceAccount",
                             "serviceaccount", {"sa"}, true, {"token"});
    r.return_deleted_object = true;
    AddLocked(std::move(r));
  }
  {
    ResourceInfo r = Builtin("", "events", "Event", "event", {"ev"}, true, {});
    r.field_labels = {"involvedObject.kind",
                      "involvedObject.namespace",
                      "involvedObject.name",
                      "involvedObject.uid",
                      "involvedObject.apiVersion",
                      "involvedObject.resourceVersion",
                      "involvedObject.fieldPath",
                      "reason",
                      "reportingComponent",
                      {"source", "source.component", std::nullopt},
                      "type"};
    AddLocked(std::move(r));
  }
  {
    ResourceInfo r =
        Builtin("", "nodes", "Node", "node", {"no"}, false, {"status"});
    r.field_labels = {{"spec.unschedulable", "", "false"}};
    AddLocked(std::move(r));
  }
  {
    ResourceInfo r = Builtin("apps", "deployments", "Deployment", "deployment",
                             {"deploy"}, true, {"scale", "status"});
    r.categories = {"all"};
    r.generation = GenerationPolicy::kSpecAndAnnotations;
    r.scale = {"/spec/replicas", "/status/replicas", ""};
    AddLocked(std::move(r));
  }
  {
    ResourceInfo r = Builtin("apps", "replicasets", "ReplicaSet", "replicaset",
                             {"rs"}, true, {"scale", "status"});
    r.categories = {"all"};
    r.generation = GenerationPolicy::kSpec;
    r.scale = {"/spec/replicas", "/status/replicas", ""};
    r.field_labels = {{"status.replicas", "", "0"}};
    AddLocked(std::move(r));
  }
  // Created, never stored: they answer at once (auth/reviews.h).
  for (const auto& [group, kind, namespaced] :
       std::vector<std::tuple<const char*, const char*, bool>>{
           {"authentication.k8s.io", "SelfSubjectReview", false},
           {"authentication.k8s.io", "TokenReview", false},
           {"authorization.k8s.io", "LocalSubjectAccessReview", true},
           {"authorization.k8s.io", "SelfSubjectAccessReview", false},
           {"authorization.k8s.io", "SelfSubjectRulesReview", false},
           {"authorization.k8s.io", "SubjectAccessReview", false}}) {
    const std::string lower = absl::AsciiStrToLower(kind);
    ResourceInfo r =
        Builtin(group, lower + "s", kind, lower, {}, namespaced, {});
    r.verbs = {"create"};
    AddLocked(std::move(r));
  }
  // Stored and served, not enforced (rbac_strategy.h).
  AddLocked(Builtin("rbac.authorization.k8s.io", "roles", "Role", "role", {},
                    true, {}));
  AddLocked(Builtin("rbac.authorization.k8s.io", "rolebindings", "RoleBinding",
                    "rolebinding", {}, true, {}));
  AddLocked(Builtin("rbac.authorization.k8s.io", "clusterroles", "ClusterRole",
                    "clusterrole", {}, false, {}));
  AddLocked(Builtin("rbac.authorization.k8s.io", "clusterrolebindings",
                    "ClusterRoleBinding", "clusterrolebinding", {}, false, {}));
  AddLocked(
      Builtin("coordination.k8s.io", "leases", "Lease", "lease", {}, true, {}));
  {
    ResourceInfo r =
        Builtin("apiextensions.k8s.io", "customresourcedefinitions",
                "CustomResourceDefinition", "customresourcedefinition",
                {"crd", "crds"}, false, {"status"});
    r.categories = {"api-extensions"};
    r.generation = GenerationPolicy::kSpec;
    r.allow_unconditional_update = false;
    AddLocked(std::move(r));
  }
  AddWorkloadAndClusterKindsLocked();
}

// The kinds operators' manifests carry besides the ones above: stored and
// served as kube-apiserver 1.33 serves them (names, scope, subresources,
// categories); their controllers are not simulated.
void ResourceRegistry::AddWorkloadAndClusterKindsLocked() {
  const auto with = [](ResourceInfo r, std::vector<std::string> categories,
                       GenerationPolicy generation) {
    r.categories = std::move(categories);
    r.generation = generation;
    return r;
  };
  const GenerationPolicy kSpec = GenerationPolicy::kSpec;
  const GenerationPolicy kNone = GenerationPolicy::kNone;
  {
    ResourceInfo r = with(
        Builtin("", "replicationcontrollers", "ReplicationController",
                "replicationcontroller", {"rc"}, true, {"scale", "status"}),
        {"all"}, kSpec);
    r.scale = {"/spec/replicas", "/status/replicas", ""};
    r.field_labels = {{"status.replicas", "", "0"}};
    AddLocked(std::move(r));
  }
  {
    ResourceInfo r = Builtin("", "persistentvolumes", "PersistentVolume",
                             "persistentvolume", {"pv"}, false, {"status"});
    // kube keeps this bare "name" for compatibility.
    r.field_labels = {{"name", "metadata.name", std::nullopt}};
    AddLocked(std::move(r));
  }
  {
    ResourceInfo r =
        Builtin("", "persistentvolumeclaims", "PersistentVolumeClaim",
                "persistentvolumeclaim", {"pvc"}, true, {"status"});
    r.field_labels = {{"name", "metadata.name", std::nullopt}};
    AddLocked(std::move(r));
  }
  AddLocked(
      Builtin("", "podtemplates", "PodTemplate", "podtemplate", {}, true, {}));
  AddLocked(Builtin("", "limitranges", "LimitRange", "limitrange", {"limits"},
                    true, {}));
  AddLocked(Builtin("", "resourcequotas", "ResourceQuota", "resourcequota",
                    {"quota"}, true, {"status"}));
  {
    ResourceInfo r =
        with(Builtin("apps", "statefulsets", "StatefulSet", "statefulset",
                     {"sts"}, true, {"scale", "status"}),
             {"all"}, kSpec);
    r.scale = {"/spec/replicas", "/status/replicas", ""};
    AddLocked(std::move(r));
  }
  AddLocked(with(Builtin("apps", "daemonsets", "DaemonSet", "daemonset", {"ds"},
                         true, {"status"}),
                 {"all"}, kSpec));
  AddLocked(Builtin("apps", "controllerrevisions", "ControllerRevision",
                    "controllerrevision", {}, true, {}));
  {
    ResourceInfo r =
        with(Builtin("batch", "jobs", "Job", "job", {}, true, {"status"}),
             {"all"}, kSpec);
    r.field_labels = {{"status.successful", "status.succeeded", "0"}};
    AddLocked(std::move(r));
  }
  AddLocked(with(Builtin("batch", "cronjobs", "CronJob", "cronjob", {"cj"},
                         true, {"status"}),
                 {"all"}, kSpec));
  // autoscaling/v2 and v1 share one collection, stored at v2 as kube
  // stores it; v1 reads and writes convert (hpa_conversion.h).
  for (const char* version : {"v2", "v1"}) {
    ResourceInfo r =
        with(Builtin("autoscaling", "horizontalpodautoscalers",
                     "HorizontalPodAutoscaler", "horizontalpodautoscaler",
                     {"hpa"}, true, {"status"}, version),
             {"all"}, kNone);
    r.storage_version = "v2";
    AddLocked(std::move(r));
  }
  AddLocked(
      with(Builtin("policy", "poddisruptionbudgets", "PodDisruptionBudget",
                   "poddisruptionbudget", {"pdb"}, true, {"status"}),
           {}, kSpec));
  AddLocked(Builtin("networking.k8s.io", "ingresses", "Ingress", "ingress",
                    {"ing"}, true, {"status"}));
  AddLocked(Builtin("networking.k8s.io", "ingressclasses", "IngressClass",
                    "ingressclass", {}, false, {}));
  AddLocked(
      with(Builtin("networking.k8s.io", "networkpolicies", "NetworkPolicy",
                   "networkpolicy", {"netpol"}, true, {}),
           {}, kSpec));
  AddLocked(Builtin("storage.k8s.io", "storageclasses", "StorageClass",
                    "storageclass", {"sc"}, false, {}));
  AddLocked(Builtin("storage.k8s.io", "csidrivers", "CSIDriver", "csidriver",
                    {}, false, {}));
  AddLocked(Builtin("storage.k8s.io", "volumeattachments", "VolumeAttachment",
                    "volumeattachment", {}, false, {"status"}));
  AddLocked(with(Builtin("storage.k8s.io", "csinodes", "CSINode", "csinode", {},
                         false, {}),
                 {}, kSpec));
  AddLocked(Builtin("storage.k8s.io", "csistoragecapacities",
                    "CSIStorageCapacity", "csistoragecapacity", {}, true, {}));
  AddLocked(with(Builtin("networking.k8s.io", "servicecidrs", "ServiceCIDR",
                         "servicecidr", {}, false, {"status"}),
                 {}, kSpec));
  AddLocked(with(Builtin("networking.k8s.io", "ipaddresses", "IPAddress",
                         "ipaddress", {"ip"}, false, {}),
                 {}, kSpec));
  AddLocked(Builtin("node.k8s.io", "runtimeclasses", "RuntimeClass",
                    "runtimeclass", {}, false, {}));
  AddLocked(with(Builtin("flowcontrol.apiserver.k8s.io", "flowschemas",
                         "FlowSchema", "flowschema", {}, false, {"status"}),
                 {}, kSpec));
  AddLocked(
      with(Builtin("flowcontrol.apiserver.k8s.io",
                   "prioritylevelconfigurations", "PriorityLevelConfiguration",
                   "prioritylevelconfiguration", {}, false, {"status"}),
           {}, kSpec));
  AddLocked(Builtin("scheduling.k8s.io", "priorityclasses", "PriorityClass",
                    "priorityclass", {"pc"}, false, {}));
  const std::string kAdmission = "admissionregistration.k8s.io";
  AddLocked(with(Builtin(kAdmission, "validatingwebhookconfigurations",
                         "ValidatingWebhookConfiguration",
                         "validatingwebhookconfiguration", {}, false, {}),
                 {"api-extensions"}, kSpec));
  AddLocked(with(Builtin(kAdmission, "mutatingwebhookconfigurations",
                         "MutatingWebhookConfiguration",
                         "mutatingwebhookconfiguration", {}, false, {}),
                 {"api-extensions"}, kSpec));
  AddLocked(with(Builtin(kAdmission, "validatingadmissionpolicies",
                         "ValidatingAdmissionPolicy",
                         "validatingadmissionpolicy", {}, false, {"status"}),
                 {"api-extensions"}, kSpec));
  AddLocked(with(Builtin(kAdmission, "validatingadmissionpolicybindings",
                         "ValidatingAdmissionPolicyBinding",
                         "validatingadmissionpolicybinding", {}, false, {}),
                 {"api-extensions"}, kSpec));
  AddLocked(with(Builtin("apiregistration.k8s.io", "apiservices", "APIService",
                         "apiservice", {}, false, {"status"}),
                 {"api-extensions"}, kNone));
  // The core Events, served as events.k8s.io/v1 too.
  {
    ResourceInfo r =
        Builtin("events.k8s.io", "events", "Event", "event", {"ev"}, true, {});
    r.stored_in_core_group = true;
    AddLocked(std::move(r));
  }
  {
    ResourceInfo r =
        Builtin("certificates.k8s.io", "certificatesigningrequests",
                "CertificateSigningRequest", "certificatesigningrequest",
                {"csr"}, false, {"approval", "status"});
    r.field_labels = {"spec.signerName"};
    AddLocked(std::move(r));
  }
}

void ResourceRegistry::AddLocked(ResourceInfo info) {
  api::GroupVersionResource gvr = info.gvr();
  by_gvr_[gvr] = std::make_shared<const ResourceInfo>(std::move(info));
}

ResourceInfoPtr ResourceRegistry::Lookup(std::string_view group,
                                         std::string_view version,
                                         std::string_view resource) const {
  MutexLock l(&mu_);
  auto it = by_gvr_.find(api::GroupVersionResource(
      std::string(group), std::string(version), std::string(resource)));
  if (it == by_gvr_.end()) return nullptr;
  return it->second;
}

ResourceInfoPtr ResourceRegistry::LookupKind(
    const api::GroupVersionKind& gvk) const {
  MutexLock l(&mu_);
  for (const auto& [gvr, info] : by_gvr_) {
    if (info->gvk() == gvk) return info;
  }
  return nullptr;
}

std::vector<ResourceInfoPtr> ResourceRegistry::VersionsOf(
    std::string_view storage_key) const {
  std::vector<ResourceInfoPtr> out;
  for (ResourceInfoPtr& r : All()) {
    if (r->StorageKey() == storage_key) out.push_back(std::move(r));
  }
  return out;
}

std::vector<ResourceInfoPtr> ResourceRegistry::All() const {
  std::vector<ResourceInfoPtr> out;
  {
    MutexLock l(&mu_);
    out.reserve(by_gvr_.size());
    for (const auto& [gvr, info] : by_gvr_) out.push_back(info);
  }
  std::sort(out.begin(), out.end(), ResourceOrder);
  return out;
}

std::vector<std::pair<std::string, std::vector<std::string>>>
ResourceRegistry::Groups() const {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const ResourceInfoPtr& r : All()) {
    if (r->group().empty()) continue;
    if (out.empty() || out.back().first != r->group()) {
      out.push_back({r->group(), {}});
    }
    auto& versions = out.back().second;
    if (std::find(versions.begin(), versions.end(), r->version()) ==
        versions.end()) {
      versions.push_back(r->version());
    }
  }
  return out;
}

absl::StatusOr<std::vector<ResourceInfo>> ResourceRegistry::FromCRD(
    const rapidjson::Value& crd, std::vector<api::FieldError>* errors) {
  std::vector<ResourceInfo> out;
  const rapidjson::Value* spec = Member(crd, "spec");
  const rapidjson::Value* metadata = Member(crd, "metadata");
  std::string crd_name =
      metadata != nullptr ? json::StringMember(*metadata, "name") : "";
  if (spec == nullptr || !spec->IsObject()) {
    errors->push_back(Required("spec"));
    return out;
  }
  std::string group = json::StringMember(*spec, "group");
  if (group.empty()) errors->push_back(Required("spec.group"));
  const rapidjson::Value* names = Member(*spec, "names");
  std::string plural, singular, kind, list_kind;
  std::vector<std::string> short_names, categories;
  if (names == nullptr || !names->IsObject()) {
    errors->push_back(Required("spec.names.plural"));
    errors->push_back(Required("spec.names.kind"));
  } else {
    plural = json::StringMember(*names, "plural");
    singular = json::StringMember(*names, "singular");
    kind = json::StringMember(*names, "kind");
    list_kind = json::StringMember(*names, "listKind");
    short_names = StringList(Member(*names, "shortNames"));
    categories = StringList(Member(*names, "categories"));
    if (plural.empty()) errors->push_back(Required("spec.names.plural"));
    if (kind.empty()) errors->push_back(Required("spec.names.kind"));
  }
  if (singular.empty()) singular = absl::AsciiStrToLower(kind);
  if (list_kind.empty() && !kind.empty()) list_kind = kind + "List";
  if (!plural.empty() && !group.empty() && crd_name != plural + "." + group) {
    errors->push_back(
        InvalidValue("metadata.name", Quote(crd_name),
                     "must be spec.names.plural+\".\"+spec.group"));
  }
  std::string scope = json::StringMember(*spec, "scope");
  if (scope.empty()) {
    errors->push_back(Required("spec.scope"));
  } else if (scope != "Namespaced" && scope != "Cluster") {
    api::FieldError e;
    e.type = api::FieldError::Type::kNotSupported;
    e.field = "spec.scope";
    e.value = Quote(scope);
    e.detail = "supported values: \"Cluster\", \"Namespaced\"";
    errors->push_back(e);
  }
  const rapidjson::Value* versions = Member(*spec, "versions");
  if (versions == nullptr || !versions->IsArray() || versions->Empty()) {
    errors->push_back(
        Required("spec.versions",
                 "must have exactly one version marked as storage version"));
    return out;
  }
  std::string storage_version;
  int storage_count = 0;
  for (const auto& v : versions->GetArray()) {
    auto st = Member(v, "storage");
    if (st != nullptr && st->IsBool() && st->GetBool()) {
      ++storage_count;
      storage_version = json::StringMember(v, "name");
    }
  }
  if (storage_count != 1) {
    errors->push_back(InvalidValue(
        "spec.versions", "[]apiextensions.CustomResourceDefinitionVersion{...}",
        "must have exactly one version marked as storage version"));
  }
  int index = -1;
  for (const auto& v : versions->GetArray()) {
    ++index;
    std::string prefix = Cat("spec.versions[", index, "]");
    std::string vname = json::StringMember(v, "name");
    if (vname.empty()) {
      errors->push_back(Required(prefix + ".name"));
      continue;
    }
    ResourceInfo r;
    r.mapping.resource = {group, vname, plural};
    r.mapping.kind = {group, vname, kind};
    r.mapping.singular = singular;
    r.mapping.short_names = short_names;
    r.mapping.list_kind = list_kind;
    r.mapping.scope = scope == "Cluster" ? api::ResourceScope::kCluster
                                         : api::ResourceScope::kNamespaced;
    r.categories = categories;
    r.verbs = AllVerbs();
    r.generation = GenerationPolicy::kAllButMetadata;
    r.allow_unconditional_update = false;
    r.custom = true;
    r.crd_name = crd_name;
    r.storage_version = storage_version;
    const rapidjson::Value* subresources = Member(v, "subresources");
    if (subresources != nullptr && subresources->IsObject()) {
      const rapidjson::Value* scale = Member(*subresources, "scale");
      if (scale != nullptr && scale->IsObject()) {
        r.mapping.subresources.push_back("scale");
        r.scale.spec_replicas =
            DotPathToPointer(json::StringMember(*scale, "specReplicasPath"));
        r.scale.status_replicas =
            DotPathToPointer(json::StringMember(*scale, "statusReplicasPath"));
        r.scale.label_selector =
            DotPathToPointer(json::StringMember(*scale, "labelSelectorPath"));
      }
      if (Member(*subresources, "status") != nullptr) {
        r.mapping.subresources.push_back("status");
      }
    }
    const rapidjson::Value* schema = Member(v, "schema");
    const rapidjson::Value* open_api =
        schema != nullptr ? Member(*schema, "openAPIV3Schema") : nullptr;
    if (open_api == nullptr || !open_api->IsObject()) {
      errors->push_back(
          Required(prefix + ".schema.openAPIV3Schema", "schemas are required"));
    } else {
      // The schema's own errors name the keyword at fault under the CRD's
      // path, as kube-apiserver's CRD validation does:
      // spec.versions[0].schema.openAPIV3Schema.properties[a].pattern.
      api::FieldError error;
      auto compiled = api::StructuralSchema::Create(*open_api, &error);
      if (!compiled.ok()) {
        error.field = Cat(prefix, ".schema.", error.field);
        errors->push_back(std::move(error));
      } else {
        r.schema =
            std::shared_ptr<const api::StructuralSchema>(std::move(*compiled));
      }
    }
    const rapidjson::Value* columns = Member(v, "additionalPrinterColumns");
    if (columns != nullptr && columns->IsArray()) {
      auto text = json::JsonToString(*columns);
      if (text.ok()) r.printer_columns_json = *text;
    }
    auto served = Member(v, "served");
    if (served != nullptr && served->IsBool() && !served->GetBool()) continue;
    out.push_back(std::move(r));
  }
  return out;
}

absl::Status ResourceRegistry::AddCRD(const rapidjson::Value& crd) {
  std::vector<api::FieldError> errors;
  auto infos = FromCRD(crd, &errors);
  if (!infos.ok()) return infos.status();
  if (!errors.empty()) {
    return absl::InvalidArgumentError(errors.front().ToString());
  }
  std::string crd_name = infos->empty() ? "" : infos->front().crd_name;
  MutexLock l(&mu_);
  for (auto it = by_gvr_.begin(); it != by_gvr_.end();) {
    if (!crd_name.empty() && it->second->crd_name == crd_name) {
      it = by_gvr_.erase(it);
    } else {
      ++it;
    }
  }
  for (ResourceInfo& r : *infos) AddLocked(std::move(r));
  return absl::OkStatus();
}

void ResourceRegistry::RemoveCRD(std::string_view crd_name) {
  MutexLock l(&mu_);
  for (auto it = by_gvr_.begin(); it != by_gvr_.end();) {
    if (it->second->custom && it->second->crd_name == crd_name) {
      it = by_gvr_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace apiserver
}  // namespace kcr
