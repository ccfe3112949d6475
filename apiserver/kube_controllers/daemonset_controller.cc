#include "apiserver/kube_controllers/daemonset_controller.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "api/json/json_util.h"
#include "api/object_builder.h"
#include "api/selector/label_selector.h"
#include "api/types/field.h"
#include "api/types/time.h"
#include "apiserver/kube_controllers/controller_history.h"
#include "apiserver/kube_controllers/controller_indexes.h"
#include "apiserver/kube_controllers/pod_util.h"
#include "apiserver/kube_controllers/scheduler.h"
#include "apiserver/kube_controllers/stored_objects.h"
#include "base/str_cat.h"
#include "base/string_view.h"
#include "glog/logging.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace {

namespace field = ::kcr::api::field;
using Value = rapidjson::Value;

constexpr char kDaemonSetsKey[] = "apps/daemonsets";
constexpr char kPodsKey[] = "/pods";
constexpr char kNodesKey[] = "/nodes";
constexpr char kRevisionsKey[] = "apps/controllerrevisions";

// kube's failedPodsBackoff: flowcontrol.NewBackOff(1s, 15min).
constexpr absl::Duration kFailedBackoffInitial = absl::Seconds(1);
constexpr absl::Duration kFailedBackoffMax = absl::Minutes(15);

std::string_view NodeNameOf(const api::Object& pod) {
  return field::String(field::Object(&pod.json(), "spec"), "nodeName");
}

// The node a daemon pod is for (kube's util.GetTargetNodeName):
// spec.nodeName, or the one value of the metadata.name matchField its
// required node affinity carries.
std::string TargetNode(const api::Object& pod) {
  if (std::string_view n = NodeNameOf(pod); !n.empty()) return std::string(n);
  const Value* terms = pod.Find(
      "/spec/affinity/nodeAffinity/"
      "requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms");
  if (terms == nullptr || !terms->IsArray()) return "";
  for (const Value& term : terms->GetArray()) {
    const Value* fields = field::Array(&term, "matchFields");
    if (fields == nullptr) continue;
    for (const Value& r : fields->GetArray()) {
      const Value* values = field::Array(&r, "values");
      if (field::String(&r, "key") == "metadata.name" &&
          field::String(&r, "operator") == "In" && values != nullptr &&
          values->Size() == 1 && (*values)[0].IsString()) {
        return std::string(field::View((*values)[0]));
      }
    }
  }
  return "";
}

// kube's podByCreationTimestampAndPhase: scheduled first, then oldest.
bool OlderFirst(const api::ObjectPtr& a, const api::ObjectPtr& b) {
  const bool a_bound = !NodeNameOf(*a).empty();
  const bool b_bound = !NodeNameOf(*b).empty();
  if (a_bound != b_bound) return a_bound;
  if (a->creation_timestamp() != b->creation_timestamp()) {
    return a->creation_timestamp() < b->creation_timestamp();
  }
  return a->name() < b->name();
}

// kube's util.AddOrUpdateDaemonPodTolerations on a pod spec.
void AddDaemonTolerations(Value* spec, rapidjson::MemoryPoolAllocator<>& a) {
  if (!spec->IsObject()) return;
  if (!spec->HasMember("tolerations") || !(*spec)["tolerations"].IsArray()) {
    spec->RemoveMember("tolerations");
    spec->AddMember("tolerations", Value(rapidjson::kArrayType), a);
  }
  Value& tolerations = (*spec)["tolerations"];
  const Value* host_network = field::Member(spec, "hostNetwork");
  const bool host = host_network != nullptr && host_network->IsBool() &&
                    host_network->GetBool();
  struct Toleration {
    const char* key;
    const char* effect;
  };
  std::vector<Toleration> wanted = {
      {"node.kubernetes.io/not-ready", "NoExecute"},
      {"node.kubernetes.io/unreachable", "NoExecute"},
      {"node.kubernetes.io/disk-pressure", "NoSchedule"},
      {"node.kubernetes.io/memory-pressure", "NoSchedule"},
      {"node.kubernetes.io/pid-pressure", "NoSchedule"},
      {"node.kubernetes.io/unschedulable", "NoSchedule"},
  };
  if (host)
    wanted.push_back({"node.kubernetes.io/network-unavailable", "NoSchedule"});
  for (const Toleration& t : wanted) {
    // AddOrUpdateTolerationInPodSpec: one with the same key, operator,
    // value and effect is replaced.
    Value want(rapidjson::kObjectType);
    want.AddMember("key", Value(t.key, a), a);
    want.AddMember("operator", "Exists", a);
    want.AddMember("effect", Value(t.effect, a), a);
    bool replaced = false;
    for (Value& have : tolerations.GetArray()) {
      if (field::String(&have, "key") == t.key &&
          field::String(&have, "operator") == "Exists" &&
          field::String(&have, "value").empty() &&
          field::String(&have, "effect") == t.effect) {
        have = want;
        replaced = true;
        break;
      }
    }
    if (!replaced) tolerations.PushBack(want, a);
  }
}

