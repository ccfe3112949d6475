#include "apiserver/kube_controllers/node_simulator.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/object_builder.h"
#include "api/types/event.h"
#include "api/types/time.h"
#include "apiserver/kube_controllers/stored_objects.h"
#include "base/str_cat.h"
#include "base/string_view.h"
#include "glog/logging.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace apiserver {
namespace {

using Value = rapidjson::Value;
using Allocator = rapidjson::MemoryPoolAllocator<>;

constexpr char kPodsKey[] = "/pods";
constexpr char kDeploymentsKey[] = "apps/deployments";
constexpr char kNodesKey[] = "/nodes";
// Key prefixes that tell a deployment's and the node's keys from a pod's
// ("ns/name": a namespace has no ':').
constexpr std::string_view kDeploymentPrefix = "deployment:";
constexpr char kNodeKey[] = "node:";

// How long a failed write waits before it is tried again (kube's
// rate-limited requeue).
constexpr absl::Duration kRetry = absl::Seconds(1);

Value Str(std::string_view s, Allocator& a) {
  // An empty view may carry a null pointer, which RapidJSON rejects.
  if (s.empty()) return Value("", 0, a);
  return Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

std::string_view StrOf(const Value* v) {
  if (v == nullptr || !v->IsString()) return {};
  return std::string_view(v->GetString(), v->GetStringLength());
}

const Value* Member(const Value* o, const char* key) {
  if (o == nullptr || !o->IsObject()) return nullptr;
  auto it = o->FindMember(key);
  return it == o->MemberEnd() ? nullptr : &it->value;
}

std::optional<absl::Time> TimeOf(const Value* v) {
  std::string_view s = StrOf(v);
  if (s.empty()) return std::nullopt;
  absl::StatusOr<absl::Time> t = api::ParseTime(s);
  if (!t.ok()) return std::nullopt;
  return *t;
}

// The duration in annotation `key`, or `fallback`.
absl::Duration AnnotationDuration(const api::Object& pod, const char* key,
                                  absl::Duration fallback) {
  std::optional<std::string_view> v = pod.Annotation(key);
  if (!v.has_value()) return fallback;
  absl::Duration d;
  if (!absl::ParseDuration(std::string(*v), &d) || d < absl::ZeroDuration()) {
    LOG_EVERY_N(WARNING, 100)
        << "node simulator: bad " << key << "=\"" << *v << "\" on pod "
        << pod.Key() << "; using " << fallback;
    return fallback;
  }
  return d;
}

// 64 hex digits derived from `seed`, for container IDs.
std::string Hex64(const std::string& seed) {
  std::string out;
  for (int i = 0; i < 4; ++i) {
    char buf[17];
    std::snprintf(buf, sizeof(buf), "%016zx",
                  std::hash<std::string>()(Cat(seed, "#", i)));
    out += buf;
  }
  return out.substr(0, 64);
}

std::string ContainerId(const api::Object& pod, std::string_view container) {
  return "containerd://" + Hex64(Cat(pod.uid(), "/", container));
}

Value PodCondition(const char* type, bool status, const std::string& at,
                   const char* reason, Allocator& a) {
  Value c(rapidjson::kObjectType);
  c.AddMember("type", Str(type, a), a);
  c.AddMember("status", Str(status ? "True" : "False", a), a);
  c.AddMember("lastProbeTime", Value(rapidjson::kNullType), a);
  c.AddMember("lastTransitionTime", Str(at, a), a);
  if (reason != nullptr) c.AddMember("reason", Str(reason, a), a);
  return c;
}

Value IpList(const std::string& ip, Allocator& a) {
  Value list(rapidjson::kArrayType);
  Value entry(rapidjson::kObjectType);
  entry.AddMember("ip", Str(ip, a), a);
  list.PushBack(entry, a);
  return list;
}

// What a container status reports, by stage.
// kInitializing: waiting for the init containers (reason PodInitializing);
// kInitRunning: the first init container runs, the others wait.
enum class Stage {
  kCreating,
  kInitializing,
  kInitRunning,
  kRunning,
  kTerminated
};

struct Outcome {
  bool failed = false;
  int64_t exit_code = 0;
  std::string message;
};

Outcome OutcomeOf(const api::Object& pod) {
  Outcome o;
  std::optional<std::string_view> outcome =
      pod.Annotation(kSimOutcomeAnnotation);
  if (outcome.has_value() && *outcome == "Failed") {
    o.failed = true;
    o.exit_code = 1;
  } else if (outcome.has_value() && *outcome != "Succeeded") {
    LOG_EVERY_N(WARNING, 100)
        << "node simulator: bad " << kSimOutcomeAnnotation << "=\"" << *outcome
        << "\" on pod " << pod.Key() << "; using Succeeded";
  }
  if (std::optional<std::string_view> code =
          pod.Annotation(kSimExitCodeAnnotation)) {
    int64_t v;
    if (absl::SimpleAtoi(std::string(*code), &v)) {
      o.exit_code = v;
    } else {
      LOG_EVERY_N(WARNING, 100)
          << "node simulator: bad " << kSimExitCodeAnnotation << "=\"" << *code
          << "\" on pod " << pod.Key();
    }
  }
  if (std::optional<std::string_view> m =
          pod.Annotation(kSimMessageAnnotation)) {
    o.message = std::string(*m);
  }
  return o;
}

// status.containerStatuses (or initContainerStatuses) for the containers in
// spec.<list>.
Value ContainerStatuses(const api::Object& pod, const char* list, Stage stage,
                        const std::string& started, const std::string& now,
                        const Outcome& outcome, Allocator& a) {
  Value out(rapidjson::kArrayType);
  const Value* containers = Member(Member(&pod.json(), "spec"), list);
  if (containers == nullptr || !containers->IsArray()) return out;
  bool first = true;
  for (const auto& c : containers->GetArray()) {
    const std::string_view name = StrOf(Member(&c, "name"));
    const std::string_view image = StrOf(Member(&c, "image"));
    Value s(rapidjson::kObjectType);
    s.AddMember("name", Str(name, a), a);
    Value state(rapidjson::kObjectType);
    Value detail(rapidjson::kObjectType);
    Stage this_stage = stage;
    if (stage == Stage::kInitRunning) {
      this_stage = first ? Stage::kRunning : Stage::kInitializing;
    }
    first = false;
    switch (this_stage) {
      case Stage::kCreating:
        detail.AddMember("reason", Str("ContainerCreating", a), a);
        state.AddMember("waiting", detail, a);
        break;
      case Stage::kInitializing:
      case Stage::kInitRunning:
        detail.AddMember("reason", Str("PodInitializing", a), a);
        state.AddMember("waiting", detail, a);
        break;
      case Stage::kRunning:
        detail.AddMember("startedAt", Str(started, a), a);
        state.AddMember("running", detail, a);
        break;
      case Stage::kTerminated:
        detail.AddMember("exitCode", outcome.exit_code, a);
        detail.AddMember(
            "reason",
            Str(outcome.exit_code == 0 && !outcome.failed ? "Completed"
                                                          : "Error",
                a),
            a);
        if (!outcome.message.empty()) {
          detail.AddMember("message", Str(outcome.message, a), a);
        }
        detail.AddMember("startedAt", Str(started, a), a);
        detail.AddMember("finishedAt", Str(now, a), a);
        detail.AddMember("containerID", Str(ContainerId(pod, name), a), a);
        state.AddMember("terminated", detail, a);
        break;
    }
    s.AddMember("state", state, a);
    s.AddMember("lastState", Value(rapidjson::kObjectType), a);
    // An init container is never ready while it runs (kubelet).
    s.AddMember("ready", stage == Stage::kRunning, a);
    s.AddMember("restartCount", 0, a);
    s.AddMember("image", Str(image, a), a);
    s.AddMember("imageID", Str("", a), a);
    if (this_stage == Stage::kRunning || this_stage == Stage::kTerminated) {
      s.AddMember("containerID", Str(ContainerId(pod, name), a), a);
    }
    s.AddMember("started", this_stage == Stage::kRunning, a);
    out.PushBack(s, a);
  }
  return out;
}

// The last element of a path: "/bin/sh" -> "sh".
std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool IsShell(std::string_view arg0) {
  const std::string_view base = BaseName(arg0);
  return base == "sh" || base == "bash" || base == "ash" || base == "dash";
}

// N when `words` are `sleep N` (or `exec sleep N`), N a non-negative
// integer.
std::optional<absl::Duration> SleepWords(std::vector<std::string_view> words) {
  if (!words.empty() && words.front() == "exec") words.erase(words.begin());
  if (words.size() != 2 || BaseName(words[0]) != "sleep") return std::nullopt;
  const std::string_view n = words[1];
  // Digits only: `sleep 1.5`, `sleep 1m` and `sleep infinity` are not
  // whole seconds; nine digits are 31 years.
  if (n.empty() || n.size() > 9 ||
      !std::all_of(n.begin(), n.end(),
                   [](char ch) { return ch >= '0' && ch <= '9'; })) {
    return std::nullopt;
  }
  int64_t seconds = 0;
  for (char ch : n) seconds = seconds * 10 + (ch - '0');
  return absl::Seconds(seconds);
}

// The sleep at the end of a shell script: its last command, after the
// last `;`, `&&`, `||` or newline (a trailing `;` and blanks ignored).
std::optional<absl::Duration> ScriptSleep(std::string_view script) {
  while (!script.empty() &&
         (script.back() == ';' || absl::ascii_isspace(script.back()))) {
    script.remove_suffix(1);
  }
  size_t cut = 0;
  for (const std::string_view sep : {";", "\n", "&&", "||"}) {
    const size_t at = script.rfind(sep);
    if (at != std::string_view::npos) cut = std::max(cut, at + sep.size());
  }
  std::vector<std::string_view> words;
  std::string_view rest = script.substr(cut);
  while (!rest.empty()) {
    const size_t end = rest.find_first_of(" \t");
    if (end != 0) words.push_back(rest.substr(0, end));
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  return SleepWords(std::move(words));
}

// A duration as Go prints it ("10s", "1m20s", "5m0s").
std::string GoDuration(absl::Duration d) {
  std::string out = absl::FormatDuration(d);
  if (!out.empty() && (out.back() == 'm' || out.back() == 'h')) out += "0s";
  return out;
}

// A container status's restartCount (0 when absent).
int64_t RestartCount(const Value& status) {
  const Value* v = Member(&status, "restartCount");
  return v != nullptr && v->IsInt64() ? v->GetInt64() : 0;
}

// Replaces (or adds) member `key` of object `o`.
void Put(Value& o, const char* key, Value v, Allocator& a) {
  o.RemoveMember(key);
  o.AddMember(Str(key, a), v, a);
}

// The ReplicaSet name a Deployment controller would use: name-<hash>.
std::string ReplicaSetName(const api::Object& d) {
  static const char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  const Value* tmpl = Member(Member(&d.json(), "spec"), "template");
  size_t h = std::hash<std::string>()(
      tmpl == nullptr ? std::string() : Cat(d.uid(), d.generation()));
  std::string suffix;
  for (int i = 0; i < 10; ++i) {
    suffix.push_back(kAlphabet[h % (sizeof(kAlphabet) - 1)]);
    h /= (sizeof(kAlphabet) - 1);
    if (h == 0) h = std::hash<std::string>()(suffix);
  }
  return Cat(d.name(), "-", suffix);
}

}  // namespace

std::optional<absl::Duration> ContainerSleep(const Value& container) {
  std::vector<std::string_view> argv;
  for (const char* part : {"command", "args"}) {
    const Value* list = Member(&container, part);
    if (list == nullptr || !list->IsArray()) continue;
    for (const auto& arg : list->GetArray()) {
      if (!arg.IsString()) return std::nullopt;
      argv.push_back(StrOf(&arg));
    }
  }
  // sh -c 'script', with other flags before or with it (`-x -c`, `-ec`):
  // the script is the first word after the flags.
  if (!argv.empty() && IsShell(argv[0])) {
    bool dash_c = false;
    size_t i = 1;
    for (; i < argv.size() && argv[i].size() >= 2 && argv[i][0] == '-'; ++i) {
      dash_c |=
          argv[i][1] != '-' && argv[i].find('c') != std::string_view::npos;
    }
    if (dash_c && i < argv.size()) return ScriptSleep(argv[i]);
  }
  if (argv.size() < 2) return std::nullopt;
  return SleepWords({argv[argv.size() - 2], argv.back()});
}

absl::Duration CrashLoopBackOff(int64_t restarts, absl::Duration ran) {
  // flowcontrol.Backoff forgets a container whose exits are further apart
  // than twice the cap; the first restart finds no entry.
  constexpr absl::Duration kInitial = absl::Seconds(10);
  constexpr absl::Duration kCap = absl::Minutes(5);
  if (restarts <= 0 || ran > 2 * kCap) return absl::ZeroDuration();
  absl::Duration d = kInitial;
  for (int64_t i = 1; i < restarts && d < kCap; ++i) d *= 2;
  return std::min(d, kCap);
}

NodeSimulator::NodeSimulator(Registry* registry, const Clock* clock,
                             NodeSimulatorOptions options)
    : IncrementalController(registry, clock, options.incremental),
      options_(std::move(options)) {}

bool NodeSimulator::Wants(const StoredEvent& event) const {
  if (event.collection == kNodesKey) {
    return (options_.register_node && event.type == EventType::kDeleted) ||
           (options_.simulate_pods && !unschedulable_.empty());
  }
  // A pod's deletion frees what it used on its node.
  if (event.collection == kPodsKey) return options_.simulate_pods;
  if (event.type == EventType::kDeleted) return false;
  return options_.simulate_deployments && event.collection == kDeploymentsKey;
}

void NodeSimulator::OnEvent(const StoredEvent& event) {
  const api::Object& o = *event.object;
  const bool deleted = event.type == EventType::kDeleted;
  if (event.collection == kPodsKey) {
    if (!options_.simulate_pods) return;
    const std::string key = Storage::Key(o.namespace_(), o.name());
    Account(key, deleted ? nullptr : &o);
    if (deleted) {
      unschedulable_.erase(key);
    } else {
      Enqueue(key);
    }
  } else if (event.collection == kDeploymentsKey) {
    if (!options_.simulate_deployments) return;
    const std::string key = Storage::Key(o.namespace_(), o.name());
    if (deleted) {
      deployments_seen_.erase(key);
    } else {
      Enqueue(Cat(kDeploymentPrefix, key));
    }
  } else if (event.collection == kNodesKey) {
    if (deleted && options_.register_node) Enqueue(kNodeKey);
    // A node added, cordoned, uncordoned, tainted, relabelled or gone: the
    // pods no node took are looked at again.
    for (const std::string& key : unschedulable_) Enqueue(key);
  }
}

void NodeSimulator::Account(const std::string& key, const api::Object* pod) {
  std::string node;
  Resources requests;
  if (pod != nullptr) {
    const std::string_view phase =
        StrOf(Member(Member(&pod->json(), "status"), "phase"));
    node = std::string(StrOf(Member(Member(&pod->json(), "spec"), "nodeName")));
    if (phase == "Succeeded" || phase == "Failed") node.clear();
    if (!node.empty()) requests = PodRequests(*pod);
  }
  auto it = placed_.find(key);
  const bool freed =
      it != placed_.end() && (node.empty() || it->second.first != node);
  if (it != placed_.end()) {
    used_[it->second.first] -= it->second.second;
    placed_.erase(it);
  }
  if (!node.empty()) Place(key, node, requests);
  // Room on a node: the pods no node took may fit now.
  if (freed) {
    for (const std::string& k : unschedulable_) Enqueue(k);
  }
}

void NodeSimulator::Place(const std::string& key, const std::string& node,
                          const Resources& requests) {
  auto it = placed_.find(key);
  if (it != placed_.end()) used_[it->second.first] -= it->second.second;
  placed_[key] = {node, requests};
  used_[node] += requests;
}

std::string NodeSimulator::NodeName(int index) const {
  return index == 0 ? options_.node_name
                    : Cat(options_.node_name, "-", index + 1);
}

std::string NodeSimulator::HostIp(int index) const {
  const size_t dot = options_.host_ip.rfind('.');
  int last = 0;
  if (index == 0 || dot == std::string::npos ||
      !absl::SimpleAtoi(options_.host_ip.substr(dot + 1), &last)) {
    return options_.host_ip;
  }
  return Cat(options_.host_ip.substr(0, dot + 1), last + index);
}

std::string NodeSimulator::HostIpOf(std::string_view name) const {
  if (ResourceInfoPtr nodes =
          registry()->resources()->Lookup("", "v1", "nodes")) {
    if (api::ObjectPtr node =
            registry()->storage()->Get(nodes->StorageKey(), "", name)) {
      const Value* addresses = node->Find("/status/addresses");
      if (addresses != nullptr && addresses->IsArray()) {
        for (const auto& a : addresses->GetArray()) {
          if (StrOf(Member(&a, "type")) == "InternalIP") {
            return std::string(StrOf(Member(&a, "address")));
          }
        }
      }
    }
  }
  return options_.host_ip;
}

void NodeSimulator::EnqueueAll() {
  if (options_.register_node) Enqueue(kNodeKey);
  ResourceRegistry* resources = registry()->resources();
  if (options_.simulate_pods) {
    if (ResourceInfoPtr pods = resources->Lookup("", "v1", "pods")) {
      for (const api::ObjectPtr& pod :
           storage()->Snapshot(pods->StorageKey())) {
        Enqueue(Storage::Key(pod->namespace_(), pod->name()));
      }
    }
  }
  if (options_.simulate_deployments) {
    if (ResourceInfoPtr deployments =
            resources->Lookup("apps", "v1", "deployments")) {
      for (const api::ObjectPtr& d :
           storage()->Snapshot(deployments->StorageKey())) {
        Enqueue(
            Cat(kDeploymentPrefix, Storage::Key(d->namespace_(), d->name())));
      }
    }
  }
}

absl::Time NodeSimulator::SyncKey(const std::string& key, absl::Time now) {
  ResourceRegistry* resources = registry()->resources();
  if (key == kNodeKey) {
    if (ResourceInfoPtr nodes = resources->Lookup("", "v1", "nodes")) {
      bool done = true;
      for (int i = 0; i < std::max(options_.nodes, 1); ++i) {
        done = EnsureNode(*nodes, i, now) && done;
      }
      // A node write raced another (someone patched the node between its
      // creation and its first status): looked at again shortly.
      if (!done) return now + absl::Milliseconds(50);
    }
    return absl::InfiniteFuture();
  }
  if (key.rfind(kDeploymentPrefix, 0) == 0) {
    const std::string d_key = key.substr(kDeploymentPrefix.size());
    ResourceInfoPtr deployments =
        resources->Lookup("apps", "v1", "deployments");
    if (deployments == nullptr) return absl::InfiniteFuture();
    api::ObjectPtr d = storage()->GetByKey(deployments->StorageKey(), d_key);
    if (d == nullptr) {
      deployments_seen_.erase(d_key);
      return absl::InfiniteFuture();
    }
    return SyncDeployment(*deployments, d, now);
  }
  ResourceInfoPtr pods = resources->Lookup("", "v1", "pods");
  if (pods == nullptr) return absl::InfiniteFuture();
  api::ObjectPtr pod = storage()->GetByKey(pods->StorageKey(), key);
  unschedulable_.erase(key);
  if (pod == nullptr) return absl::InfiniteFuture();
  return SyncPod(*pods, key, pod, now);
}

std::string NodeSimulator::NextPodIp() {
  const uint32_t n = next_ip_++ % (256 * 254);
  return Cat("10.244.", n / 254, ".", n % 254 + 1);
}

bool NodeSimulator::EnsureNode(const ResourceInfo& nodes, int index,
                               absl::Time now) {
  const std::string name = NodeName(index);
  const std::string host_ip = HostIp(index);
  api::ObjectPtr node =
      registry()->storage()->Get(nodes.StorageKey(), "", name);
  // A kubelet posts its node's status until it is there: a node created
  // but patched before its first status (a cordon, a taint) still gets it.
  if (node != nullptr) {
    if (node->Find("/status/capacity") != nullptr) return true;
    return WriteNodeStatus(nodes, *node, host_ip, now);
  }
  std::string labels;
  for (const auto& [k, v] : options_.node_labels) {
    if (k == "kubernetes.io/hostname" || k == "kubernetes.io/os" ||
        k == "kubernetes.io/arch" || k == "type") {
      continue;
    }
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.String(k.data(), static_cast<rapidjson::SizeType>(k.size()));
    CatAppend(&labels, ",", buf.GetString(), ":");
    buf.Clear();
    w.Reset(buf);
    w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
    labels += buf.GetString();
  }
  const std::string json =
      Cat(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")", name,
          R"(","labels":{"kubernetes.io/hostname":")", name,
          R"(","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64",)"
          R"("type":"kcr-simulated")",
          labels, "}}}");
  absl::StatusOr<api::ObjectBuilder> b = api::ObjectBuilder::FromJson(json);
  if (!b.ok()) return true;
  absl::StatusOr<WriteResult> created =
      registry()->Create(nodes, "", std::move(*b));
  if (!created.ok()) {
    if (!IsRaceError(created.status())) {
      LOG(WARNING) << "node simulator: creating node failed: "
                   << created.status();
      return true;
    }
    return false;
  }
  return WriteNodeStatus(nodes, *created->object, host_ip, now);
}

bool NodeSimulator::WriteNodeStatus(const ResourceInfo& nodes,
                                    const api::Object& node,
                                    const std::string& host_ip,
                                    absl::Time now) {
  const std::string name(node.name());
  const std::string at = api::FormatRfc3339(now);
  api::ObjectBuilder u = node.ToBuilder();
  const auto condition = [&](const char* type, const char* status,
                             const char* reason, const char* message) {
    return Cat(R"({"type":")", type, R"(","status":")", status,
               R"(","lastHeartbeatTime":")", at, R"(","lastTransitionTime":")",
               at, R"(","reason":")", reason, R"(","message":")", message,
               R"("})");
  };
  const std::string resources =
      Cat(R"({"cpu":")", options_.node_cpu, R"(","memory":")",
          options_.node_memory, R"(","pods":")", options_.node_pods, R"("})");
  const std::string status =
      Cat(R"({"capacity":)", resources, R"(,"allocatable":)", resources, ",",
          R"("conditions":[)",
          condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
                    "kubelet has sufficient memory available"),
          ",",
          condition("DiskPressure", "False", "KubeletHasNoDiskPressure",
                    "kubelet has no disk pressure"),
          ",",
          condition("PIDPressure", "False", "KubeletHasSufficientPID",
                    "kubelet has sufficient PID available"),
          ",",
          condition("Ready", "True", "KubeletReady",
                    "kubelet is posting ready status"),
          R"(],"addresses":[{"type":"InternalIP","address":")", host_ip,
          R"("},{"type":"Hostname","address":")", name,
          R"("}],"nodeInfo":{"machineID":"","systemUUID":"","bootID":"",)",
          R"("kernelVersion":"","osImage":"kcr simulated node",)",
          R"("containerRuntimeVersion":"kcr://simulated","kubeletVersion":")",
          options_.kubelet_version,
          R"(","kubeProxyVersion":"","operatingSystem":"linux",)",
          R"("architecture":"amd64"}})");
  if (!u.SetJson("/status", status).ok()) return true;
  WriteOptions w;
  w.subresource = "status";
  absl::Status s =
      registry()->Update(nodes, "", name, std::move(u), w).status();
  if (IsRaceError(s)) return false;
  if (!s.ok()) LOG(WARNING) << "node simulator: node status failed: " << s;
  return true;
}

