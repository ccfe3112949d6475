#include "apiserver/kube_controllers/endpoints_controller.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "api/errors/errors.h"
#include "api/object_builder.h"
#include "apiserver/kube_controllers/controller_indexes.h"
#include "apiserver/kube_controllers/stored_objects.h"
#include "base/str_cat.h"
#include "glog/logging.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

constexpr char kServiceNameLabel[] = "kubernetes.io/service-name";
constexpr char kManagedByLabel[] = "endpointslice.kubernetes.io/managed-by";
constexpr char kManagedBy[] = "endpointslice-controller.k8s.io";
constexpr char kHeadlessLabel[] = "service.kubernetes.io/headless";

constexpr char kServicesKey[] = "/services";
constexpr char kPodsKey[] = "/pods";
constexpr char kEndpointsKey[] = "/endpoints";
constexpr char kSlicesKey[] = "discovery.k8s.io/endpointslices";

// How long a failed write waits before it is tried again (kube's
// rate-limited requeue).
constexpr absl::Duration kRetry = absl::Seconds(1);

// Candidate pods few enough that a sync filters them rather than look for
// a smaller selector entry.
constexpr size_t kFewPods = 16;

const Value* Get(const Value* o, const char* key) {
  if (o == nullptr || !o->IsObject()) return nullptr;
  auto it = o->FindMember(key);
  return it == o->MemberEnd() ? nullptr : &it->value;
}

std::string Text(const Value* v) {
  if (v == nullptr || !v->IsString()) return "";
  return std::string(v->GetString(), v->GetStringLength());
}