// The template's spec with the daemon tolerations, as a pod (kube's NewPod
// without a node name): what NodeShouldRunDaemonPod filters nodes with.
absl::StatusOr<api::ObjectPtr> PrototypePod(const api::Object& ds) {
  api::ObjectBuilder b("v1", "Pod");
  const Value* spec = ds.Find("/spec/template/spec");
  if (spec != nullptr && spec->IsObject()) {
    if (absl::Status s = b.Set("/spec", *spec); !s.ok()) return s;
  } else {
    (void)b.SetJson("/spec", "{}");
  }
  AddDaemonTolerations(&b.json()["spec"], b.allocator());
  b.Remove("/spec/nodeName");
  return b.Build();
}

DaemonPlacement ShouldRun(const api::Object& node, const api::Object& ds,
                          const api::Object& prototype) {
  DaemonPlacement out;
  const std::string_view node_name =
      field::String(ds.Find("/spec/template/spec"), "nodeName");
  if (!node_name.empty() && node_name != node.name()) return out;
  if (!MatchesNodeAffinity(prototype, node)) return out;
  if (UntoleratedTaint(prototype, node, false) != nullptr) {
    out.should_continue_running =
        UntoleratedTaint(prototype, node, true) == nullptr;
    return out;
  }
  out.should_run = out.should_continue_running = true;
  return out;
}

// An IntOrString of the rolling update scaled to `total` (percentages
// rounded up, as kube's GetScaledValueFromIntOrPercent with roundUp).
int64_t Scaled(const Value* v, int64_t total) {
  if (v == nullptr) return 0;
  if (v->IsInt64()) return v->GetInt64();
  if (!v->IsString()) return 0;
  std::string_view s = field::View(*v);
  if (s.empty() || s.back() != '%') return 0;
  int64_t pct = 0;
  if (!absl::SimpleAtoi(ToAbsl(s.substr(0, s.size() - 1)), &pct)) return 0;
  return (pct * total + 99) / 100;
}

absl::StatusOr<api::LabelSelector> SelectorOf(const api::Object& ds) {
  const Value* selector =
      field::Member(field::Object(&ds.json(), "spec"), "selector");
  if (selector == nullptr || selector->IsNull()) {
    return api::LabelSelector::Nothing();
  }
  return api::LabelSelector::FromLabelSelector(*selector);
}

bool Selects(const api::LabelSelector& selector, const api::Object& pod) {
  return selector.Matches(
      field::Object(field::Object(&pod.json(), "metadata"), "labels"));
}

api::OwnerReferenceView ControllerRef(const api::Object& ds) {
  api::OwnerReferenceView ref;
  ref.api_version = "apps/v1";
  ref.kind = "DaemonSet";
  ref.name = ds.name();
  ref.uid = ds.uid();
  ref.controller = true;
  ref.block_owner_deletion = true;
  return ref;
}

}  // namespace

DaemonPlacement NodeShouldRunDaemonPod(const api::Object& node,
                                       const api::Object& ds) {
  absl::StatusOr<api::ObjectPtr> prototype = PrototypePod(ds);
  if (!prototype.ok()) return {};
  return ShouldRun(node, ds, **prototype);
}

struct DaemonSetController::SyncState {
  const ResourceInfo* daemonsets = nullptr;
  const ResourceInfo* pods = nullptr;
  api::ObjectPtr ds;
  api::ObjectPtr prototype;
  api::LabelSelector selector;
  std::string hash;
  int64_t collision_count = 0;
  std::string generation;  // empty when the annotation is missing
  int64_t min_ready_seconds = 0;
  bool rolling = false;
  bool surge = false;
  // The Nodes in name order, with the placement of the DaemonSet on each.
  std::vector<std::pair<api::ObjectPtr, DaemonPlacement>> nodes;
  // The DaemonSet's pods by the node they target (kube's
  // getNodesToDaemonPods), terminal pods being deleted left out.
  std::map<std::string, std::vector<api::ObjectPtr>> node_pods;
  absl::Time next = absl::InfiniteFuture();

