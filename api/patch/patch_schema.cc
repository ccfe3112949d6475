#include "api/patch/patch_schema.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/string_view.h"

namespace kcr {
namespace api {
namespace {

FieldPatchMeta ByKey(std::string_view key) {
  return FieldPatchMeta{FieldStrategy::kMergeByKey, std::string(key)};
}
FieldPatchMeta Primitives() {
  return FieldPatchMeta{FieldStrategy::kMergePrimitives, ""};
}
FieldPatchMeta Atomic() { return FieldPatchMeta{FieldStrategy::kAtomic, ""}; }

// ObjectMeta (k8s.io/apimachinery/pkg/apis/meta/v1/types.go).
PatchSchema ObjectMetaSchema() {
  PatchSchema s;
  s.Add("finalizers", Primitives());
  s.Add("ownerReferences", ByKey("uid"));
  return s;
}

// Container fields shared by containers, initContainers and
// ephemeralContainers (k8s.io/api/core/v1/types.go).
PatchSchema ContainerSchema() {
  PatchSchema s;
  s.Add("env", ByKey("name"));
  s.Add("ports", ByKey("containerPort"));
  s.Add("volumeMounts", ByKey("mountPath"));
  s.Add("volumeDevices", ByKey("devicePath"));
  s.Add("args", Atomic());
  s.Add("command", Atomic());
  s.Add("envFrom", Atomic());
  return s;
}

PatchSchema PodSpecSchema() {
  PatchSchema s;
  const PatchSchema container = ContainerSchema();
  for (std::string_view list :
       {"containers", "initContainers", "ephemeralContainers"}) {
    s.Add(list, ByKey("name"));
    s.Mount(list, container);
  }
  s.Add("volumes", ByKey("name"));  // also retainKeys, honoured everywhere
  s.Add("imagePullSecrets", ByKey("name"));
  s.Add("hostAliases", ByKey("ip"));
  s.Add("topologySpreadConstraints", ByKey("topologyKey"));
  s.Add("schedulingGates", ByKey("name"));
  s.Add("resourceClaims", ByKey("name"));
  s.Add("tolerations", Atomic());
  s.Add("readinessGates", Atomic());
  return s;
}

PatchSchema WithMetadata() {
  PatchSchema s;
  s.Mount("metadata", ObjectMetaSchema());
  return s;
}

struct KindEntry {
  const char* group;
  const char* kind;
  PatchSchema schema;
};

std::vector<KindEntry>* BuildTables() {
  auto* kinds = new std::vector<KindEntry>();
  const PatchSchema pod_spec = PodSpecSchema();

  PatchSchema pod = WithMetadata();
  pod.Mount("spec", pod_spec);
  pod.Add("status.conditions", ByKey("type"));
  pod.Add("status.podIPs", ByKey("ip"));
  pod.Add("status.hostIPs", ByKey("ip"));
  kinds->push_back({"", "Pod", std::move(pod)});

  PatchSchema deployment = WithMetadata();
  deployment.Mount("spec.template.metadata", ObjectMetaSchema());
  deployment.Mount("spec.template.spec", pod_spec);
  deployment.Add("spec.selector", Atomic());
  deployment.Add("status.conditions", ByKey("type"));
  kinds->push_back({"apps", "Deployment", std::move(deployment)});

  PatchSchema service = WithMetadata();
  service.Add("spec.ports", ByKey("port"));
  service.Add("status.conditions", ByKey("type"));
  kinds->push_back({"", "Service", std::move(service)});

  PatchSchema service_account = WithMetadata();
  service_account.Add("secrets", ByKey("name"));
  service_account.Add("imagePullSecrets", ByKey("name"));
  kinds->push_back({"", "ServiceAccount", std::move(service_account)});

  PatchSchema name_space = WithMetadata();
  name_space.Add("status.conditions", ByKey("type"));
  kinds->push_back({"", "Namespace", std::move(name_space)});

  PatchSchema node = WithMetadata();
  node.Add("spec.podCIDRs", Primitives());
  node.Add("spec.taints", Atomic());
  node.Add("status.conditions", ByKey("type"));
  node.Add("status.addresses", ByKey("type"));
  kinds->push_back({"", "Node", std::move(node)});

  for (const char* kind : {"ConfigMap", "Secret", "Event"}) {
    kinds->push_back({"", kind, WithMetadata()});
  }
  kinds->push_back({"events.k8s.io", "Event", WithMetadata()});
  kinds->push_back({"coordination.k8s.io", "Lease", WithMetadata()});
  // rules and subjects carry no patch tags: atomic lists.
  for (const char* kind :
       {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}) {
    kinds->push_back({"rbac.authorization.k8s.io", kind, WithMetadata()});
  }
  kinds->push_back({"autoscaling", "Scale", WithMetadata()});

  // The workloads: a pod template and conditions merged by type.
  const auto workload = [&](const char* template_path) {
    PatchSchema w = WithMetadata();
    w.Mount(absl::StrCat(template_path, ".metadata"), ObjectMetaSchema());
    w.Mount(absl::StrCat(template_path, ".spec"), pod_spec);
    w.Add("status.conditions", ByKey("type"));
    return w;
  };
  kinds->push_back({"", "ReplicationController", workload("spec.template")});
  kinds->push_back({"", "PodTemplate", workload("template")});
  kinds->push_back({"apps", "StatefulSet", workload("spec.template")});
  kinds->push_back({"apps", "DaemonSet", workload("spec.template")});
  kinds->push_back({"batch", "Job", workload("spec.template")});
  kinds->push_back(
      {"batch", "CronJob", workload("spec.jobTemplate.spec.template")});
  for (const auto& [group, kind] :
       std::vector<std::pair<const char*, const char*>>{
           {"", "PersistentVolumeClaim"},
           {"autoscaling", "HorizontalPodAutoscaler"},
           {"policy", "PodDisruptionBudget"},
           {"apiregistration.k8s.io", "APIService"}}) {
    PatchSchema c = WithMetadata();
    c.Add("status.conditions", ByKey("type"));
    kinds->push_back({group, kind, std::move(c)});
  }
  for (const char* kind :
       {"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"}) {
    PatchSchema w = WithMetadata();
    w.Add("webhooks", ByKey("name"));
    kinds->push_back({"admissionregistration.k8s.io", kind, std::move(w)});
  }
  // No patch tags beyond metadata's: lists are atomic.
  for (const auto& [group, kind] :
       std::vector<std::pair<const char*, const char*>>{
           {"", "PersistentVolume"},
           {"", "LimitRange"},
           {"", "ResourceQuota"},
           {"apps", "ControllerRevision"},
           {"networking.k8s.io", "Ingress"},
           {"networking.k8s.io", "IngressClass"},
           {"networking.k8s.io", "NetworkPolicy"},
           {"storage.k8s.io", "StorageClass"},
           {"storage.k8s.io", "CSIDriver"},
           {"storage.k8s.io", "VolumeAttachment"},
           {"scheduling.k8s.io", "PriorityClass"},
           {"admissionregistration.k8s.io", "ValidatingAdmissionPolicy"},
           {"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"},
           {"certificates.k8s.io", "CertificateSigningRequest"}}) {
    kinds->push_back({group, kind, WithMetadata()});
  }
  kinds->push_back(
      {"apiextensions.k8s.io", "CustomResourceDefinition", WithMetadata()});
  return kinds;
}

const std::vector<KindEntry>& Tables() {
  static const std::vector<KindEntry>* const tables = BuildTables();
  return *tables;
}

}  // namespace

void PatchSchema::Add(std::string_view path, FieldPatchMeta meta) {
  fields_[std::string(path)] = std::move(meta);
}

void PatchSchema::Mount(std::string_view prefix, const PatchSchema& sub) {
  for (const auto& [path, meta] : sub.fields_) {
    fields_[absl::StrCat(ToAbsl(prefix), ".", path)] = meta;
  }
}

const FieldPatchMeta* PatchSchema::Find(std::string_view path) const {
  auto it = fields_.find(ToAbsl(path));
  return it == fields_.end() ? nullptr : &it->second;
}

const PatchSchema* BuiltinPatchSchema(std::string_view group,
                                      std::string_view kind) {
  for (const KindEntry& e : Tables()) {
    if (group == e.group && kind == e.kind) return &e.schema;
  }
  return nullptr;
}

bool SupportsStrategicMergePatch(std::string_view group,
                                 std::string_view kind) {
  return BuiltinPatchSchema(group, kind) != nullptr;
}

std::string_view GroupOfApiVersion(std::string_view api_version) {
  const size_t slash = api_version.find('/');
  if (slash == std::string_view::npos) return "";
  return api_version.substr(0, slash);
}

}  // namespace api
}  // namespace kcr