void NodeSimulator::RecordPodEvent(const api::Object& pod, Reporter reporter,
                                   std::string_view field_path, bool warning,
                                   std::string_view reason,
                                   std::string_view action,
                                   const std::string& message, absl::Time now) {
  if (!options_.record_events) return;
  ResourceInfoPtr events = registry()->resources()->Lookup("", "v1", "events");
  if (events == nullptr) return;
  // The recorder's name: <object>.<UnixNano in hex>.
  last_event_nanos_ = std::max(last_event_nanos_ + 1, absl::ToUnixNanos(now));
  char suffix[17];
  std::snprintf(suffix, sizeof(suffix), "%llx",
                static_cast<unsigned long long>(last_event_nanos_));
  api::ObjectReference involved = api::ObjectReference::To(pod);
  involved.api_version = "v1";
  involved.kind = "Pod";
  involved.field_path = std::string(field_path);
  api::EventBuilder e(pod.namespace_(), Cat(pod.name(), ".", suffix));
  e.SetInvolvedObject(involved).SetReason(reason).SetMessage(message).SetType(
      warning ? api::kEventTypeWarning : api::kEventTypeNormal);
  api::ObjectBuilder& b = e.object();
  if (reporter == Reporter::kKubelet) {
    // The kubelet's legacy recorder: source, first/last timestamps, count;
    // the host is the pod's node.
    std::string host(StrOf(Member(Member(&pod.json(), "spec"), "nodeName")));
    if (host.empty()) host = options_.node_name;
    e.SetSource("kubelet", host)
        .SetFirstTimestamp(now)
        .SetLastTimestamp(now)
        .SetCount(1);
    (void)b.SetString("/reportingComponent", "kubelet");
    (void)b.SetString("/reportingInstance", host);
  } else {
    // kube-scheduler records through events.k8s.io/v1: eventTime, action
    // and the reporting controller, no source or count.
    (void)b.SetString("/eventTime", api::FormatRfc3339Micro(now));
    (void)b.SetString("/action", action);
    (void)b.SetString("/reportingComponent", "default-scheduler");
    (void)b.SetString("/reportingInstance",
                      Cat("default-scheduler-", options_.node_name));
  }
  absl::Status st =
      registry()->Create(*events, pod.namespace_(), std::move(b)).status();
  if (!st.ok()) {
    VLOG(2) << "node simulator: event not recorded pod=" << pod.Key()
            << " reason=" << reason << ": " << st;
  }
}