  // kube's util.IsPodUpdated.
  bool Updated(const api::Object& pod) const {
    const std::optional<std::string_view> h = pod.Label(kDaemonSetUniqueLabel);
    if (!hash.empty() && h.has_value() && *h == hash) return true;
    const std::optional<std::string_view> g =
        pod.Label(kPodTemplateGenerationLabel);
    return !generation.empty() && g.has_value() && *g == generation;
  }
};

DaemonSetController::DaemonSetController(Registry* registry, const Clock* clock,
                                         IncrementalControllerOptions options)
    : IncrementalController(registry, clock, options),
      events_(registry, "daemonset-controller") {
  AddControllerIndexes(registry->storage());
}

bool DaemonSetController::Wants(const StoredEvent& event) const {
  return event.collection == kDaemonSetsKey || event.collection == kPodsKey ||
         event.collection == kNodesKey || event.collection == kRevisionsKey;
}

void DaemonSetController::EnqueueForPod(const api::Object& pod) {
  if (const std::optional<api::OwnerReferenceView> ref =
          pod.controller_reference()) {
    if (ref->kind == "DaemonSet" && ref->api_version == "apps/v1") {
      Enqueue(Storage::Key(pod.namespace_(), ref->name));
    }
    return;
  }
  if (pod.being_deleted()) return;
  // An orphan: the DaemonSets that select it.
  for (const api::ObjectPtr& ds :
       SelectorCandidates(*storage(), kDaemonSetsKey, pod)) {
    absl::StatusOr<api::LabelSelector> selector = SelectorOf(*ds);
    if (selector.ok() && Selects(*selector, pod)) {
      Enqueue(Storage::Key(ds->namespace_(), ds->name()));
    }
  }
}

void DaemonSetController::OnNodeEvent(const StoredEvent& event) {
  const api::Object* before =
      event.type == EventType::kAdded ? nullptr : event.previous.get();
  const api::Object* after =
      event.type == EventType::kDeleted ? nullptr : event.object.get();
  if (event.type == EventType::kDeleted) before = event.object.get();
  // kube's shouldIgnoreNodeUpdate: only labels and taints place pods.
  if (before != nullptr && after != nullptr) {
    const Value* lb = field::Object(&before->json(), "metadata");
    const Value* la = field::Object(&after->json(), "metadata");
    const Value* old_labels = field::Member(lb, "labels");
    const Value* new_labels = field::Member(la, "labels");
    const Value* old_taints = before->Find("/spec/taints");
    const Value* new_taints = after->Find("/spec/taints");
    auto same = [](const Value* x, const Value* y) {
      if (x == nullptr || y == nullptr) return x == y;
      return json::JsonDeepEqual(*x, *y);
    };
    if (same(old_labels, new_labels) && same(old_taints, new_taints)) return;
  }
  for (const api::ObjectPtr& ds : storage()->Snapshot(kDaemonSetsKey)) {
    absl::StatusOr<api::ObjectPtr> prototype = PrototypePod(*ds);
    if (!prototype.ok()) continue;
    DaemonPlacement old_p, new_p;
    if (before != nullptr) old_p = ShouldRun(*before, *ds, **prototype);
    if (after != nullptr) new_p = ShouldRun(*after, *ds, **prototype);
    const bool queue =
        before == nullptr ? new_p.should_run
        : after == nullptr
            ? old_p.should_continue_running
            : (old_p.should_run != new_p.should_run ||
               old_p.should_continue_running != new_p.should_continue_running);
    if (queue) Enqueue(Storage::Key(ds->namespace_(), ds->name()));
  }
}