Value Str(std::string_view s, Allocator& a) {
  if (s.empty()) return Value("", 0, a);
  return Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

// Whether every key=value of `selector` is among the pod's labels.
bool Selects(const Value& selector, const api::Object& pod) {
  const Value* labels = pod.Find("/metadata/labels");
  for (const auto& m : selector.GetObject()) {
    const Value* v = Get(labels, m.name.GetString());
    if (v == nullptr || !v->IsString() || !m.value.IsString() ||
        *v != m.value) {
      return false;
    }
  }
  return true;
}

bool PodReady(const api::Object& pod) {
  const Value* conditions = pod.Find("/status/conditions");
  if (conditions == nullptr || !conditions->IsArray()) return false;
  for (const auto& c : conditions->GetArray()) {
    if (Text(Get(&c, "type")) == "Ready") {
      return Text(Get(&c, "status")) == "True";
    }
  }
  return false;
}

// One resolved endpoint port.
struct Port {
  std::string name;
  int port = 0;
  std::string protocol;
  bool operator<(const Port& o) const {
    return std::tie(name, port, protocol) <
           std::tie(o.name, o.port, o.protocol);
  }
  bool operator==(const Port& o) const {
    return name == o.name && port == o.port && protocol == o.protocol;
  }
};

// The container port named `name` of the pod, or 0.
int NamedPort(const api::Object& pod, const std::string& name,
              const std::string& protocol) {
  for (const char* list : {"/spec/containers", "/spec/initContainers"}) {
    const Value* cs = pod.Find(list);
    if (cs == nullptr || !cs->IsArray()) continue;
    for (const auto& c : cs->GetArray()) {
      const Value* ports = Get(&c, "ports");
      if (ports == nullptr || !ports->IsArray()) continue;
      for (const auto& p : ports->GetArray()) {
        std::string proto = Text(Get(&p, "protocol"));
        if (proto.empty()) proto = "TCP";
        const Value* number = Get(&p, "containerPort");
        if (Text(Get(&p, "name")) == name && proto == protocol &&
            number != nullptr && number->IsInt()) {
          return number->GetInt();
        }
      }
    }
  }
  return 0;
}

// The service's ports as this pod serves them (FindPort).
std::vector<Port> ResolvePorts(const api::Object& service,
                               const api::Object& pod) {
  std::vector<Port> out;
  const Value* ports = service.Find("/spec/ports");
  if (ports == nullptr || !ports->IsArray()) return out;
  for (const auto& p : ports->GetArray()) {
    Port port;
    port.name = Text(Get(&p, "name"));
    port.protocol = Text(Get(&p, "protocol"));
    if (port.protocol.empty()) port.protocol = "TCP";
    const Value* target = Get(&p, "targetPort");
    const Value* number = Get(&p, "port");
    if (target != nullptr && target->IsString()) {
      port.port = NamedPort(pod, Text(target), port.protocol);
    } else if (target != nullptr && target->IsInt() && target->GetInt() > 0) {
      port.port = target->GetInt();
    } else if (number != nullptr && number->IsInt()) {
      port.port = number->GetInt();
    }
    if (port.port > 0) out.push_back(std::move(port));
  }
  return out;
}

Value PortsJson(const std::vector<Port>& ports, bool slice, Allocator& a) {
  Value list(rapidjson::kArrayType);
  for (const Port& p : ports) {
    Value v(rapidjson::kObjectType);
    if (!p.name.empty() || slice) v.AddMember("name", Str(p.name, a), a);
    v.AddMember("port", p.port, a);
    v.AddMember("protocol", Str(p.protocol, a), a);
    list.PushBack(v, a);
  }
  return list;
}

Value TargetRef(const api::Object& pod, Allocator& a) {
  Value ref(rapidjson::kObjectType);
  ref.AddMember("kind", "Pod", a);
  ref.AddMember("namespace", Str(pod.namespace_(), a), a);
  ref.AddMember("name", Str(pod.name(), a), a);
  ref.AddMember("uid", Str(pod.uid(), a), a);
  return ref;
}

// The service's labels, plus the headless label for clusterIP None.
Value ServiceLabels(const api::Object& service, Allocator& a) {
  Value labels(rapidjson::kObjectType);
  if (const Value* l = service.Find("/metadata/labels");
      l != nullptr && l->IsObject()) {
    labels.CopyFrom(*l, a);
  }
  if (Text(service.Find("/spec/clusterIP")) == "None" &&
      !labels.HasMember(kHeadlessLabel)) {
    labels.AddMember(Value(kHeadlessLabel, a), Value("", a), a);
  }
  return labels;
}

// A pod that backs endpoints: an IP, not being deleted, not finished.
bool Serves(const api::Object& pod) {
  if (pod.being_deleted()) return false;
  if (Text(pod.Find("/status/podIP")).empty()) return false;
  const std::string phase = Text(pod.Find("/status/phase"));
  return phase != "Succeeded" && phase != "Failed";
}

bool SameAt(const api::Object& a, const api::Object& b, const char* pointer) {
  const Value* x = a.Find(pointer);
  const Value* y = b.Find(pointer);
  if (x == nullptr || y == nullptr) return x == y;
  return *x == *y;
}

// Whether a pod's write can change an endpoint: the pod serves before or
// after it, and what an endpoint shows of it or which Services select it
// changed (kube's podEndpointsChanged). A pod that does not serve is in no
// Endpoints, so the scheduling and pending writes of a starting pod queue
// nothing.
bool PodEventMatters(const StoredEvent& event) {
  const api::Object& pod = *event.object;
  const api::Object* before = event.previous.get();
  if (event.type == EventType::kDeleted) {
    return Serves(pod) || (before != nullptr && Serves(*before));
  }
  const bool serves = Serves(pod);
  if (before == nullptr) return serves;
  const bool served = Serves(*before);
  if (!serves && !served) return false;
  if (serves != served) return true;
  return pod.uid() != before->uid() || PodReady(pod) != PodReady(*before) ||
         !SameAt(pod, *before, "/status/podIP") ||
         !SameAt(pod, *before, "/spec/nodeName") ||
         !SameAt(pod, *before, "/metadata/labels");
}

}  // namespace

EndpointsController::EndpointsController(Registry* registry, const Clock* clock,
                                         IncrementalControllerOptions options)
    : IncrementalController(registry, clock, options) {
  AddControllerIndexes(registry->storage());
}

bool EndpointsController::Wants(const StoredEvent& event) const {
  if (event.collection == kPodsKey) return PodEventMatters(event);
  return event.collection == kServicesKey ||
         event.collection == kEndpointsKey || event.collection == kSlicesKey;
}

void EndpointsController::Made(const api::Object& written) {
  made_.insert(std::string(written.resource_version()));
}

bool EndpointsController::MadeHere(const StoredEvent& event) {
  if (event.type == EventType::kDeleted) return false;
  return made_.erase(std::string(event.object->resource_version())) > 0;
}

void EndpointsController::EnqueueForPod(const api::Object& pod) {
  const std::string_view ns = pod.namespace_();
  for (const auto& [k, v] : pod.labels()) {
    for (const api::ObjectPtr& service : storage()->ByIndex(
             kServicesKey, kServiceSelectorIndex, PodLabelKey(ns, k, v))) {
      const Value* selector = service->Find("/spec/selector");
      if (selector != nullptr && selector->IsObject() &&
          Selects(*selector, pod)) {
        Enqueue(Storage::Key(ns, service->name()));
      }
    }
  }
}