void NodeSimulator::RecordContainerStarts(const api::Object& pod,
                                          const char* list, absl::Time now) {
  const Value* containers = Member(Member(&pod.json(), "spec"), list);
  if (containers == nullptr || !containers->IsArray()) return;
  for (const auto& c : containers->GetArray()) {
    const std::string_view name = StrOf(Member(&c, "name"));
    const std::string_view image = StrOf(Member(&c, "image"));
    const std::string path = Cat("spec.", list, "{", name, "}");
    RecordPodEvent(pod, Reporter::kKubelet, path, false, "Pulling", "",
                   Cat("Pulling image \"", image, "\""), now);
    RecordPodEvent(pod, Reporter::kKubelet, path, false, "Pulled", "",
                   Cat("Successfully pulled image \"", image,
                       "\" in 0s (0s including waiting)"),
                   now);
    RecordPodEvent(pod, Reporter::kKubelet, path, false, "Created", "",
                   Cat("Created container: ", name), now);
    RecordPodEvent(pod, Reporter::kKubelet, path, false, "Started", "",
                   Cat("Started container ", name), now);
  }
}

absl::Time NodeSimulator::SyncPod(const ResourceInfo& pods,
                                  const std::string& key,
                                  const api::ObjectPtr& pod_ptr,
                                  absl::Time now) {
  const api::Object& pod = *pod_ptr;
  if (pod.being_deleted()) return absl::InfiniteFuture();
  const Value* spec = Member(&pod.json(), "spec");
  const Value* status = Member(&pod.json(), "status");
  const std::string_view phase = StrOf(Member(status, "phase"));
  if (phase == "Succeeded" || phase == "Failed") return absl::InfiniteFuture();
  const std::string now_text = api::FormatRfc3339(now);

  // When the pod needs a pass after a write: never when it succeeded (its
  // event queues the pod) or lost a race (the other write's event does).
  const auto after = [&](const absl::Status& s) {
    return s.ok() || IsRaceError(s) ? absl::InfiniteFuture() : now + kRetry;
  };
  const auto write_status = [&](api::ObjectBuilder b) {
    WriteOptions w;
    w.subresource = "status";
    absl::Status s =
        registry()
            ->Update(pods, pod.namespace_(), pod.name(), std::move(b), w)
            .status();
    if (!s.ok() && !IsRaceError(s)) {
      LOG(WARNING) << "node simulator: status update failed pod=" << pod.Key()
                   << ": " << s;
    }
    return s;
  };

  // 1. Schedule, unless the node (when there is a Node object) refuses the
  // pod: then it stays Pending with PodScheduled False, as kube-scheduler
  // leaves it, until the node or the pod changes.
  if (StrOf(Member(spec, "nodeName")).empty()) {
    std::string why;
    // With no Node objects at all (register_node off), pods go to the
    // first node's name, as kwok's.
    std::string target = NodeName(0);
    if (ResourceInfoPtr nodes =
            registry()->resources()->Lookup("", "v1", "nodes")) {
      const std::vector<api::ObjectPtr> all =
          registry()->storage()->Snapshot(nodes->StorageKey());
      if (!all.empty()) {
        Placement p = Schedule(pod, all, [this](std::string_view node) {
          auto it = used_.find(ToAbsl(node));
          return it == used_.end() ? Resources{} : it->second;
        });
        why = std::move(p.message);
        target = std::move(p.node);
      }
    }
    if (!why.empty()) {
      unschedulable_.insert(key);
      const Value* conditions = Member(status, "conditions");
      if (conditions != nullptr && conditions->IsArray()) {
        for (const auto& c : conditions->GetArray()) {
          if (StrOf(Member(&c, "type")) == "PodScheduled" &&
              StrOf(Member(&c, "message")) == why) {
            return absl::InfiniteFuture();  // already reported
          }
        }
      }
      api::ObjectBuilder b = StatusWriteOf(pod);
      Allocator& a = b.allocator();
      Value st(rapidjson::kObjectType);
      st.AddMember("phase", Str("Pending", a), a);
      Value list(rapidjson::kArrayType);
      Value c =
          PodCondition("PodScheduled", false, now_text, "Unschedulable", a);
      c.AddMember("message", Str(why, a), a);
      list.PushBack(c, a);
      st.AddMember("conditions", list, a);
      st.AddMember("qosClass", Str("BestEffort", a), a);
      (void)b.Set("/status", st);
      const absl::Status s = write_status(std::move(b));
      if (s.ok()) {
        RecordPodEvent(pod, Reporter::kScheduler, "", true, "FailedScheduling",
                       "Scheduling", why, now);
      }
      return after(s);
    }
    api::ObjectBuilder b = pod.ToBuilder();
    (void)b.SetString("/spec/nodeName", target);
    absl::StatusOr<WriteResult> bound =
        registry()->Update(pods, pod.namespace_(), pod.name(), std::move(b));
    if (bound.ok()) {
      // Counted now, before its event, so that the next pod of this pass
      // sees the room it takes.
      Place(key, target, PodRequests(pod));
      RecordPodEvent(*bound->object, Reporter::kScheduler, "", false,
                     "Scheduled", "Binding",
                     Cat("Successfully assigned ", pod.namespace_(), "/",
                         pod.name(), " to ", target),
                     now);
    } else if (!IsRaceError(bound.status())) {
      LOG(WARNING) << "node simulator: binding failed pod=" << pod.Key() << ": "
                   << bound.status();
    }
    return after(bound.status());
  }
  const Outcome none;
  bool reported = false;  // PodScheduled set by this node
  if (const Value* conditions = Member(status, "conditions");
      conditions != nullptr && conditions->IsArray()) {
    for (const auto& c : conditions->GetArray()) {
      if (StrOf(Member(&c, "type")) == "PodScheduled" &&
          StrOf(Member(&c, "status")) == "True") {
        reported = true;
      }
    }
  }
  // The API server may already have defaulted the phase to Pending.
  if ((phase.empty() || phase == "Pending") && !reported) {
    api::ObjectBuilder b = StatusWriteOf(pod);
    Allocator& a = b.allocator();
    Value st(rapidjson::kObjectType);
    st.AddMember("phase", Str("Pending", a), a);
    Value conditions(rapidjson::kArrayType);
    // With init containers the first one runs until the pod runs: kubectl
    // shows Init:0/N, the containers wait in PodInitializing.
    const Value* init = Member(spec, "initContainers");
    const bool has_init = init != nullptr && init->IsArray() && !init->Empty();
    if (has_init) {
      std::vector<std::string> names;
      for (const auto& c : init->GetArray()) {
        names.emplace_back(StrOf(Member(&c, "name")));
      }
      Value initialized =
          PodCondition("Initialized", false, now_text, nullptr, a);
      initialized.AddMember("reason", Str("ContainersNotInitialized", a), a);
      initialized.AddMember("message",
                            Str(Cat("containers with incomplete status: [",
                                    absl::StrJoin(names, " "), "]"),
                                a),
                            a);
      conditions.PushBack(initialized, a);
    }
    conditions.PushBack(
        PodCondition("PodScheduled", true, now_text, nullptr, a), a);
    st.AddMember("conditions", conditions, a);
    const std::string host_ip = HostIpOf(StrOf(Member(spec, "nodeName")));
    st.AddMember("hostIP", Str(host_ip, a), a);
    st.AddMember("hostIPs", IpList(host_ip, a), a);
    st.AddMember("startTime", Str(now_text, a), a);
    if (has_init) {
      st.AddMember("initContainerStatuses",
                   ContainerStatuses(pod, "initContainers", Stage::kInitRunning,
                                     now_text, now_text, none, a),
                   a);
    }
    st.AddMember(
        "containerStatuses",
        ContainerStatuses(pod, "containers",
                          has_init ? Stage::kInitializing : Stage::kCreating,
                          "", now_text, none, a),
        a);
    st.AddMember("qosClass", Str("BestEffort", a), a);
    (void)b.Set("/status", st);
    return after(write_status(std::move(b)));
  }

  // 2. Run.
  const absl::Time created =
      TimeOf(Member(&pod.metadata(), "creationTimestamp")).value_or(now);
  if (phase == "Pending") {
    // Init containers that sleep run that long, one after the other,
    // before the pod runs.
    absl::Duration init_sleep = absl::ZeroDuration();
    if (const Value* init = Member(spec, "initContainers");
        init != nullptr && init->IsArray()) {
      for (const auto& c : init->GetArray()) {
        init_sleep += ContainerSleep(c).value_or(absl::ZeroDuration());
      }
    }
    const absl::Time due = created +
                           AnnotationDuration(pod, kSimRunningAfterAnnotation,
                                              options_.running_after) +
                           init_sleep;
    if (now < due) return due;
    api::ObjectBuilder b = StatusWriteOf(pod);
    Allocator& a = b.allocator();
    const std::string scheduled =
        std::string(StrOf(Member(status, "startTime")).empty()
                        ? std::string_view(now_text)
                        : StrOf(Member(status, "startTime")));
    const std::string ip = NextPodIp();
    Value st(rapidjson::kObjectType);
    st.AddMember("phase", Str("Running", a), a);
    Value conditions(rapidjson::kArrayType);
    conditions.PushBack(PodCondition("Initialized", true, now_text, nullptr, a),
                        a);
    conditions.PushBack(PodCondition("Ready", true, now_text, nullptr, a), a);
    conditions.PushBack(
        PodCondition("ContainersReady", true, now_text, nullptr, a), a);
    conditions.PushBack(
        PodCondition("PodScheduled", true, scheduled, nullptr, a), a);
    st.AddMember("conditions", conditions, a);
    const std::string host_ip = HostIpOf(StrOf(Member(spec, "nodeName")));
    st.AddMember("hostIP", Str(host_ip, a), a);
    st.AddMember("hostIPs", IpList(host_ip, a), a);
    st.AddMember("podIP", Str(ip, a), a);
    st.AddMember("podIPs", IpList(ip, a), a);
    st.AddMember("startTime", Str(scheduled, a), a);
    Outcome init_ok;
    Value init = ContainerStatuses(pod, "initContainers", Stage::kTerminated,
                                   now_text, now_text, init_ok, a);
    if (!init.Empty()) st.AddMember("initContainerStatuses", init, a);
    st.AddMember("containerStatuses",
                 ContainerStatuses(pod, "containers", Stage::kRunning, now_text,
                                   now_text, none, a),
                 a);
    st.AddMember("qosClass", Str("BestEffort", a), a);
    (void)b.Set("/status", st);
    VLOG(2) << "node simulator: running pod=" << pod.Key() << " ip=" << ip;
    const absl::Status s = write_status(std::move(b));
    if (s.ok()) {
      RecordContainerStarts(pod, "initContainers", now);
      RecordContainerStarts(pod, "containers", now);
    }
    return after(s);
  }

  // 3. Finish (restartPolicy Never / OnFailure), or restart the containers
  // that sleep (Always).
  if (phase != "Running") return absl::InfiniteFuture();
  const std::string_view policy = StrOf(Member(spec, "restartPolicy"));
  if (policy != "Never" && policy != "OnFailure") {
    return RestartSleepers(pods, pod, now);
  }
  // The pod finishes with its last container: a sleeping one after its
  // sleep, any other after complete_after.
  absl::Duration run_for = absl::ZeroDuration();
  if (const Value* containers = Member(spec, "containers");
      containers != nullptr && containers->IsArray()) {
    for (const auto& c : containers->GetArray()) {
      run_for = std::max(run_for,
                         ContainerSleep(c).value_or(options_.complete_after));
    }
  }
  std::string started(now_text);
  const Value* statuses = Member(status, "containerStatuses");
  if (statuses != nullptr && statuses->IsArray() && !statuses->Empty()) {
    const Value* running = Member(Member(&(*statuses)[0], "state"), "running");
    if (!StrOf(Member(running, "startedAt")).empty()) {
      started = std::string(StrOf(Member(running, "startedAt")));
    }
  }
  const absl::Time due =
      api::ParseTime(started).value_or(now) +
      AnnotationDuration(pod, kSimCompleteAfterAnnotation, run_for);
  if (now < due) return due;
  const Outcome outcome = OutcomeOf(pod);
  const bool failed = outcome.failed || outcome.exit_code != 0;
  api::ObjectBuilder b = StatusWriteOf(pod);
  Allocator& a = b.allocator();
  // Keep IPs, start time and the other fields; replace phase, conditions
  // and container states.
  Value st(*status, a);
  st.RemoveMember("phase");
  st.AddMember("phase", Str(failed ? "Failed" : "Succeeded", a), a);
  const char* reason = failed ? "PodFailed" : "PodCompleted";
  Value conditions(rapidjson::kArrayType);
  const Value* old = Member(status, "conditions");
  const auto transition = [&](const char* type) {
    if (old != nullptr && old->IsArray()) {
      for (const auto& c : old->GetArray()) {
        if (StrOf(Member(&c, "type")) == type) {
          return std::string(StrOf(Member(&c, "lastTransitionTime")));
        }
      }
    }
    return now_text;
  };
  conditions.PushBack(
      PodCondition("Initialized", true, transition("Initialized"), nullptr, a),
      a);
  conditions.PushBack(PodCondition("Ready", false, now_text, reason, a), a);
  conditions.PushBack(
      PodCondition("ContainersReady", false, now_text, reason, a), a);
  conditions.PushBack(PodCondition("PodScheduled", true,
                                   transition("PodScheduled"), nullptr, a),
                      a);
  st.RemoveMember("conditions");
  st.AddMember("conditions", conditions, a);
  st.RemoveMember("containerStatuses");
  st.AddMember("containerStatuses",
               ContainerStatuses(pod, "containers", Stage::kTerminated, started,
                                 now_text, outcome, a),
               a);
  (void)b.Set("/status", st);
  VLOG(2) << "node simulator: pod finished pod=" << pod.Key()
          << " phase=" << (failed ? "Failed" : "Succeeded");
  return after(write_status(std::move(b)));
}