void DaemonSetController::OnEvent(const StoredEvent& event) {
  if (event.collection == kDaemonSetsKey) {
    Enqueue(Storage::Key(event.object->namespace_(), event.object->name()));
  } else if (event.collection == kPodsKey) {
    EnqueueForPod(*event.object);
    if (event.previous != nullptr) EnqueueForPod(*event.previous);
  } else if (event.collection == kNodesKey) {
    OnNodeEvent(event);
  } else if (event.collection == kRevisionsKey) {
    // kube's addHistory / updateHistory / deleteHistory: the owner, or
    // for an orphan the DaemonSets that may adopt it.
    EnqueueForPod(*event.object);
    if (event.previous != nullptr) EnqueueForPod(*event.previous);
  }
}

void DaemonSetController::EnqueueAll() {
  for (const api::ObjectPtr& ds : storage()->Snapshot(kDaemonSetsKey)) {
    Enqueue(Storage::Key(ds->namespace_(), ds->name()));
  }
}

std::map<std::string, std::vector<api::ObjectPtr>>
DaemonSetController::ClaimPods(const ResourceInfo& pods, const api::Object& ds,
                               const std::vector<api::ObjectPtr>& candidates) {
  absl::StatusOr<api::LabelSelector> selector = SelectorOf(ds);
  std::map<std::string, std::vector<api::ObjectPtr>> out;
  for (const api::ObjectPtr& pod : candidates) {
    const std::optional<api::OwnerReferenceView> ref =
        pod->controller_reference();
    const bool matches = selector.ok() && Selects(*selector, *pod);
    api::ObjectPtr owned;
    if (ref.has_value() && ref->uid == ds.uid()) {
      if (matches) {
        owned = pod;
      } else if (!ds.being_deleted()) {
        api::ObjectBuilder b = pod->ToBuilder();
        b.RemoveOwnerReference(ds.uid());
        absl::Status s =
            registry()
                ->Update(pods, pod->namespace_(), pod->name(), std::move(b))
                .status();
        if (!s.ok() && !IsRaceError(s)) {
          LOG(WARNING) << "daemonset controller: releasing pod=" << pod->Key()
                       << " failed: " << s;
        }
      }
    } else if (!ref.has_value() && matches && !ds.being_deleted() &&
               !pod->being_deleted()) {
      api::ObjectBuilder b = pod->ToBuilder();
      b.AddOwnerReference(ControllerRef(ds));
      absl::StatusOr<WriteResult> w = registry()->Update(
          pods, pod->namespace_(), pod->name(), std::move(b));
      if (w.ok()) {
        owned = w->object;
      } else if (!IsRaceError(w.status())) {
        LOG(WARNING) << "daemonset controller: adopting pod=" << pod->Key()
                     << " failed: " << w.status();
      }
    }
    if (owned == nullptr) continue;
    // Terminal pods being deleted are gone for the controller.
    const std::string_view phase = PodPhase(*owned);
    if (owned->being_deleted() && (phase == "Succeeded" || phase == "Failed")) {
      continue;
    }
    std::string node = TargetNode(*owned);
    if (node.empty()) {
      LOG_EVERY_N(WARNING, 100)
          << "daemonset controller: pod=" << owned->Key() << " targets no node";
      continue;
    }
    out[node].push_back(std::move(owned));
  }
  return out;
}

