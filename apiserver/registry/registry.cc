// Registry (registry.h): construction, and the reads: Get, List (paging,
// resourceVersion semantics, selectors) and GetScale.
#include "apiserver/registry/registry.h"

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "api/errors/errors.h"
#include "api/types/time.h"
#include "apiserver/internal/object_fields.h"
#include "apiserver/registry/builtin_conversion.h"
#include "apiserver/registry/scale.h"
#include "apiserver/storage/continue_token.h"
#include "base/status_macros.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace {

using api::FieldError;

// Formatting a time costs about a microsecond (absl's strftime), and
// nearly every write stamps one: each thread keeps the text of the last
// second it formatted. Keyed by the second itself, so any clock (a test's
// fake one too) gets the text FormatRfc3339 would give.
std::string Now(const Clock* clock) {
  const absl::Time now = clock->Now();
  const int64_t second = absl::ToUnixSeconds(now);
  thread_local int64_t cached_second = 0;
  thread_local std::string cached;
  if (cached.empty() || second != cached_second) {
    cached = api::FormatRfc3339(now);
    cached_second = second;
  }
  return cached;
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
  if (object == nullptr) return object;
  if (!resource.custom) {
    if (!ConvertsBuiltin(resource) ||
        object->api_version() == resource.api_version()) {
      return object;
    }
    api::ObjectBuilder b = object->ToBuilder();
    ConvertBuiltinFromStorage(resource, &b);
    auto built = b.Build();
    return built.ok() ? *built : object;
  }
  // Compared in pieces: a list calls this for every item, and the stored
  // version is nearly always the one served.
  const std::string_view have = object->api_version();
  const std::string& group = resource.gvk().group;
  const std::string& version = resource.gvk().version;
  const bool same = group.empty()
                        ? have == version
                        : have.size() == group.size() + 1 + version.size() &&
                              have.substr(0, group.size()) == group &&
                              have[group.size()] == '/' &&
                              have.substr(group.size() + 1) == version;
  if (same) return object;
  api::ObjectBuilder b = object->ToBuilder();
  b.SetApiVersion(resource.api_version());
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
  if (!options.shard_selector.Empty() &&
      !options.shard_selector.Matches(object.uid(), object.namespace_())) {
    return false;
  }
  return true;
}