absl::Time NodeSimulator::RestartSleepers(const ResourceInfo& pods,
                                          const api::Object& pod,
                                          absl::Time now) {
  const Value* containers = Member(Member(&pod.json(), "spec"), "containers");
  const Value* status = Member(&pod.json(), "status");
  const Value* statuses = Member(status, "containerStatuses");
  if (containers == nullptr || !containers->IsArray() || statuses == nullptr ||
      !statuses->IsArray()) {
    return absl::InfiniteFuture();
  }
  const auto sleep_of = [&](std::string_view name) {
    for (const auto& c : containers->GetArray()) {
      if (StrOf(Member(&c, "name")) == name) return ContainerSleep(c);
    }
    return std::optional<absl::Duration>();
  };
  // Most pods run servers: nothing to copy for them.
  if (std::none_of(containers->Begin(), containers->End(), [](const Value& c) {
        return ContainerSleep(c).has_value();
      })) {
    return absl::InfiniteFuture();
  }
  const std::string now_text = api::FormatRfc3339(now);
  api::ObjectBuilder b = StatusWriteOf(pod);
  Allocator& a = b.allocator();
  Value st(*status, a);
  Value& list = st.FindMember("containerStatuses")->value;
  absl::Time next = absl::InfiniteFuture();
  bool changed = false;
  std::vector<std::string> unready;
  const auto run = [&](Value& s, int64_t restarts) {
    Value running(rapidjson::kObjectType);
    running.AddMember("startedAt", Str(now_text, a), a);
    Value state(rapidjson::kObjectType);
    state.AddMember("running", running, a);
    Put(s, "state", std::move(state), a);
    Put(s, "restartCount", Value(restarts), a);
    Put(s, "ready", Value(true), a);
    Put(s, "started", Value(true), a);
    Put(s, "containerID",
        Str(ContainerId(pod, Cat(StrOf(Member(&s, "name")), "#", restarts)), a),
        a);
  };
  for (auto& s : list.GetArray()) {
    if (!s.IsObject()) continue;
    const std::string name(StrOf(Member(&s, "name")));
    const std::optional<absl::Duration> sleep = sleep_of(name);
    const Value* state = Member(&s, "state");
    const int64_t restarts = RestartCount(s);
    if (!sleep.has_value()) {
      // Not ours to move; its readiness still counts for the pod's.
    } else if (const Value* running = Member(state, "running")) {
      const std::string started(StrOf(Member(running, "startedAt")));
      const absl::Time started_at = api::ParseTime(started).value_or(now);
      const absl::Time due = started_at + *sleep;
      if (now < due) {
        next = std::min(next, due);
      } else {
        // It exits 0; kubelet keeps the exit as the last state.
        Value exited(rapidjson::kObjectType);
        exited.AddMember("exitCode", 0, a);
        exited.AddMember("reason", Str("Completed", a), a);
        exited.AddMember("startedAt", Str(started, a), a);
        exited.AddMember("finishedAt", Str(now_text, a), a);
        exited.AddMember("containerID",
                         Str(StrOf(Member(&s, "containerID")), a), a);
        Value last(rapidjson::kObjectType);
        last.AddMember("terminated", exited, a);
        Put(s, "lastState", std::move(last), a);
        const absl::Duration wait =
            CrashLoopBackOff(restarts, now - started_at);
        if (wait == absl::ZeroDuration()) {
          run(s, restarts + 1);
          next = std::min(next, now + *sleep);
        } else {
          Value waiting(rapidjson::kObjectType);
          waiting.AddMember("reason", Str("CrashLoopBackOff", a), a);
          waiting.AddMember("message",
                            Str(Cat("back-off ", GoDuration(wait),
                                    " restarting failed container=", name,
                                    " pod=", pod.name(), "_", pod.namespace_(),
                                    "(", pod.uid(), ")"),
                                a),
                            a);
          Value state(rapidjson::kObjectType);
          state.AddMember("waiting", waiting, a);
          Put(s, "state", std::move(state), a);
          Put(s, "ready", Value(false), a);
          Put(s, "started", Value(false), a);
          next = std::min(next, now + wait);
        }
        changed = true;
      }
    } else if (StrOf(Member(Member(state, "waiting"), "reason")) ==
               "CrashLoopBackOff") {
      const Value* exited = Member(Member(&s, "lastState"), "terminated");
      const absl::Time finished =
          TimeOf(Member(exited, "finishedAt")).value_or(now);
      const absl::Time started =
          TimeOf(Member(exited, "startedAt")).value_or(finished);
      const absl::Time due =
          finished + CrashLoopBackOff(restarts, finished - started);
      if (now < due) {
        next = std::min(next, due);
      } else {
        run(s, restarts + 1);
        next = std::min(next, now + *sleep);
        changed = true;
      }
    }
    const Value* ready = Member(&s, "ready");
    if (ready == nullptr || !ready->IsBool() || !ready->GetBool()) {
      unready.push_back(name);
    }
  }
  if (!changed) return next;
  // Ready and ContainersReady follow the containers, as kubelet's status
  // manager sets them.
  if (auto conditions = st.FindMember("conditions");
      conditions != st.MemberEnd() && conditions->value.IsArray()) {
    for (auto& c : conditions->value.GetArray()) {
      const std::string_view type = StrOf(Member(&c, "type"));
      if (type != "Ready" && type != "ContainersReady") continue;
      const bool was = StrOf(Member(&c, "status")) == "True";
      const bool is = unready.empty();
      if (was == is) continue;
      Value fresh =
          PodCondition(type == "Ready" ? "Ready" : "ContainersReady", is,
                       now_text, is ? nullptr : "ContainersNotReady", a);
      if (!is) {
        fresh.AddMember("message",
                        Str(Cat("containers with unready status: [",
                                absl::StrJoin(unready, " "), "]"),
                            a),
                        a);
      }
      c = fresh;
    }
  }
  (void)b.Set("/status", st);
  WriteOptions w;
  w.subresource = "status";
  const absl::Status s =
      registry()
          ->Update(pods, pod.namespace_(), pod.name(), std::move(b), w)
          .status();
  if (s.ok() || IsRaceError(s)) return absl::InfiniteFuture();
  LOG(WARNING) << "node simulator: status update failed pod=" << pod.Key()
               << ": " << s;
  return now + kRetry;
}