void EndpointsController::OnEvent(const StoredEvent& event) {
  const api::Object& o = *event.object;
  if (event.collection == kServicesKey) {
    Enqueue(Storage::Key(o.namespace_(), o.name()));
  } else if (event.collection == kPodsKey) {
    if (!PodEventMatters(event)) return;
    EnqueueForPod(o);
    // With the same labels, the same Services select it.
    if (event.previous != nullptr &&
        !SameAt(o, *event.previous, "/metadata/labels")) {
      EnqueueForPod(*event.previous);
    }
  } else if (event.collection == kEndpointsKey) {
    // Named as its Service.
    if (!MadeHere(event)) Enqueue(Storage::Key(o.namespace_(), o.name()));
  } else if (event.collection == kSlicesKey) {
    if (MadeHere(event)) return;
    std::string service;
    if (const std::optional<api::OwnerReferenceView> ref =
            o.controller_reference();
        ref.has_value() && ref->kind == "Service") {
      service = std::string(ref->name);
    } else if (std::optional<std::string_view> label =
                   o.Label(kServiceNameLabel)) {
      service = std::string(*label);
    }
    if (!service.empty()) Enqueue(Storage::Key(o.namespace_(), service));
  }
}

void EndpointsController::EnqueueAll() {
  // Writes whose events were missed are forgotten: at worst their Service
  // is synced once more.
  made_.clear();
  for (const api::ObjectPtr& service : storage()->Snapshot(kServicesKey)) {
    Enqueue(Storage::Key(service->namespace_(), service->name()));
  }
  // Services whose deletion may have been missed.
  for (const std::string& key : managed_) Enqueue(key);
}

absl::Time EndpointsController::SyncKey(const std::string& key,
                                        absl::Time now) {
  ResourceRegistry* resources = registry()->resources();
  ResourceInfoPtr services = resources->Lookup("", "v1", "services");
  ResourceInfoPtr endpoints = resources->Lookup("", "v1", "endpoints");
  ResourceInfoPtr pods = resources->Lookup("", "v1", "pods");
  ResourceInfoPtr slices =
      resources->Lookup("discovery.k8s.io", "v1", "endpointslices");
  if (services == nullptr || endpoints == nullptr || pods == nullptr) {
    return absl::InfiniteFuture();
  }
  const size_t slash = key.find('/');
  const std::string ns = key.substr(0, slash);
  const std::string name = key.substr(slash + 1);
  api::ObjectPtr service = storage()->Get(services->StorageKey(), ns, name);
  if (service == nullptr) {
    // Endpoints written here whose Service is gone (kube's endpoints
    // controller deletes them on the Service's deletion); the slices go
    // through the garbage collector.
    if (managed_.erase(key) == 0) return absl::InfiniteFuture();
    absl::Status s = registry()->Delete(*endpoints, ns, name).status();
    if (!s.ok() && !IsRaceError(s)) {
      LOG(WARNING) << "endpoints controller: delete failed endpoints=" << key
                   << ": " << s;
      managed_.insert(key);
      return now + kRetry;
    }
    return absl::InfiniteFuture();
  }
  const Value* selector = service->Find("/spec/selector");
  if (selector == nullptr || !selector->IsObject() || selector->ObjectEmpty() ||
      Text(service->Find("/spec/type")) == "ExternalName" ||
      service->being_deleted()) {
    return absl::InfiniteFuture();
  }
  // The candidates: the pods filed under the selector entry with the
  // fewest of them (SyncService checks the whole selector), or under the
  // first entry with at most kFewPods: filtering those costs less than
  // fetching another entry, which may hold every pod of the namespace.
  std::vector<api::ObjectPtr> candidates;
  bool first = true;
  for (const auto& m : selector->GetObject()) {
    if (!m.value.IsString()) {
      candidates.clear();  // no label matches a value that is no string
      break;
    }
    std::vector<api::ObjectPtr> filed = storage()->ByIndex(
        pods->StorageKey(), kPodLabelIndex,
        PodLabelKey(
            ns, m.name.GetString(),
            std::string_view(m.value.GetString(), m.value.GetStringLength())));
    if (first || filed.size() < candidates.size()) {
      candidates = std::move(filed);
      first = false;
    }
    if (candidates.size() <= kFewPods) break;
  }
  return SyncService(*endpoints, slices.get(), *service, candidates)
             ? absl::InfiniteFuture()
             : now + kRetry;
}