absl::Status Registry::ValidateSelectors(const ResourceInfo& resource,
                                         ListOptions* options) {
  for (const api::FieldRequirement& r :
       options->field_selector.requirements()) {
    if (!resource.SupportsFieldLabel(r.field)) {
      return api::StatusError::BadRequest(
                 Cat("field label not supported: ", r.field))
          .ToStatus();
    }
  }
  for (const FieldLabel& f : resource.field_labels) {
    if (f.path.empty() && !f.if_absent.has_value()) continue;
    options->field_selector =
        options->field_selector.Resolved(f.label, f.path, f.if_absent);
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
  // The priority classes every cluster has.
  if (ResourceInfoPtr pc =
          resources_->Lookup("scheduling.k8s.io", "v1", "priorityclasses")) {
    for (const auto& [name, value] :
         {std::pair<const char*, int64_t>{"system-cluster-critical",
                                          2000000000},
          {"system-node-critical", 2000001000}}) {
      if (storage_->Get(pc->StorageKey(), "", name) != nullptr) continue;
      api::ObjectBuilder b("scheduling.k8s.io/v1", "PriorityClass");
      b.SetName(name);
      (void)b.SetInt("/value", value);
      (void)b.SetString("/description",
                        "Used for system critical pods that must not be moved "
                        "from their current node.");
      KCR_RETURN_IF_ERROR(Create(*pc, "", std::move(b)).status());
    }
  }
  KCR_RETURN_IF_ERROR(BootstrapClusterObjects());
  return BootstrapAPIServices();
}

// What kube-apiserver's post-start hooks write into a new cluster: the
// mandatory API Priority and Fairness configuration (the exempt and
// catch-all priority levels and flow schemas) and the default ServiceCIDR.
absl::Status Registry::BootstrapClusterObjects() {
  static const char* const kRules =
      R"("rules":[{"subjects":[SUBJECTS],"resourceRules":[{"verbs":["*"],)"
      R"("apiGroups":["*"],"resources":["*"],"clusterScope":true,)"
      R"("namespaces":["*"]}],"nonResourceRules":[{"verbs":["*"],)"
      R"("nonResourceURLs":["*"]}]}])";
  const auto rules = [](const char* subjects) {
    std::string r = kRules;
    r.replace(r.find("SUBJECTS"), 8, subjects);
    return r;
  };
  const std::string kFlowControl = "flowcontrol.apiserver.k8s.io";
  const std::string kAutoUpdate =
      R"("annotations":{"apf.kubernetes.io/autoupdate-spec":"true"})";
  const std::vector<std::tuple<std::string, std::string, std::string>> objects = {
      {kFlowControl, "prioritylevelconfigurations",
       R"({"apiVersion":"flowcontrol.apiserver.k8s.io/v1","kind":"PriorityLevelConfiguration","metadata":{"name":"exempt",)" +
           kAutoUpdate +
           R"(},"spec":{"type":"Exempt","exempt":{"nominalConcurrencyShares":0,"lendablePercent":0}}})"},
      {kFlowControl, "prioritylevelconfigurations",
       R"({"apiVersion":"flowcontrol.apiserver.k8s.io/v1","kind":"PriorityLevelConfiguration","metadata":{"name":"catch-all",)" +
           kAutoUpdate +
           R"(},"spec":{"type":"Limited","limited":{"nominalConcurrencyShares":5,"lendablePercent":0,"limitResponse":{"type":"Reject"}}}})"},
      {kFlowControl, "flowschemas",
       R"({"apiVersion":"flowcontrol.apiserver.k8s.io/v1","kind":"FlowSchema","metadata":{"name":"exempt",)" +
           kAutoUpdate +
           R"(},"spec":{"priorityLevelConfiguration":{"name":"exempt"},"matchingPrecedence":1,)" +
           rules(R"({"kind":"Group","group":{"name":"system:masters"}})") +
           "}}"},
      {kFlowControl, "flowschemas",
       R"({"apiVersion":"flowcontrol.apiserver.k8s.io/v1","kind":"FlowSchema","metadata":{"name":"catch-all",)" +
           kAutoUpdate +
           R"(},"spec":{"priorityLevelConfiguration":{"name":"catch-all"},"matchingPrecedence":10000,"distinguisherMethod":{"type":"ByUser"},)" +
           rules(
               R"({"kind":"Group","group":{"name":"system:unauthenticated"}},{"kind":"Group","group":{"name":"system:authenticated"}})") +
           "}}"},
      {"networking.k8s.io", "servicecidrs",
       R"({"apiVersion":"networking.k8s.io/v1","kind":"ServiceCIDR","metadata":{"name":"kubernetes"},"spec":{"cidrs":[")" +
           ServiceAllocatorOptions().service_cidr + R"("]}})"}};
  for (const auto& [group, resource, json] : objects) {
    ResourceInfoPtr r = resources_->Lookup(group, "v1", resource);
    if (r == nullptr) continue;
    KCR_ASSIGN_OR_RETURN(api::ObjectBuilder b,
                         api::ObjectBuilder::FromJson(json));
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr parsed, b.Build());
    if (storage_->Get(r->StorageKey(), "", parsed->name()) != nullptr) {
      continue;
    }
    KCR_RETURN_IF_ERROR(Create(*r, "", std::move(b)).status());
  }
  return absl::OkStatus();
}