absl::Time NodeSimulator::SyncDeployment(const ResourceInfo& deployments,
                                         const api::ObjectPtr& d_ptr,
                                         absl::Time now) {
  const api::Object& d = *d_ptr;
  if (d.being_deleted()) return absl::InfiniteFuture();
  const Value* spec = Member(&d.json(), "spec");
  const Value* status = Member(&d.json(), "status");
  const Value* replicas_value = Member(spec, "replicas");
  const int64_t replicas =
      replicas_value != nullptr && replicas_value->IsInt64()
          ? replicas_value->GetInt64()
          : 1;
  const auto count = [&](const char* key) -> int64_t {
    const Value* v = Member(status, key);
    return v != nullptr && v->IsInt64() ? v->GetInt64() : 0;
  };
  if (count("observedGeneration") == d.generation() &&
      count("replicas") == replicas && count("readyReplicas") == replicas &&
      count("availableReplicas") == replicas &&
      count("updatedReplicas") == replicas) {
    return absl::InfiniteFuture();
  }
  Seen& seen = deployments_seen_[Storage::Key(d.namespace_(), d.name())];
  if (seen.uid != d.uid() || seen.generation != d.generation()) {
    seen = {std::string(d.uid()), d.generation(), now};
  }
  const absl::Time due = seen.at + options_.deployment_ready_after;
  if (now < due) return due;

  const std::string now_text = api::FormatRfc3339(now);
  api::ObjectBuilder b = StatusWriteOf(d, /*with_annotations=*/true);
  Allocator& a = b.allocator();
  Value st(rapidjson::kObjectType);
  st.AddMember("observedGeneration", d.generation(), a);
  // Go omits zero counts.
  if (replicas != 0) {
    st.AddMember("replicas", replicas, a);
    st.AddMember("updatedReplicas", replicas, a);
    st.AddMember("readyReplicas", replicas, a);
    st.AddMember("availableReplicas", replicas, a);
  }
  const Value* old = Member(status, "conditions");
  const auto transition = [&](const char* type) {
    if (old != nullptr && old->IsArray()) {
      for (const auto& c : old->GetArray()) {
        if (StrOf(Member(&c, "type")) == type &&
            StrOf(Member(&c, "status")) == "True") {
          return std::string(StrOf(Member(&c, "lastTransitionTime")));
        }
      }
    }
    return now_text;
  };
  Value conditions(rapidjson::kArrayType);
  const auto condition = [&](const char* type, const char* reason,
                             const std::string& message) {
    Value c(rapidjson::kObjectType);
    c.AddMember("type", Str(type, a), a);
    c.AddMember("status", Str("True", a), a);
    c.AddMember("lastUpdateTime", Str(now_text, a), a);
    c.AddMember("lastTransitionTime", Str(transition(type), a), a);
    c.AddMember("reason", Str(reason, a), a);
    c.AddMember("message", Str(message, a), a);
    conditions.PushBack(c, a);
  };
  condition("Available", "MinimumReplicasAvailable",
            "Deployment has minimum availability.");
  condition("Progressing", "NewReplicaSetAvailable",
            Cat("ReplicaSet \"", ReplicaSetName(d),
                "\" has successfully progressed."));
  st.AddMember("conditions", conditions, a);
  (void)b.Set("/status", st);
  WriteOptions w;
  w.subresource = "status";
  absl::Status s =
      registry()
          ->Update(deployments, d.namespace_(), d.name(), std::move(b), w)
          .status();
  if (!s.ok() && !IsRaceError(s)) {
    LOG(WARNING) << "node simulator: deployment status failed deployment="
                 << d.Key() << ": " << s;
    return now + kRetry;
  }
  VLOG(2) << "node simulator: deployment ready deployment=" << d.Key()
          << " replicas=" << replicas;
  return absl::InfiniteFuture();
}

}  // namespace apiserver
}  // namespace kcr