absl::Time DaemonSetController::SyncKey(const std::string& key,
                                        absl::Time now) {
  ResourceRegistry* resources = registry()->resources();
  ResourceInfoPtr daemonsets = resources->Lookup("apps", "v1", "daemonsets");
  ResourceInfoPtr pods = resources->Lookup("", "v1", "pods");
  if (daemonsets == nullptr || pods == nullptr) return absl::InfiniteFuture();
  if (now - backoff_gc_ >= absl::Minutes(1)) {
    backoff_gc_ = now;
    absl::erase_if(failed_backoff_, [now](const auto& entry) {
      return now - entry.second.updated > 2 * kFailedBackoffMax;
    });
  }
  SyncState st;
  st.daemonsets = daemonsets.get();
  st.pods = pods.get();
  st.ds = storage()->GetByKey(daemonsets->StorageKey(), key);
  // Gone, or going: its pods are the garbage collector's.
  if (st.ds == nullptr || st.ds->being_deleted()) return absl::InfiniteFuture();
  const api::Object& ds = *st.ds;
  absl::StatusOr<api::LabelSelector> selector = SelectorOf(ds);
  if (!selector.ok() || selector->Empty() || selector->IsNothing()) {
    LOG_EVERY_N(WARNING, 100)
        << "daemonset controller: bad or empty selector ds=" << ds.Key();
    return absl::InfiniteFuture();
  }
  st.selector = *selector;
  absl::StatusOr<api::ObjectPtr> prototype = PrototypePod(ds);
  if (!prototype.ok()) {
    LOG_EVERY_N(WARNING, 100)
        << "daemonset controller: bad template ds=" << ds.Key() << ": "
        << prototype.status();
    return absl::InfiniteFuture();
  }
  st.prototype = *prototype;
  const Value* spec = field::Object(&ds.json(), "spec");
  // kube's constructHistory: the ControllerRevision of the template now.
  absl::StatusOr<History> history =
      SyncHistory(registry(), ds, kDaemonSetHistory);
  if (!history.ok()) {
    if (!IsRaceError(history.status())) {
      LOG_EVERY_N(WARNING, 100)
          << "daemonset controller: history of ds=" << ds.Key() << ": "
          << history.status();
    }
    return now + absl::Seconds(1);
  }
  st.hash = history->hash;
  st.collision_count = history->collision_count;
  if (std::optional<std::string_view> g =
          ds.Annotation(kDaemonSetTemplateGenerationAnnotation)) {
    st.generation = std::string(*g);
  }
  st.min_ready_seconds = field::Int64(spec, "minReadySeconds").value_or(0);
  const Value* strategy = field::Object(spec, "updateStrategy");
  st.rolling = field::String(strategy, "type") != "OnDelete";
  st.surge = st.rolling &&
             Scaled(field::Member(field::Object(strategy, "rollingUpdate"),
                                  "maxSurge"),
                    1) != 0;
  for (api::ObjectPtr& node : storage()->Snapshot(kNodesKey)) {
    const DaemonPlacement p = ShouldRun(*node, ds, *st.prototype);
    st.nodes.emplace_back(std::move(node), p);
  }

  auto read_pods = [&] {
    std::vector<api::ObjectPtr> candidates =
        storage()->ByIndex(pods->StorageKey(), kControllerIndex, ds.uid());
    for (api::ObjectPtr& orphan :
         storage()->ByIndex(pods->StorageKey(), kControllerIndex,
                            OrphanKey(ds.namespace_()))) {
      candidates.push_back(std::move(orphan));
    }
    st.node_pods = ClaimPods(*pods, ds, candidates);
  };
  read_pods();
  const uint64_t before = writes_;
  Manage(&st, now);
  // As kube's expectations hold the rolling update back until the pods
  // manage wrote are seen, it runs when manage had nothing to do (the
  // writes queue the DaemonSet again).
  if (writes_ == before && st.rolling) RollingUpdate(&st, now);
  if (writes_ != before) read_pods();
  // kube's cleanupHistory: revisions beyond revisionHistoryLimit that no
  // pod runs.
  absl::flat_hash_set<std::string> live_hashes, live;
  for (const auto& [node, pods] : st.node_pods) {
    for (const api::ObjectPtr& pod : pods) {
      if (auto h = pod->Label(kDaemonSetUniqueLabel)) {
        live_hashes.insert(std::string(*h));
      }
    }
  }
  for (const api::ObjectPtr& r : history->revisions) {
    auto h = r->Label(kDaemonSetUniqueLabel);
    if (h.has_value() && live_hashes.contains(std::string(*h))) {
      live.insert(std::string(r->name()));
    }
  }
  if (absl::Status s = TruncateHistory(
          registry(), *history, live,
          field::Int64(spec, "revisionHistoryLimit").value_or(10));
      !s.ok() && !IsRaceError(s)) {
    LOG_EVERY_N(WARNING, 100) << "daemonset controller: truncating history "
                                 "of ds="
                              << ds.Key() << ": " << s;
  }
  return std::min(st.next, UpdateStatus(&st, now));
}