// kube-aggregator's autoregistration: one local APIService per served
// built-in group-version, with kube's priorities.
absl::Status Registry::BootstrapAPIServices() {
  ResourceInfoPtr api_services =
      resources_->Lookup("apiregistration.k8s.io", "v1", "apiservices");
  if (api_services == nullptr) return absl::OkStatus();
  static const std::map<std::string, int> kGroupPriority = {
      {"", 18000},
      {"apiregistration.k8s.io", 18000},
      {"apps", 17800},
      {"events.k8s.io", 17750},
      {"authentication.k8s.io", 17700},
      {"authorization.k8s.io", 17600},
      {"autoscaling", 17500},
      {"batch", 17400},
      {"certificates.k8s.io", 17300},
      {"networking.k8s.io", 17200},
      {"policy", 17100},
      {"rbac.authorization.k8s.io", 17000},
      {"storage.k8s.io", 16800},
      {"admissionregistration.k8s.io", 16700},
      {"apiextensions.k8s.io", 16700},
      {"scheduling.k8s.io", 16600},
      {"coordination.k8s.io", 16500},
      {"node.k8s.io", 16300},
      {"discovery.k8s.io", 16200},
      {"flowcontrol.apiserver.k8s.io", 16100}};
  std::vector<std::pair<std::string, std::string>> served = {{"", "v1"}};
  for (const auto& [group, versions] : resources_->Groups()) {
    for (const std::string& v : versions) served.push_back({group, v});
  }
  for (const auto& [group, version] : served) {
    auto priority = kGroupPriority.find(group);
    if (priority == kGroupPriority.end()) continue;  // custom groups
    const std::string name = Cat(version, ".", group);
    if (storage_->Get(api_services->StorageKey(), "", name) != nullptr) {
      continue;
    }
    api::ObjectBuilder b("apiregistration.k8s.io/v1", "APIService");
    b.SetName(name);
    b.SetLabel("kube-aggregator.kubernetes.io/automanaged", "onstart");
    if (!group.empty()) (void)b.SetString("/spec/group", group);
    (void)b.SetString("/spec/version", version);
    (void)b.SetInt("/spec/groupPriorityMinimum", priority->second);
    (void)b.SetInt("/spec/versionPriority",
                   group == "autoscaling" && version == "v2" ? 30
                   : group.empty()                           ? 1
                                                             : 15);
    KCR_RETURN_IF_ERROR(Create(*api_services, "", std::move(b)).status());
  }
  return absl::OkStatus();
}

absl::StatusOr<api::ObjectPtr> Registry::Get(const ResourceInfo& resource,
                                             std::string_view ns,
                                             std::string_view name) const {
  api::ObjectPtr o = storage_->Get(resource.StorageKey(), ns, name);
  if (o == nullptr) {
    return api::StatusError::NotFound(resource.group_resource(), name)
        .ToStatus();
  }
  return AtVersion(o, resource);
}

absl::StatusOr<ListResult> Registry::List(
    const ResourceInfo& resource, std::string_view ns,
    const ListOptions& list_options) const {
  ListOptions options = list_options;
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
    return api::StatusError::Invalid({"meta.k8s.io", "ListOptions"}, "", errors)
        .ToStatus();
  }
  KCR_RETURN_IF_ERROR(ValidateSelectors(resource, &options));
  int64_t requested = 0;
  if (!rv.empty() && !absl::SimpleAtoi(rv, &requested)) {
    return api::StatusError::BadRequest(
               Cat("invalid resource version: ", Quote(rv)))
        .ToStatus();
  }
  Storage::ListOptions so;
  so.ns = std::string(ns);
  so.limit = options.limit > 0 ? options.limit : 0;
  bool selective = !options.label_selector.Empty() ||
                   !options.field_selector.Empty() ||
                   !options.shard_selector.Empty();
  if (selective) {
    ListOptions copy = options;
    so.filter = [copy](const api::Object& o) { return Matches(o, copy); };
  }
  if (!options.continue_token.empty()) {
    if (!rv.empty() && rv != "0") {
      return api::StatusError::BadRequest(
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
      api::StatusError e = api::StatusError::Expired(
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
    api::StatusError e;
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
  out.shard_selector = options.shard_selector.ToString();
  if (!page.continue_key.empty()) {
    out.continue_token =
        EncodeContinue(page.resource_version, page.continue_key);
    if (!selective) out.remaining_item_count = page.remaining;
  }
  return out;
}

absl::StatusOr<api::ObjectPtr> Registry::GetScale(const ResourceInfo& r,
                                                  std::string_view ns,
                                                  std::string_view name) const {
  if (!r.has_scale()) {
    return api::StatusError::PathNotFound().ToStatus();
  }
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr o, Get(r, ns, name));
  return ScaleOf(r, o);
}

}  // namespace apiserver
}  // namespace kcr