bool EndpointsController::SyncService(const ResourceInfo& endpoints,
                                      const ResourceInfo* slices,
                                      const api::Object& service,
                                      const std::vector<api::ObjectPtr>& pods) {
  const std::string ns(service.namespace_());
  const std::string name(service.name());
  const Value& selector = *service.Find("/spec/selector");
  bool ok = true;

  // Pods grouped by their resolved ports, in a stable order.
  struct Group {
    std::vector<const api::Object*> ready;
    std::vector<const api::Object*> not_ready;
  };
  std::map<std::vector<Port>, Group> groups;
  std::vector<std::pair<const api::Object*, bool>> slice_pods;
  std::vector<Port> slice_ports;
  for (const api::ObjectPtr& pod : pods) {
    if (!Serves(*pod) || !Selects(selector, *pod)) continue;
    std::vector<Port> ports = ResolvePorts(service, *pod);
    const bool ready = PodReady(*pod);
    slice_pods.push_back({pod.get(), ready});
    if (slice_ports.empty()) slice_ports = ports;
    if (ports.empty()) continue;
    Group& g = groups[ports];
    (ready ? g.ready : g.not_ready).push_back(pod.get());
  }

  // v1 Endpoints.
  {
    api::ObjectBuilder want("v1", "Endpoints");
    Allocator& a = want.allocator();
    want.SetName(name);
    want.SetNamespace(ns);
    Value labels = ServiceLabels(service, a);
    if (!labels.ObjectEmpty()) (void)want.Set("/metadata/labels", labels);
    Value subsets(rapidjson::kArrayType);
    auto addresses = [&](const std::vector<const api::Object*>& list) {
      std::vector<const api::Object*> sorted = list;
      std::sort(sorted.begin(), sorted.end(),
                [](const api::Object* x, const api::Object* y) {
                  return Text(x->Find("/status/podIP")) <
                         Text(y->Find("/status/podIP"));
                });
      Value out(rapidjson::kArrayType);
      for (const api::Object* pod : sorted) {
        Value addr(rapidjson::kObjectType);
        addr.AddMember("ip", Str(Text(pod->Find("/status/podIP")), a), a);
        const std::string node = Text(pod->Find("/spec/nodeName"));
        if (!node.empty()) addr.AddMember("nodeName", Str(node, a), a);
        addr.AddMember("targetRef", TargetRef(*pod, a), a);
        out.PushBack(addr, a);
      }
      return out;
    };
    for (const auto& [ports, group] : groups) {
      Value subset(rapidjson::kObjectType);
      if (!group.ready.empty()) {
        subset.AddMember("addresses", addresses(group.ready), a);
      }
      if (!group.not_ready.empty()) {
        subset.AddMember("notReadyAddresses", addresses(group.not_ready), a);
      }
      subset.AddMember("ports", PortsJson(ports, false, a), a);
      subsets.PushBack(subset, a);
    }
    if (!subsets.Empty()) (void)want.Set("/subsets", subsets);

    api::ObjectPtr live =
        registry()->storage()->Get(endpoints.StorageKey(), ns, name);
    const Value empty(rapidjson::kObjectType);
    auto same = [&](const char* pointer) {
      const Value* x = live->Find(pointer);
      const Value* y = want.Find(pointer);
      if (x == nullptr || y == nullptr) return x == y;
      return *x == *y;
    };
    absl::Status s;
    if (live == nullptr) {
      absl::StatusOr<WriteResult> w =
          registry()->Create(endpoints, ns, std::move(want));
      if (w.ok()) Made(*w->object);
      s = w.status();
      if (api::IsAlreadyExists(s) || api::IsForbidden(s)) s = absl::OkStatus();
    } else if (!live->being_deleted() &&
               (!same("/subsets") || !same("/metadata/labels"))) {
      api::ObjectBuilder b = live->ToBuilder();
      for (const char* p : {"/subsets", "/metadata/labels"}) {
        if (const Value* v = want.Find(p)) {
          (void)b.Set(p, *v);
        } else {
          b.Remove(p);
        }
      }
      absl::StatusOr<WriteResult> w =
          registry()->Update(endpoints, ns, name, std::move(b));
      if (w.ok()) Made(*w->object);
      s = w.status();
      if (IsRaceError(s)) s = absl::OkStatus();
    }
    if (!s.ok()) {
      LOG(WARNING) << "endpoints controller: write failed endpoints=" << ns
                   << "/" << name << ": " << s;
      ok = false;
    }
    managed_.insert(Cat(ns, "/", name));
  }

  // discovery.k8s.io/v1 EndpointSlice.
  if (slices == nullptr) return ok;
  api::ObjectBuilder want("discovery.k8s.io/v1", "EndpointSlice");
  Allocator& a = want.allocator();
  Value labels = ServiceLabels(service, a);
  labels.RemoveMember(kServiceNameLabel);
  labels.AddMember(Value(kServiceNameLabel, a), Str(name, a), a);
  labels.RemoveMember(kManagedByLabel);
  labels.AddMember(Value(kManagedByLabel, a), Value(kManagedBy, a), a);
  (void)want.Set("/metadata/labels", labels);
  (void)want.SetString("/addressType", "IPv4");
  std::sort(slice_pods.begin(), slice_pods.end(),
            [](const auto& x, const auto& y) {
              return Text(x.first->Find("/status/podIP")) <
                     Text(y.first->Find("/status/podIP"));
            });
  Value list(rapidjson::kArrayType);
  for (const auto& [pod, ready] : slice_pods) {
    Value e(rapidjson::kObjectType);
    Value ips(rapidjson::kArrayType);
    ips.PushBack(Str(Text(pod->Find("/status/podIP")), a), a);
    e.AddMember("addresses", ips, a);
    Value conditions(rapidjson::kObjectType);
    conditions.AddMember("ready", ready, a);
    conditions.AddMember("serving", ready, a);
    conditions.AddMember("terminating", false, a);
    e.AddMember("conditions", conditions, a);
    const std::string node = Text(pod->Find("/spec/nodeName"));
    if (!node.empty()) e.AddMember("nodeName", Str(node, a), a);
    e.AddMember("targetRef", TargetRef(*pod, a), a);
    list.PushBack(e, a);
  }
  (void)want.Set("/endpoints", list);
  Value ports = PortsJson(slice_ports, true, a);
  (void)want.Set("/ports", ports);

  // The slices this controller made for the Service are owned by it.
  api::ObjectPtr live;
  for (const api::ObjectPtr& s : storage()->ByIndex(
           slices->StorageKey(), kControllerIndex, service.uid())) {
    const Value* l = s->Find("/metadata/labels");
    if (Text(Get(l, kServiceNameLabel)) == name &&
        Text(Get(l, kManagedByLabel)) == kManagedBy && !s->being_deleted()) {
      live = s;
      break;
    }
  }
  absl::Status s;
  if (live == nullptr) {
    (void)want.SetString("/metadata/generateName", Cat(name, "-"));
    Value owner(rapidjson::kObjectType);
    owner.AddMember("apiVersion", "v1", a);
    owner.AddMember("kind", "Service", a);
    owner.AddMember("name", Str(name, a), a);
    owner.AddMember("uid", Str(service.uid(), a), a);
    owner.AddMember("controller", true, a);
    owner.AddMember("blockOwnerDeletion", true, a);
    Value owners(rapidjson::kArrayType);
    owners.PushBack(owner, a);
    (void)want.Set("/metadata/ownerReferences", owners);
    absl::StatusOr<WriteResult> w =
        registry()->Create(*slices, ns, std::move(want));
    if (w.ok()) Made(*w->object);
    s = w.status();
    if (api::IsForbidden(s)) s = absl::OkStatus();
  } else {
    bool changed = false;
    api::ObjectBuilder b = live->ToBuilder();
    for (const char* p : {"/endpoints", "/ports", "/metadata/labels"}) {
      const Value* x = live->Find(p);
      const Value* y = want.Find(p);
      if (x != nullptr && y != nullptr && *x == *y) continue;
      (void)b.Set(p, *y);
      changed = true;
    }
    if (changed) {
      absl::StatusOr<WriteResult> w =
          registry()->Update(*slices, ns, live->name(), std::move(b));
      if (w.ok()) Made(*w->object);
      s = w.status();
      if (IsRaceError(s)) s = absl::OkStatus();
    }
  }
  if (!s.ok()) {
    LOG(WARNING) << "endpoints controller: write failed endpointslice for "
                 << ns << "/" << name << ": " << s;
    ok = false;
  }
  return ok;
}

}  // namespace apiserver
}  // namespace kcr