void DaemonSetController::Manage(SyncState* st, absl::Time now) {
  const api::Object& ds = *st->ds;
  std::vector<std::string> needing;
  std::vector<api::ObjectPtr> victims;
  std::set<std::string, std::less<>> known;
  for (const auto& [node, placement] : st->nodes) {
    known.emplace(node->name());
    auto it = st->node_pods.find(std::string(node->name()));
    const bool exists = it != st->node_pods.end() && !it->second.empty();
    if (placement.should_run && !exists) {
      needing.emplace_back(node->name());
      continue;
    }
    if (!exists) continue;
    std::vector<api::ObjectPtr>& pods = it->second;
    if (!placement.should_continue_running) {
      for (const api::ObjectPtr& pod : pods) {
        if (!pod->being_deleted()) victims.push_back(pod);
      }
      continue;
    }
    std::vector<api::ObjectPtr> running;
    for (const api::ObjectPtr& pod : pods) {
      if (pod->being_deleted()) continue;
      const std::string_view phase = PodPhase(*pod);
      if (phase == "Failed") {
        // kube's failedPodsBackoff keeps a node whose pods keep failing
        // from a hot loop.
        const std::string backoff_key = Cat(ds.uid(), "/", node->name());
        auto b = failed_backoff_.find(backoff_key);
        if (b != failed_backoff_.end() &&
            now - b->second.updated < b->second.delay) {
          st->next = std::min(st->next, b->second.updated + b->second.delay);
          continue;
        }
        if (b == failed_backoff_.end() ||
            now - b->second.updated > 2 * kFailedBackoffMax) {
          failed_backoff_[backoff_key] = {kFailedBackoffInitial, now};
        } else {
          b->second.delay = std::min(2 * b->second.delay, kFailedBackoffMax);
          b->second.updated = now;
        }
        events_.Record(
            ds, "apps/v1", "DaemonSet", true, "FailedDaemonPod",
            Cat("Found failed daemon pod ", pod->namespace_(), "/", pod->name(),
                " on node ", node->name(), ", will try to kill it"),
            now);
        victims.push_back(pod);
      } else if (phase == "Succeeded") {
        victims.push_back(pod);
      } else {
        running.push_back(pod);
      }
    }
    if (running.size() <= 1) continue;
    std::sort(running.begin(), running.end(), OlderFirst);
    if (!st->surge) {
      // All but the oldest.
      for (size_t i = 1; i < running.size(); ++i) victims.push_back(running[i]);
      continue;
    }
    // With surge, an old and a new pod may run together while the new one
    // is not yet available.
    api::ObjectPtr oldest_new, oldest_old;
    for (const api::ObjectPtr& pod : running) {
      const std::optional<std::string_view> h =
          pod->Label(kDaemonSetUniqueLabel);
      api::ObjectPtr& slot =
          h.has_value() && *h == st->hash ? oldest_new : oldest_old;
      if (slot == nullptr) {
        slot = pod;
      } else {
        victims.push_back(pod);
      }
    }
    if (oldest_new != nullptr && oldest_old != nullptr) {
      if (!PodReadySince(*oldest_old).has_value()) {
        victims.push_back(oldest_old);
      } else if (PodAvailable(*oldest_new, st->min_ready_seconds, now,
                              &st->next)) {
        victims.push_back(oldest_old);
      }
    }
  }
  // Pods bound to nodes that no longer exist (kube's pod garbage collector
  // deletes those; unscheduled ones its manage does).
  for (const auto& [node, pods] : st->node_pods) {
    if (known.count(node) > 0) continue;
    for (const api::ObjectPtr& pod : pods) {
      if (!pod->being_deleted()) victims.push_back(pod);
    }
  }
  SyncNodes(st, needing, victims, now);
}

