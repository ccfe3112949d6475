#include "controllers/nginx/nginx_deployment.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/crd/crd_common.h"
#include "api/object_builder.h"
#include "api/types/deployment.h"
#include "api/types/field.h"
#include "api/types/owner_reference.h"
#include "base/string_view.h"
#include "rapidjson/document.h"
#include "rapidjson/pointer.h"

namespace kcr::nginx {
namespace {

constexpr int64_t kMaxReplicas = std::numeric_limits<int32_t>::max();

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t end = s.find(sep, start);
    if (end == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, end - start));
    start = end + 1;
  }
}

bool IsLowerAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// path-component: [a-z0-9]+ ((\.|_|__|-+)[a-z0-9]+)*
bool ValidPathComponent(std::string_view s) {
  size_t i = 0;
  while (true) {
    const size_t start = i;
    while (i < s.size() && IsLowerAlnum(s[i])) ++i;
    if (i == start) return false;
    if (i == s.size()) return true;
    // A separator, then more alphanumerics.
    if (s[i] == '.') {
      ++i;
    } else if (s[i] == '_') {
      ++i;
      if (i < s.size() && s[i] == '_') ++i;
    } else if (s[i] == '-') {
      while (i < s.size() && s[i] == '-') ++i;
    } else {
      return false;
    }
  }
}

// host[:port], host = labels of [A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?
bool ValidDomain(std::string_view s) {
  std::string_view host = s;
  const size_t colon = s.find(':');
  if (colon != std::string_view::npos) {
    host = s.substr(0, colon);
    const std::string_view port = s.substr(colon + 1);
    if (port.empty()) return false;
    for (char c : port) {
      if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
    }
  }
  if (host.empty()) return false;
  for (std::string_view label : Split(host, '.')) {
    if (label.empty() || label.front() == '-' || label.back() == '-') {
      return false;
    }
    for (char c : label) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-') {
        return false;
      }
    }
  }
  return true;
}

// tag: [\w][\w.-]{0,127}
bool ValidTag(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool word =
        absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
    if (!word && (i == 0 || (c != '.' && c != '-'))) return false;
  }
  return true;
}