void DaemonSetController::RollingUpdate(SyncState* st, absl::Time now) {
  const Value* rolling = st->ds->Find("/spec/updateStrategy/rollingUpdate");
  int64_t desired = 0;
  for (const auto& [node, placement] : st->nodes) {
    if (!placement.should_run) continue;
    ++desired;
    st->node_pods.try_emplace(std::string(node->name()));
  }
  int64_t max_surge = Scaled(field::Member(rolling, "maxSurge"), desired);
  int64_t max_unavailable =
      Scaled(field::Member(rolling, "maxUnavailable"), desired);
  if (desired > 0 && max_unavailable == 0 && max_surge == 0) {
    max_unavailable = 1;
  }
  // kube's findUpdatedPodsOnNode: false when a node has two of a kind.
  auto split = [&](const std::vector<api::ObjectPtr>& pods,
                   api::ObjectPtr* new_pod, api::ObjectPtr* old_pod) {
    for (const api::ObjectPtr& pod : pods) {
      if (pod->being_deleted()) continue;
      api::ObjectPtr& slot = st->Updated(*pod) ? *new_pod : *old_pod;
      if (slot != nullptr) return false;
      slot = pod;
    }
    return true;
  };
  const int64_t min_ready = st->min_ready_seconds;
  if (max_surge == 0) {
    int64_t unavailable = 0;
    std::vector<api::ObjectPtr> allowed, candidates;
    for (const auto& [node, pods] : st->node_pods) {
      api::ObjectPtr new_pod, old_pod;
      if (!split(pods, &new_pod, &old_pod) ||
          (new_pod == nullptr) == (old_pod == nullptr)) {
        ++unavailable;
      } else if (new_pod != nullptr) {
        if (!PodAvailable(*new_pod, min_ready, now, &st->next)) ++unavailable;
      } else if (!PodAvailable(*old_pod, min_ready, now)) {
        allowed.push_back(old_pod);
      } else if (unavailable < max_unavailable) {
        candidates.push_back(old_pod);
      }
    }
    int64_t remaining = std::max<int64_t>(0, max_unavailable - unavailable);
    remaining = std::min<int64_t>(remaining, candidates.size());
    allowed.insert(allowed.end(), candidates.begin(),
                   candidates.begin() + remaining);
    SyncNodes(st, {}, allowed, now);
    return;
  }
  int64_t surging = 0;
  std::vector<api::ObjectPtr> victims;
  std::vector<std::string> allowed, candidates;
  for (const auto& [node, pods] : st->node_pods) {
    api::ObjectPtr new_pod, old_pod;
    if (!split(pods, &new_pod, &old_pod)) {
      ++surging;
      continue;
    }
    if (old_pod == nullptr) continue;
    if (new_pod == nullptr) {
      if (!PodAvailable(*old_pod, min_ready, now)) {
        bool should_run = false;
        for (const auto& [n, p] : st->nodes) {
          if (n->name() == node) should_run = p.should_run;
        }
        if (should_run) allowed.push_back(node);
      } else if (surging < max_surge) {
        candidates.push_back(node);
      }
      continue;
    }
    if (!PodAvailable(*new_pod, min_ready, now, &st->next)) {
      ++surging;
      continue;
    }
    victims.push_back(old_pod);
  }
  int64_t remaining = std::max<int64_t>(0, max_surge - surging);
  remaining = std::min<int64_t>(remaining, candidates.size());
  allowed.insert(allowed.end(), candidates.begin(),
                 candidates.begin() + remaining);
  SyncNodes(st, allowed, victims, now);
}

bool DaemonSetController::SyncNodes(SyncState* st,
                                    const std::vector<std::string>& nodes,
                                    const std::vector<api::ObjectPtr>& victims,
                                    absl::Time now) {
  const api::Object& ds = *st->ds;
  bool wrote = false;
  for (const std::string& node : nodes) {
    // kube's CreatePodTemplate and ReplaceDaemonSetPodNodeNameNodeAffinity.
    api::ObjectBuilder b("v1", "Pod");
    b.SetGenerateName(Cat(ds.name(), "-"));
    b.SetNamespace(ds.namespace_());
    const Value* meta = ds.Find("/spec/template/metadata");
    absl::Status s;
    for (const char* key : {"labels", "annotations", "finalizers"}) {
      if (const Value* v = field::Member(meta, key); v != nullptr && s.ok()) {
        s = b.Set(Cat("/metadata/", key), *v);
      }
    }
    if (!st->generation.empty()) {
      b.SetLabel(kPodTemplateGenerationLabel, st->generation);
    }
    b.SetLabel(kDaemonSetUniqueLabel, st->hash);
    b.AddOwnerReference(ControllerRef(ds));
    if (s.ok()) s = b.Set("/spec", *st->prototype->Find("/spec"));
    if (s.ok()) {
      s = b.SetJson(
          "/spec/affinity/nodeAffinity/"
          "requiredDuringSchedulingIgnoredDuringExecution",
          R"({"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name",)"
          R"("operator":"In","values":[""]}]}]})");
    }
    if (s.ok()) {
      s = b.SetString(
          "/spec/affinity/nodeAffinity/"
          "requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/0/"
          "matchFields/0/values/0",
          node);
    }
    if (!s.ok()) {
      LOG_EVERY_N(WARNING, 100)
          << "daemonset controller: bad template ds=" << ds.Key() << ": " << s;
      break;
    }
    absl::StatusOr<WriteResult> created =
        registry()->Create(*st->pods, ds.namespace_(), std::move(b));
    ++writes_;
    wrote = true;
    if (!created.ok()) {
      LOG_EVERY_N(WARNING, 100)
          << "daemonset controller: creating a pod for ds=" << ds.Key()
          << " failed: " << created.status();
      events_.Record(ds, "apps/v1", "DaemonSet", true, "FailedCreate",
                     Cat("Error creating: ", created.status().message()), now);
      st->next = std::min(st->next, now + absl::Seconds(1));
      break;
    }
    events_.Record(ds, "apps/v1", "DaemonSet", false, "SuccessfulCreate",
                   Cat("Created pod: ", created->object->name()), now);
  }
  for (const api::ObjectPtr& pod : victims) {
    DeleteOptions o;
    o.precondition_uid = std::string(pod->uid());
    absl::Status s = registry()
                         ->Delete(*st->pods, pod->namespace_(), pod->name(), o)
                         .status();
    ++writes_;
    wrote = true;
    if (s.ok()) {
      events_.Record(ds, "apps/v1", "DaemonSet", false, "SuccessfulDelete",
                     Cat("Deleted pod: ", pod->name()), now);
    } else if (!IsRaceError(s)) {
      LOG(WARNING) << "daemonset controller: deleting pod=" << pod->Key()
                   << " failed: " << s;
      events_.Record(ds, "apps/v1", "DaemonSet", true, "FailedDelete",
                     Cat("Error deleting: ", s.message()), now);
    }
  }
  if (wrote) {
    VLOG(2) << "daemonset controller: ds=" << ds.Key()
            << " created=" << nodes.size() << " deleted=" << victims.size();
  }
  return wrote;
}

absl::Time DaemonSetController::UpdateStatus(SyncState* st, absl::Time now) {
  const api::Object& ds = *st->ds;
  int64_t desired = 0, current = 0, misscheduled = 0, ready = 0, available = 0,
          updated = 0;
  absl::Time next = absl::InfiniteFuture();
  for (const auto& [node, placement] : st->nodes) {
    auto it = st->node_pods.find(std::string(node->name()));
    const bool scheduled = it != st->node_pods.end() && !it->second.empty();
    if (!placement.should_run) {
      if (scheduled) ++misscheduled;
      continue;
    }
    ++desired;
    if (!scheduled) continue;
    ++current;
    std::vector<api::ObjectPtr> pods = it->second;
    std::sort(pods.begin(), pods.end(), OlderFirst);
    const api::Object& pod = *pods.front();
    if (PodReadySince(pod).has_value()) {
      ++ready;
      if (PodAvailable(pod, st->min_ready_seconds, now, &next)) ++available;
    }
    if (st->Updated(pod)) ++updated;
  }
  rapidjson::MemoryPoolAllocator<> a(1024);
  const Value* old_status = field::Object(&ds.json(), "status");
  Value status(rapidjson::kObjectType);
  if (old_status != nullptr) status.CopyFrom(*old_status, a);
  SetStatusCount(&status, "currentNumberScheduled", current, false, a);
  SetStatusCount(&status, "numberMisscheduled", misscheduled, false, a);
  SetStatusCount(&status, "desiredNumberScheduled", desired, false, a);
  SetStatusCount(&status, "numberReady", ready, false, a);
  SetStatusCount(&status, "observedGeneration", ds.generation(), true, a);
  SetStatusCount(&status, "updatedNumberScheduled", updated, true, a);
  SetStatusCount(&status, "numberAvailable", available, true, a);
  SetStatusCount(&status, "numberUnavailable", desired - available, true, a);
  if (st->collision_count > 0) {
    SetStatusCount(&status, "collisionCount", st->collision_count, true, a);
  }
  if (old_status != nullptr && json::JsonDeepEqual(status, *old_status)) {
    return next;
  }
  api::ObjectBuilder b = StatusWriteOf(ds, /*with_annotations=*/true);
  (void)b.Set("/status", status);
  WriteOptions w;
  w.subresource = "status";
  absl::Status s =
      registry()
          ->Update(*st->daemonsets, ds.namespace_(), ds.name(), std::move(b), w)
          .status();
  if (!s.ok() && !IsRaceError(s)) {
    LOG(WARNING) << "daemonset controller: status of ds=" << ds.Key()
                 << " failed: " << s;
  }
  return next;
}

}  // namespace apiserver
}  // namespace kcr