// digest: algorithm ":" hex{32,}, algorithm: [A-Za-z][A-Za-z0-9]* joined
// by [+._-].
bool ValidDigest(std::string_view s) {
  const size_t colon = s.find(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view algorithm = s.substr(0, colon);
  const std::string_view hex = s.substr(colon + 1);
  if (hex.size() < 32) return false;
  for (char c : hex) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  bool at_start = true;
  for (char c : algorithm) {
    if (at_start) {
      if (!absl::ascii_isalpha(static_cast<unsigned char>(c))) return false;
      at_start = false;
    } else if (c == '+' || c == '.' || c == '_' || c == '-') {
      at_start = true;
    } else if (!absl::ascii_isalnum(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return !at_start;
}

// The grammar of container image references (as container runtimes parse
// them; the kubelet refuses others with InvalidImageName).
bool ValidImageReference(std::string_view image) {
  std::string_view name = image;
  const size_t at = image.find('@');
  if (at != std::string_view::npos) {
    if (!ValidDigest(image.substr(at + 1))) return false;
    name = image.substr(0, at);
  }
  const size_t last_slash = name.rfind('/');
  const size_t colon = name.rfind(':');
  if (colon != std::string_view::npos &&
      (last_slash == std::string_view::npos || colon > last_slash)) {
    if (!ValidTag(name.substr(colon + 1))) return false;
    name = name.substr(0, colon);
  }
  if (name.empty() || name.size() > 255) return false;
  const std::vector<std::string_view> parts = Split(name, '/');
  size_t first_path = 0;
  if (parts.size() > 1) {
    const std::string_view first = parts.front();
    if (first.find_first_of(".:") != std::string_view::npos ||
        first == "localhost") {
      if (!ValidDomain(first)) return false;
      first_path = 1;
    }
  }
  for (size_t i = first_path; i < parts.size(); ++i) {
    if (!ValidPathComponent(parts[i])) return false;
  }
  return true;
}

// Whether `have` has every entry of `want`.
bool HasLabels(const api::StringMapView& have,
               const std::map<std::string, std::string>& want) {
  for (const auto& [key, value] : want) {
    if (have.Get(key) != std::optional<std::string_view>(value)) return false;
  }
  return true;
}

// The one containerPort, or "<n> ports" when there is not exactly one.
std::string PortsOf(const api::ContainerSpec& container) {
  if (container.container_ports.empty()) return "none";
  if (container.container_ports.size() != 1) {
    return absl::StrCat(container.container_ports.size(), " ports");
  }
  return absl::StrCat(container.container_ports[0]);
}

// Sets each label of `labels` in the string map at `pointer`, keeping the
// others. The label keys here need no JSON-pointer escaping.
absl::Status SetLabelsAt(api::ObjectBuilder& b, const std::string& pointer,
                         const std::map<std::string, std::string>& labels) {
  const rapidjson::Value* map = b.Find(pointer);
  if (map != nullptr && !map->IsObject()) b.Remove(pointer);
  for (const auto& [key, value] : labels) {
    absl::Status s = b.SetString(absl::StrCat(pointer, "/", key), value);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

rapidjson::Value ContainerJson(const DesiredDeployment& desired,
                               rapidjson::MemoryPoolAllocator<>& a) {
  rapidjson::Value container(rapidjson::kObjectType);
  container.AddMember("name", rapidjson::Value(kContainerName, a), a);
  container.AddMember(
      "image",
      rapidjson::Value(desired.image.data(),
                       static_cast<rapidjson::SizeType>(desired.image.size()),
                       a),
      a);
  rapidjson::Value ports(rapidjson::kArrayType);
  rapidjson::Value port(rapidjson::kObjectType);
  port.AddMember("containerPort", desired.port, a);
  ports.PushBack(port, a);
  container.AddMember("ports", ports, a);
  return container;
}

using Allocator = rapidjson::MemoryPoolAllocator<>;

// Copies the members of `from` named in `keys` (those present) into `to`.
// Names and string values are referenced, not copied: `from` outlives `to`.
template <size_t N>
void CopyMembers(const rapidjson::Value& from, const char* const (&keys)[N],
                 rapidjson::Value& to, Allocator& a) {
  if (!from.IsObject()) return;
  for (const char* key : keys) {
    const auto m = from.FindMember(key);
    if (m == from.MemberEnd()) continue;
    to.AddMember(rapidjson::Value(rapidjson::StringRef(
                     m->name.GetString(), m->name.GetStringLength())),
                 rapidjson::Value(m->value, a), a);
  }
}

// `from[key]` when `from` is an object that has it; null otherwise.
const rapidjson::Value* MemberOf(const rapidjson::Value* from,
                                 const char* key) {
  if (from == nullptr || !from->IsObject()) return nullptr;
  const auto m = from->FindMember(key);
  return m == from->MemberEnd() ? nullptr : &m->value;
}

// Adds `value` to `to` as `key` (a static string).
void Add(rapidjson::Value& to, const char* key, rapidjson::Value value,
         Allocator& a) {
  to.AddMember(rapidjson::StringRef(key), value, a);
}

// spec.template.spec.containers as TrimDeploymentForCache keeps them.
rapidjson::Value TrimContainers(const rapidjson::Value& list, Allocator& a) {
  if (!list.IsArray()) return rapidjson::Value(list, a);
  rapidjson::Value out(rapidjson::kArrayType);
  for (const rapidjson::Value& c : list.GetArray()) {
    if (!c.IsObject()) continue;
    rapidjson::Value kept(rapidjson::kObjectType);
    static const char* const kContainerKeys[] = {"name", "image"};
    CopyMembers(c, kContainerKeys, kept, a);
    if (const rapidjson::Value* ports = MemberOf(&c, "ports")) {
      if (ports->IsArray()) {
        rapidjson::Value trimmed(rapidjson::kArrayType);
        for (const rapidjson::Value& p : ports->GetArray()) {
          if (!p.IsObject()) continue;
          rapidjson::Value port(rapidjson::kObjectType);
          static const char* const kPortKeys[] = {"containerPort"};
          CopyMembers(p, kPortKeys, port, a);
          trimmed.PushBack(port, a);
        }
        Add(kept, "ports", std::move(trimmed), a);
      } else {
        Add(kept, "ports", rapidjson::Value(*ports, a), a);
      }
    }
    out.PushBack(kept, a);
  }
  return out;
}

// status.conditions as TrimDeploymentForCache keeps them.
rapidjson::Value TrimConditions(const rapidjson::Value& list, Allocator& a) {
  if (!list.IsArray()) return rapidjson::Value(list, a);
  rapidjson::Value out(rapidjson::kArrayType);
  for (const rapidjson::Value& c : list.GetArray()) {
    const rapidjson::Value* type = MemberOf(&c, "type");
    const rapidjson::Value* status = MemberOf(&c, "status");
    if (type == nullptr || !type->IsString() ||
        api::field::View(*type) != "Progressing" || status == nullptr ||
        !status->IsString() || api::field::View(*status) != "False") {
      continue;
    }
    rapidjson::Value kept(rapidjson::kObjectType);
    static const char* const kConditionKeys[] = {"type", "status", "reason",
                                                 "message"};
    CopyMembers(c, kConditionKeys, kept, a);
    out.PushBack(kept, a);
  }
  return out;
}

}  // namespace

std::string DeploymentName(std::string_view nginx_name) {
  return absl::StrCat(ToAbsl(nginx_name), "-deploy");
}

std::map<std::string, std::string> DeploymentLabels(
    std::string_view nginx_name) {
  return {{"underneathall-app", absl::StrCat("nginx-", ToAbsl(nginx_name))},
          {"app", "underneathall"}};
}

std::vector<std::string> ValidateNginx(const Nginx& nginx) {
  std::vector<std::string> errors = nginx.Validate();
  if (nginx.spec.replicas.has_value() && *nginx.spec.replicas > kMaxReplicas) {
    errors.push_back(
        absl::StrCat("spec.replicas: Invalid value: ", *nginx.spec.replicas,
                     ": must be less than or equal to ", kMaxReplicas));
  }
  if (nginx.spec.image.has_value() && !nginx.spec.image->empty() &&
      !ValidImageReference(*nginx.spec.image)) {
    errors.push_back(absl::StrCat(
        "spec.image: Invalid value: ",
        api::crd::internal::Quote(*nginx.spec.image),
        ": must be a container image reference such as nginx:1.7.9 "
        "([registry[:port]/]repository[:tag][@digest], lower-case "
        "repository, no spaces)"));
  }
  return errors;
}

DesiredDeployment DesiredFor(const Nginx& nginx) {
  DesiredDeployment d;
  d.namespace_ = nginx.namespace_();
  d.name = DeploymentName(nginx.name());
  d.labels = DeploymentLabels(nginx.name());
  // Validated: each value fits (and the defaults are the CRD's).
  d.replicas = static_cast<int32_t>(nginx.spec.replicas.value_or(1));
  d.image = nginx.spec.image.value_or("nginx:1.7.9");
  d.port = static_cast<int32_t>(nginx.spec.port.value_or(80));
  return d;
}

absl::StatusOr<api::ObjectPtr> NewDeployment(const api::Object& nginx,
                                             const DesiredDeployment& desired) {
  api::DeploymentBuilder b(desired.namespace_, desired.name);
  b.SetLabels(desired.labels)
      .SetSelectorLabels(desired.labels)
      .SetReplicas(desired.replicas)
      .SetContainer(kContainerName, desired.image, desired.port)
      .SetOwner(api::NewControllerRef(nginx));
  return b.Build();
}

std::vector<std::string> DeploymentDrift(const api::DeploymentView& deployment,
                                         const DesiredDeployment& desired) {
  std::vector<std::string> drift;
  // Absent reads as the server's default, 1.
  if (deployment.replicas() != desired.replicas) {
    drift.push_back(absl::StrCat("replicas ", deployment.replicas(), "->",
                                 desired.replicas));
  }
  const std::vector<api::ContainerSpec> containers = deployment.containers();
  const auto container = std::find_if(
      containers.begin(), containers.end(),
      [](const api::ContainerSpec& c) { return c.name == kContainerName; });
  if (container == containers.end()) {
    drift.push_back(absl::StrCat("container ", kContainerName, " missing"));
  } else {
    if (container->image != desired.image) {
      drift.push_back(absl::StrCat("image ", ToAbsl(container->image), "->",
                                   desired.image));
    }
    const std::string port = PortsOf(*container);
    if (port != absl::StrCat(desired.port)) {
      drift.push_back(absl::StrCat("port ", port, "->", desired.port));
    }
  }
  if (!HasLabels(deployment.object().labels(), desired.labels)) {
    drift.push_back("labels");
  }
  if (!HasLabels(deployment.template_labels(), desired.labels)) {
    drift.push_back("template labels");
  }
  return drift;
}

absl::StatusOr<api::ObjectPtr> RepairDeployment(
    const api::Object& deployment, const DesiredDeployment& desired) {
  api::ObjectBuilder b(deployment);
  absl::Status s = b.SetInt("/spec/replicas", desired.replicas);
  if (s.ok()) s = SetLabelsAt(b, "/metadata/labels", desired.labels);
  if (s.ok()) {
    s = SetLabelsAt(b, "/spec/template/metadata/labels", desired.labels);
  }
  if (!s.ok()) return s;
  static const rapidjson::Pointer kContainers("/spec/template/spec/containers");
  rapidjson::Value* list = kContainers.Get(b.json());
  if (list == nullptr || !list->IsArray()) {
    s = b.Set("/spec/template/spec/containers",
              rapidjson::Value(rapidjson::kArrayType));
    if (!s.ok()) return s;
    list = kContainers.Get(b.json());
    if (list == nullptr) {
      return absl::InvalidArgumentError(
          "spec.template.spec of the Deployment is not an object");
    }
  }
  auto& a = b.allocator();
  rapidjson::Value want = ContainerJson(desired, a);
  const size_t i = api::field::IndexByName(list, kContainerName);
  if (i == list->Size()) {
    list->PushBack(want, a);
  } else {
    // Keep the container's other fields (the server's defaults, anyone's
    // additions); only image and ports are ours.
    rapidjson::Value& c = (*list)[static_cast<rapidjson::SizeType>(i)];
    c.RemoveMember("image");
    c.RemoveMember("ports");
    c.AddMember("image", want["image"], a);
    c.AddMember("ports", want["ports"], a);
  }
  return b.Build();
}

absl::StatusOr<api::ObjectPtr> TrimDeploymentForCache(
    const api::ObjectPtr& deployment) {
  if (deployment == nullptr) return absl::InvalidArgumentError("null object");
  const rapidjson::Value& from = deployment->json();
  // Enough for a typical trimmed Deployment without a heap allocation; the
  // Object copies the tree into an arena of its own size.
  char buffer[4096];
  Allocator a(buffer, sizeof(buffer));
  rapidjson::Value out(rapidjson::kObjectType);
  static const char* const kRootKeys[] = {"apiVersion", "kind"};
  CopyMembers(from, kRootKeys, out, a);

  if (const rapidjson::Value* metadata = MemberOf(&from, "metadata")) {
    if (metadata->IsObject()) {
      rapidjson::Value kept(rapidjson::kObjectType);
      static const char* const kMetadataKeys[] = {"name",
                                                  "namespace",
                                                  "uid",
                                                  "resourceVersion",
                                                  "generation",
                                                  "labels",
                                                  "ownerReferences",
                                                  "finalizers",
                                                  "deletionTimestamp",
                                                  "deletionGracePeriodSeconds"};
      CopyMembers(*metadata, kMetadataKeys, kept, a);
      Add(out, "metadata", std::move(kept), a);
    } else {
      Add(out, "metadata", rapidjson::Value(*metadata, a), a);
    }
  }

  if (const rapidjson::Value* spec = MemberOf(&from, "spec")) {
    rapidjson::Value kept(rapidjson::kObjectType);
    static const char* const kSpecKeys[] = {"replicas"};
    CopyMembers(*spec, kSpecKeys, kept, a);
    if (const rapidjson::Value* pod = MemberOf(spec, "template");
        pod != nullptr && pod->IsObject()) {
      rapidjson::Value pod_kept(rapidjson::kObjectType);
      if (const rapidjson::Value* meta = MemberOf(pod, "metadata");
          meta != nullptr && meta->IsObject()) {
        rapidjson::Value meta_kept(rapidjson::kObjectType);
        static const char* const kTemplateMetadataKeys[] = {"labels"};
        CopyMembers(*meta, kTemplateMetadataKeys, meta_kept, a);
        Add(pod_kept, "metadata", std::move(meta_kept), a);
      }
      if (const rapidjson::Value* pod_spec = MemberOf(pod, "spec");
          pod_spec != nullptr && pod_spec->IsObject()) {
        rapidjson::Value pod_spec_kept(rapidjson::kObjectType);
        if (const rapidjson::Value* containers =
                MemberOf(pod_spec, "containers")) {
          Add(pod_spec_kept, "containers", TrimContainers(*containers, a), a);
        }
        Add(pod_kept, "spec", std::move(pod_spec_kept), a);
      }
      Add(kept, "template", std::move(pod_kept), a);
    }
    if (spec->IsObject()) Add(out, "spec", std::move(kept), a);
  }

  if (const rapidjson::Value* status = MemberOf(&from, "status");
      status != nullptr && status->IsObject()) {
    rapidjson::Value kept(rapidjson::kObjectType);
    static const char* const kStatusKeys[] = {
        "replicas", "readyReplicas", "availableReplicas", "updatedReplicas",
        "observedGeneration"};
    CopyMembers(*status, kStatusKeys, kept, a);
    if (const rapidjson::Value* conditions = MemberOf(status, "conditions")) {
      rapidjson::Value trimmed = TrimConditions(*conditions, a);
      if (!trimmed.IsArray() || !trimmed.Empty()) {
        Add(kept, "conditions", std::move(trimmed), a);
      }
    }
    Add(out, "status", std::move(kept), a);
  }
  return api::Object::FromValue(out);
}

api::TransformFunc DeploymentCacheTransform() {
  return [](api::ObjectPtr deployment) {
    return TrimDeploymentForCache(deployment);
  };
}

api::Condition ReadyConditionFor(const api::DeploymentView& deployment,
                                 int32_t replicas, int64_t generation) {
  api::Condition c;
  c.type = kReadyCondition;
  c.observed_generation = generation;
  const int64_t observed = deployment.observed_generation();
  const int64_t total = deployment.status_replicas();
  const int64_t updated = deployment.updated_replicas();
  const int64_t available = deployment.available_replicas();
  const int64_t ready = deployment.ready_replicas();
  const std::string counted =
      absl::StrCat("Deployment ", ToAbsl(deployment.object().name()), ": ",
                   ready, " of ", replicas, " replicas ready");

  for (const api::Condition& dc : deployment.conditions()) {
    if (dc.type == "Progressing" && dc.status == api::kConditionFalse &&
        dc.reason == kReasonDeadlineExceeded) {
      c.status = api::kConditionFalse;
      c.reason = kReasonDeadlineExceeded;
      c.message = absl::StrCat(counted, "; ", dc.message);
      return c;
    }
  }
  const bool done = observed >= deployment.object().generation() &&
                    updated == replicas && total == replicas &&
                    available >= replicas && ready >= replicas;
  c.status = done ? api::kConditionTrue : api::kConditionFalse;
  c.reason = done ? kReasonReady : kReasonProgressing;
  c.message = counted;
  return c;
}

}  // namespace kcr::nginx
