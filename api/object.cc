#include "api/object.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "rapidjson/error/en.h"
#include "rapidjson/memorystream.h"
#include "rapidjson/reader.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "runtime/base/string_view.h"

namespace kcr {
namespace api {
namespace {

using rapidjson::Value;

// RapidJSON stores strings of up to 13 bytes inside the 16-byte value
// itself (its ShortString form on 64-bit targets with 48-bit pointers).
constexpr size_t kInlineStringMax = 13;
static_assert(sizeof(Value) == 16, "RapidJSON built without 48-bit pointers");
static_assert(sizeof(Value::Member) == 32, "unexpected RapidJSON layout");

// MemoryPoolAllocator's chunk header (capacity, size, next), which it puts
// at the start of a user-supplied buffer.
constexpr size_t kPoolHeader = RAPIDJSON_ALIGN(3 * sizeof(void*));
// What std::make_shared adds in front of the Object (vtable and counts).
constexpr size_t kControlBlock = 16;
// Per-thread scratch space for the first, in-situ parse.
constexpr size_t kScratchBytes = 64 * 1024;

size_t Align(size_t n) { return RAPIDJSON_ALIGN(n); }

std::string_view StringOf(const Value& v) {
  return std::string_view(v.GetString(), v.GetStringLength());
}

// Keys and values that recur in most Kubernetes objects and are too long
// to be stored inline. Objects point at these instead of storing a copy.
// The table is fixed (never grows from input), so it is immortal and needs
// no locking.
const absl::flat_hash_set<std::string_view>& WellKnownStrings() {
  static const auto* const kSet = new absl::flat_hash_set<std::string_view>{
      // metadata
      "creationTimestamp",
      "deletionTimestamp",
      "deletionGracePeriodSeconds",
      "resourceVersion",
      "ownerReferences",
      "blockOwnerDeletion",
      "kube-controller-manager",
      "kube-scheduler",
      // common labels and annotations
      "app.kubernetes.io/name",
      "app.kubernetes.io/instance",
      "app.kubernetes.io/version",
      "app.kubernetes.io/component",
      "app.kubernetes.io/part-of",
      "app.kubernetes.io/managed-by",
      "pod-template-hash",
      "controller-revision-hash",
      "kubernetes.io/metadata.name",
      "kubectl.kubernetes.io/restartedAt",
      "kubectl.kubernetes.io/last-applied-configuration",
      "deployment.kubernetes.io/revision",
      "deployment.kubernetes.io/desired-replicas",
      "deployment.kubernetes.io/max-replicas",
      "prometheus.io/scrape",
      "prometheus.io/port",
      "prometheus.io/path",
      "control-plane.alpha.kubernetes.io/leader",
      // pod and container spec
      "terminationMessagePath",
      "terminationMessagePolicy",
      "imagePullPolicy",
      "terminationGracePeriodSeconds",
      "serviceAccountName",
      "serviceAccount",
      "securityContext",
      "tolerationSeconds",
      "enableServiceLinks",
      "preemptionPolicy",
      "priorityClassName",
      "runtimeClassName",
      "topologySpreadConstraints",
      "imagePullSecrets",
      "initContainers",
      "ephemeralContainers",
      "readinessProbe",
      "startupProbe",
      "failureThreshold",
      "successThreshold",
      "initialDelaySeconds",
      "timeoutSeconds",
      "allowPrivilegeEscalation",
      "readOnlyRootFilesystem",
      "seccompProfile",
      "persistentVolumeClaim",
      "serviceAccountToken",
      "expirationSeconds",
      "automountServiceAccountToken",
      "/dev/termination-log",
      "default-scheduler",
      "PreemptLowerPriority",
      "FallbackToLogsOnError",
      "node.kubernetes.io/not-ready",
      "node.kubernetes.io/unreachable",
      "metadata.namespace",
      "kube-root-ca.crt",
      "/var/run/secrets/kubernetes.io/serviceaccount",
      "ClusterFirstWithHostNet",
      "RuntimeDefault",
      // status
      "lastTransitionTime",
      "lastUpdateTime",
      "lastHeartbeatTime",
      "containerStatuses",
      "initContainerStatuses",
      "ephemeralContainerStatuses",
      "observedGeneration",
      "readyReplicas",
      "availableReplicas",
      "updatedReplicas",
      "unavailableReplicas",
      "collisionCount",
      "ContainersReady",
      "PodReadyToStartContainers",
      "CrashLoopBackOff",
      "ContainerCreating",
      "ImagePullBackOff",
      "MinimumReplicasAvailable",
      "NewReplicaSetAvailable",
      "ReplicaSetUpdated",
      "NewReplicaSetCreated",
      "FoundNewReplicaSet",
      // workloads
      "revisionHistoryLimit",
      "progressDeadlineSeconds",
      "maxUnavailable",
      "minReadySeconds",
      "matchExpressions",
      // services, leases, events, secrets
      "sessionAffinity",
      "internalTrafficPolicy",
      "ipFamilyPolicy",
      "leaseDurationSeconds",
      "holderIdentity",
      "leaseTransitions",
      "involvedObject",
      "firstTimestamp",
      "reportingComponent",
      "reportingInstance",
      "FailedScheduling",
      "SuccessfulCreate",
      "SuccessfulDelete",
      "ScalingReplicaSet",
      "kubernetes.io/service-account-token",
      "kubernetes.io/dockerconfigjson",
      "kubernetes.io/tls",
      "kubernetes.io/basic-auth",
      // managedFields (when kept)
      "f:creationTimestamp",
      "f:ownerReferences",
      "f:lastTransitionTime",
      "f:lastProbeTime",
      "f:containerStatuses",
      "f:terminationMessagePath",
      "f:terminationMessagePolicy",
      "f:imagePullPolicy",
      "f:securityContext",
      "f:terminationGracePeriodSeconds",
      "f:enableServiceLinks",
      "f:restartPolicy",
      "f:schedulerName",
      "f:volumeMounts",
      "f:containerPort",
      "f:generateName",
      "f:pod-template-hash",
      "f:observedGeneration",
      "f:readyReplicas",
      "f:availableReplicas",
      "f:updatedReplicas",
      "f:resourceVersion",
      "k:{\"type\":\"ContainersReady\"}",
      "k:{\"type\":\"Initialized\"}",
      "k:{\"type\":\"Ready\"}",
      "k:{\"type\":\"PodScheduled\"}",
      "k:{\"type\":\"Available\"}",
      "k:{\"type\":\"Progressing\"}",
  };
  return *kSet;
}

// The static copy of `s` when it is well known, else null.
const char* WellKnown(std::string_view s) {
  const auto& set = WellKnownStrings();
  auto it = set.find(s);
  return it == set.end() ? nullptr : it->data();
}

std::string Quote(std::string_view key) {
  return absl::CHexEscape(ToAbsl(key));
}

absl::Status Invalid(std::string_view what) {
  return absl::InvalidArgumentError(ToAbsl(what));
}

// Where Validate found a problem: the position of each step from the root
// (member or element index, so a repeated key is told apart), and whether
// the problem is a member missing from that object rather than the value
// there. Parse turns it into a byte offset (SiteLocator). The deepest path
// Validate writes is metadata.ownerReferences[i].field, four steps, so the
// path stays inline and Validate does not allocate on success.
struct ErrorSite {
  absl::InlinedVector<size_t, 4> path;
  bool missing = false;
};

// Validates the fields Object exposes, so accessors never meet a wrong
// type. JSON null reads as absent, as it does in Go's decoder. On failure
// `*site` (when not null) says where.
absl::Status Validate(const Value& root, ErrorSite* site = nullptr) {
  ErrorSite ignored;
  ErrorSite& at = site != nullptr ? *site : ignored;
  // Reset field by field: gcc -O2 wrongly reports the inlined storage of
  // a whole-struct assignment from a temporary as used uninitialized.
  at.path.clear();
  at.missing = false;
  if (!root.IsObject()) return Invalid("top level is not an object");
  auto index = [](const Value& object, Value::ConstMemberIterator it) {
    return static_cast<size_t>(it - object.MemberBegin());
  };
  for (const char* field : {"apiVersion", "kind"}) {
    auto it = root.FindMember(field);
    if (it != root.MemberEnd() && !it->value.IsString() &&
        !it->value.IsNull()) {
      at.path = {index(root, it)};
      return Invalid(absl::StrCat(field, " is not a string"));
    }
  }
  auto meta_it = root.FindMember("metadata");
  if (meta_it == root.MemberEnd()) {
    at.missing = true;
    return Invalid("metadata missing");
  }
  at.path = {index(root, meta_it)};
  if (meta_it->value.IsNull()) return Invalid("metadata missing");
  const Value& meta = meta_it->value;
  if (!meta.IsObject()) return Invalid("metadata is not an object");
  for (const char* field :
       {"name", "generateName", "namespace", "uid", "resourceVersion",
        "creationTimestamp", "deletionTimestamp"}) {
    auto it = meta.FindMember(field);
    if (it != meta.MemberEnd() && !it->value.IsString() &&
        !it->value.IsNull()) {
      at.path.push_back(index(meta, it));
      return Invalid(absl::StrCat("metadata.", field, " is not a string"));
    }
  }
  if (auto it = meta.FindMember("generation");
      it != meta.MemberEnd() && !it->value.IsInt64() && !it->value.IsNull()) {
    at.path.push_back(index(meta, it));
    return Invalid("metadata.generation is not an integer");
  }
  for (const char* field : {"labels", "annotations"}) {
    auto it = meta.FindMember(field);
    if (it == meta.MemberEnd() || it->value.IsNull()) continue;
    at.path.push_back(index(meta, it));
    if (!it->value.IsObject()) {
      return Invalid(absl::StrCat("metadata.", field, " is not an object"));
    }
    for (auto m = it->value.MemberBegin(); m != it->value.MemberEnd(); ++m) {
      if (!m->value.IsString()) {
        at.path.push_back(index(it->value, m));
        return Invalid(absl::StrCat("metadata.", field, ".",
                                    Quote(StringOf(m->name)),
                                    " is not a string"));
      }
    }
    at.path.pop_back();
  }
  if (auto it = meta.FindMember("finalizers");
      it != meta.MemberEnd() && !it->value.IsNull()) {
    at.path.push_back(index(meta, it));
    if (!it->value.IsArray()) {
      return Invalid("metadata.finalizers is not an array");
    }
    for (rapidjson::SizeType i = 0; i < it->value.Size(); ++i) {
      if (!it->value[i].IsString()) {
        at.path.push_back(i);
        return Invalid(
            absl::StrCat("metadata.finalizers[", i, "] is not a string"));
      }
    }
    at.path.pop_back();
  }
  if (auto it = meta.FindMember("ownerReferences");
      it != meta.MemberEnd() && !it->value.IsNull()) {
    at.path.push_back(index(meta, it));
    if (!it->value.IsArray()) {
      return Invalid("metadata.ownerReferences is not an array");
    }
    for (rapidjson::SizeType i = 0; i < it->value.Size(); ++i) {
      const Value& ref = it->value[i];
      at.path.push_back(i);
      if (!ref.IsObject()) {
        return Invalid(
            absl::StrCat("metadata.ownerReferences[", i, "] is not an object"));
      }
      for (const char* field : {"apiVersion", "kind", "name", "uid"}) {
        auto f = ref.FindMember(field);
        if (f != ref.MemberEnd() && !f->value.IsString() &&
            !f->value.IsNull()) {
          at.path.push_back(index(ref, f));
          return Invalid(absl::StrCat("metadata.ownerReferences[", i, "].",
                                      field, " is not a string"));
        }
      }
      for (const char* field : {"controller", "blockOwnerDeletion"}) {
        auto f = ref.FindMember(field);
        if (f != ref.MemberEnd() && !f->value.IsBool() && !f->value.IsNull()) {
          at.path.push_back(index(ref, f));
          return Invalid(absl::StrCat("metadata.ownerReferences[", i, "].",
                                      field, " is not a boolean"));
        }
      }
      at.path.pop_back();
    }
  }
  at.path.clear();
  return absl::OkStatus();
}

// Finds, by re-reading the text, the byte offset at which a value starts:
// either the value at `site` (child positions from the root), or the first
// array or object nested deeper than kMaxJsonDepth, not counting
// metadata.managedFields when `skip_managed_fields` (as MakePlan does).
// Runs only on the error path, over text that is known to parse; the
// iterative reader keeps it safe on any nesting.
class SiteLocator
    : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, SiteLocator> {
 public:
  // Locates the value at `site`.
  SiteLocator(std::string_view json, const ErrorSite& site)
      : json_(json), stream_(json.data(), json.size()), site_(&site) {}
  // Locates the first container deeper than kMaxJsonDepth.
  SiteLocator(std::string_view json, bool skip_managed_fields)
      : json_(json),
        stream_(json.data(), json.size()),
        skip_managed_fields_(skip_managed_fields) {}

  // The offset, or nullopt when there is no such value.
  std::optional<size_t> Run() {
    rapidjson::Reader reader;
    reader.Parse<rapidjson::kParseIterativeFlag>(stream_, *this);
    return found_;
  }

  bool Default() { return OnValue(/*container=*/false); }
  bool StartObject() { return OnValue(/*container=*/true); }
  bool StartArray() { return OnValue(/*container=*/true); }
  bool Key(const char* str, rapidjson::SizeType len, bool) {
    const std::string_view key(str, len);
    Level& level = levels_.back();
    level.skip_next = false;
    if (levels_.size() == 1 && key == "metadata" && !seen_metadata_) {
      seen_metadata_ = true;
      level.metadata_next = true;
    } else if (level.is_metadata && skip_managed_fields_ &&
               key == "managedFields") {
      level.skip_next = true;
    }
    end_ = stream_.Tell();
    return true;
  }
  bool EndObject(rapidjson::SizeType) { return End(); }
  bool EndArray(rapidjson::SizeType) { return End(); }

 private:
  struct Level {
    size_t count = 0;      // children seen so far
    bool on_path = false;  // this container's path is a prefix of site_
    bool is_metadata = false;
    bool skipped = false;        // inside a member MakePlan skips
    bool metadata_next = false;  // the next child is the root's metadata
    bool skip_next = false;      // the next child is metadata.managedFields
  };

  // Called as each value starts (containers) or ends (scalars). end_ is
  // where the previous token ended: only whitespace, ',' and ':' lie
  // between it and the value's first byte.
  bool OnValue(bool container) {
    const size_t depth = levels_.size();
    bool on_path = site_ != nullptr && depth == 0;
    bool is_metadata = false;
    bool skipped = false;
    if (depth > 0) {
      Level& parent = levels_.back();
      const size_t index = parent.count++;
      on_path = site_ != nullptr && parent.on_path &&
                depth - 1 < site_->path.size() &&
                site_->path[depth - 1] == index;
      is_metadata = parent.metadata_next;
      skipped = parent.skipped || parent.skip_next;
      parent.metadata_next = parent.skip_next = false;
    }
    const size_t start = SkipSeparators(end_);
    if (site_ != nullptr && on_path &&
        (depth == 0 ? site_->path.empty() : depth == site_->path.size())) {
      found_ = start;
      return false;  // stop reading
    }
    if (site_ == nullptr && container && !skipped &&
        depth + 1 > static_cast<size_t>(kMaxJsonDepth)) {
      found_ = start;
      return false;
    }
    if (container) {
      Level level;
      level.on_path = on_path;
      level.is_metadata = is_metadata;
      level.skipped = skipped;
      levels_.push_back(level);
      // The reader may report a bracket before or after consuming it.
      end_ = start + 1;
    } else {
      end_ = stream_.Tell();
    }
    return true;
  }

  bool End() {
    levels_.pop_back();
    end_ = SkipSeparators(end_) + 1;
    return true;
  }

  // The first byte at or after `at` that is not whitespace, ',' or ':'.
  size_t SkipSeparators(size_t at) const {
    while (at < json_.size() && json_[at] != '\0' &&
           std::strchr(" \t\n\r,:", json_[at]) != nullptr) {
      ++at;
    }
    return at;
  }

  std::string_view json_;
  rapidjson::MemoryStream stream_;
  const ErrorSite* site_ = nullptr;
  bool skip_managed_fields_ = false;
  bool seen_metadata_ = false;
  std::vector<Level> levels_;
  size_t end_ = 0;
  std::optional<size_t> found_;
};

// How an Object's arena is laid out, from a walk over the source tree.
struct Plan {
  size_t node_bytes = 0;  // member and element arrays, 8-byte aligned
  size_t blob_bytes = 0;  // long strings, packed, NUL-terminated
  // Unique long strings -> offset in the blob.
  absl::flat_hash_map<std::string_view, size_t> offsets;
  // Where each long string of the tree lives, in emission (pre-)order:
  // a static well-known copy, or an offset into the blob.
  std::vector<std::pair<const char*, size_t>> strings;
  // MakePlan's work list, kept to reuse its capacity.
  struct Item {
    const Value* key;  // null for array elements and the root
    const Value* value;
    int depth;
  };
  std::vector<Item> stack;

  void Clear() {
    node_bytes = blob_bytes = 0;
    offsets.clear();
    strings.clear();
  }
};

constexpr size_t kNotInBlob = std::numeric_limits<size_t>::max();

void PlanString(const Value& s, Plan* plan) {
  if (s.GetStringLength() <= kInlineStringMax) return;
  std::string_view sv = StringOf(s);
  if (const char* known = WellKnown(sv)) {
    plan->strings.emplace_back(known, kNotInBlob);
    return;
  }
  auto [it, inserted] = plan->offsets.try_emplace(sv, plan->blob_bytes);
  if (inserted) plan->blob_bytes += sv.size() + 1;
  plan->strings.emplace_back(nullptr, it->second);
}

bool IsSkipped(const Value& parent, const Value& key, const Value* skip) {
  return &parent == skip && StringOf(key) == "managedFields";
}

// Walks `root` in the order Emit will, sizing the arena and checking the
// nesting depth. Iterative: safe on any input.
absl::Status MakePlan(const Value& root, const Value* skip, Plan* plan) {
  using Item = Plan::Item;
  std::vector<Item>& stack = plan->stack;
  stack.clear();
  stack.push_back({nullptr, &root, 0});
  while (!stack.empty()) {
    Item item = stack.back();
    stack.pop_back();
    if (item.key != nullptr) PlanString(*item.key, plan);
    const Value& v = *item.value;
    if (v.IsString()) {
      PlanString(v, plan);
    } else if (v.IsObject() || v.IsArray()) {
      const int depth = item.depth + 1;
      if (depth > kMaxJsonDepth) {
        return Invalid(
            absl::StrCat("JSON nests deeper than ", kMaxJsonDepth, " levels"));
      }
      if (v.IsObject()) {
        size_t count = 0;
        for (auto m = v.MemberEnd(); m != v.MemberBegin();) {
          --m;
          if (IsSkipped(v, m->name, skip)) continue;
          stack.push_back({&m->name, &m->value, depth});
          ++count;
        }
        plan->node_bytes += Align(count * sizeof(Value::Member));
      } else {
        for (auto e = v.End(); e != v.Begin();) {
          --e;
          stack.push_back({nullptr, e, depth});
        }
        plan->node_bytes += Align(v.Size() * sizeof(Value));
      }
    }
  }
  return absl::OkStatus();
}

// Where Emit puts strings.
struct StringSink {
  // Arena mode: long strings come from plan->strings, in order.
  const Plan* plan = nullptr;
  const char* blob = nullptr;
  size_t next = 0;
};

// Replays `v` as SAX events into `handler` (a Document building its tree).
// Recursive, so the caller has checked the depth (MakePlan, or a tree that
// came from a validated Object). With `sink.plan` null every string except
// the well-known ones is copied by the handler.
template <typename Handler>
bool Emit(const Value& v, Handler& handler, const Value* skip,
          StringSink& sink);

template <typename Handler>
bool EmitString(const Value& s, Handler& handler, StringSink& sink,
                bool is_key) {
  const char* str = s.GetString();
  const rapidjson::SizeType len = s.GetStringLength();
  bool copy = true;
  if (len > kInlineStringMax) {
    if (sink.plan != nullptr) {
      const auto& [known, offset] = sink.plan->strings[sink.next++];
      str = known != nullptr ? known : sink.blob + offset;
      copy = false;
    } else if (const char* known = WellKnown(StringOf(s))) {
      str = known;
      copy = false;
    }
  }
  return is_key ? handler.Key(str, len, copy) : handler.String(str, len, copy);
}

template <typename Handler>
bool Emit(const Value& v, Handler& handler, const Value* skip,
          StringSink& sink) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return handler.Null();
    case rapidjson::kFalseType:
      return handler.Bool(false);
    case rapidjson::kTrueType:
      return handler.Bool(true);
    case rapidjson::kStringType:
      return EmitString(v, handler, sink, /*is_key=*/false);
    case rapidjson::kNumberType:
      if (v.IsDouble()) return handler.Double(v.GetDouble());
      if (v.IsInt()) return handler.Int(v.GetInt());
      if (v.IsUint()) return handler.Uint(v.GetUint());
      if (v.IsInt64()) return handler.Int64(v.GetInt64());
      return handler.Uint64(v.GetUint64());
    case rapidjson::kObjectType: {
      if (!handler.StartObject()) return false;
      rapidjson::SizeType count = 0;
      for (const auto& m : v.GetObject()) {
        if (IsSkipped(v, m.name, skip)) continue;
        if (!EmitString(m.name, handler, sink, /*is_key=*/true) ||
            !Emit(m.value, handler, skip, sink)) {
          return false;
        }
        ++count;
      }
      return handler.EndObject(count);
    }
    case rapidjson::kArrayType: {
      if (!handler.StartArray()) return false;
      for (const Value& e : v.GetArray()) {
        if (!Emit(e, handler, skip, sink)) return false;
      }
      return handler.EndArray(v.Size());
    }
  }
  return false;
}

// Per-thread state for Parse: the in-situ text buffer, a pool for the
// scratch tree (reused, so parsing does not allocate in steady state) and
// the arena plan.
struct Scratch {
  std::string text;
  std::unique_ptr<char[]> pool_buffer{new char[kScratchBytes]};
  rapidjson::MemoryPoolAllocator<> pool{pool_buffer.get(), kScratchBytes,
                                        kScratchBytes};
  Plan plan;
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// What Parse needs to know about its input before choosing a parser.
struct InputShape {
  bool ascii = true;
  size_t brackets = 0;  // '[' and '{' bytes, inside strings or not
  bool has_nul = false;
};

// Bytes of `w` equal to zero, each marked by its top bit (exact, no false
// positives, unlike the usual "has a zero byte" test).
inline uint64_t ZeroBytes(uint64_t w) {
  constexpr uint64_t k7F = 0x7F7F7F7F7F7F7F7FULL;
  return ~(((w & k7F) + k7F) | w | k7F);
}

// One pass, a word at a time: this runs on every byte the cache receives.
InputShape Inspect(std::string_view json) {
  constexpr uint64_t k20 = 0x2020202020202020ULL;
  constexpr uint64_t k7B = 0x7B7B7B7B7B7B7B7BULL;
  constexpr uint64_t k80 = 0x8080808080808080ULL;
  InputShape shape;
  uint64_t high = 0;
  uint64_t nul = 0;
  size_t brackets = 0;
  const char* p = json.data();
  size_t n = json.size();
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    high |= w;
    nul |= ZeroBytes(w);
    // '[' is 0x5B and '{' is 0x7B: they differ only in bit 5.
    // Marked bytes are 0x80: shift each to 1 and add the bytes up with a
    // multiply (no popcnt instruction in the baseline x86-64 target).
    brackets +=
        ((ZeroBytes((w | k20) ^ k7B) >> 7) * 0x0101010101010101ULL) >> 56;
  }
  for (; n > 0; ++p, --n) {
    const unsigned char u = static_cast<unsigned char>(*p);
    high |= u;
    nul |= u == 0;
    brackets += (u | 0x20) == 0x7B;
  }
  shape.ascii = (high & k80) == 0;
  shape.has_nul = nul != 0;
  shape.brackets = brackets;
  return shape;
}

// True when `json` may hold a \uD800-\uDFFF escape (a UTF-16 surrogate).
bool MayHoldSurrogateEscape(std::string_view json) {
  for (size_t i = json.find("\\u"); i != std::string_view::npos;
       i = json.find("\\u", i + 1)) {
    if (i + 2 < json.size() && (json[i + 2] == 'd' || json[i + 2] == 'D')) {
      return true;
    }
  }
  return false;
}

// RapidJSON 1.1.0 decodes a lone low surrogate escape ("\uDC00") into the
// three bytes ED B0 80, which are not UTF-8, so the object could not be
// written out and read back. Replace each with U+FFFD (EF BF BD, also three
// bytes), as Go's encoding/json does. Only surrogates can produce ED A0..BF
// here: other bytes were validated or are ASCII.
void ReplaceLoneSurrogates(Value& root) {
  auto fix = [](Value& s) {
    // Strings of the scratch tree live in the writable in-situ buffer or
    // inside the value itself.
    char* p = const_cast<char*>(s.GetString());
    const size_t n = s.GetStringLength();
    for (size_t i = 0; i + 2 < n; ++i) {
      if (static_cast<unsigned char>(p[i]) == 0xED &&
          (static_cast<unsigned char>(p[i + 1]) & 0xE0) == 0xA0) {
        p[i] = '\xEF';
        p[i + 1] = '\xBF';
        p[i + 2] = '\xBD';
        i += 2;
      }
    }
  };
  std::vector<Value*> stack = {&root};
  while (!stack.empty()) {
    Value* v = stack.back();
    stack.pop_back();
    if (v->IsString()) {
      fix(*v);
    } else if (v->IsObject()) {
      for (auto& m : v->GetObject()) {
        fix(m.name);
        stack.push_back(&m.value);
      }
    } else if (v->IsArray()) {
      for (auto& e : v->GetArray()) stack.push_back(&e);
    }
  }
}

// RFC 6901: splits off the next reference token of `*rest` (which starts
// with '/') and unescapes it into `*token`. False when malformed.
bool NextToken(std::string_view* rest, std::string* buffer,
               std::string_view* token) {
  if (rest->empty() || (*rest)[0] != '/') return false;
  rest->remove_prefix(1);
  size_t end = rest->find('/');
  std::string_view raw = rest->substr(0, end);
  rest->remove_prefix(end == std::string_view::npos ? rest->size() : end);
  if (raw.find('~') == std::string_view::npos) {
    *token = raw;
    return true;
  }
  buffer->clear();
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '~') {
      buffer->push_back(raw[i]);
      continue;
    }
    if (i + 1 >= raw.size()) return false;
    if (raw[i + 1] == '0') {
      buffer->push_back('~');
    } else if (raw[i + 1] == '1') {
      buffer->push_back('/');
    } else {
      return false;
    }
    ++i;
  }
  *token = *buffer;
  return true;
}

// An array index token: digits without a leading zero.
bool ParseIndex(std::string_view token, size_t* index) {
  if (token.empty() || token.size() > 9) return false;
  if (token.size() > 1 && token[0] == '0') return false;
  size_t n = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<size_t>(c - '0');
  }
  *index = n;
  return true;
}

Value::ConstMemberIterator FindKey(const Value& object, std::string_view key) {
  Value name(rapidjson::StringRef(
      key.data(), static_cast<rapidjson::SizeType>(key.size())));
  return object.FindMember(name);
}

Value::MemberIterator FindKey(Value& object, std::string_view key) {
  Value name(rapidjson::StringRef(
      key.data(), static_cast<rapidjson::SizeType>(key.size())));
  return object.FindMember(name);
}

const Value* FindPointer(const Value& root, std::string_view pointer) {
  const Value* v = &root;
  std::string buffer;
  std::string_view token;
  while (!pointer.empty()) {
    if (!NextToken(&pointer, &buffer, &token)) return nullptr;
    if (v->IsObject()) {
      auto it = FindKey(*v, token);
      if (it == v->MemberEnd()) return nullptr;
      v = &it->value;
    } else if (v->IsArray()) {
      size_t index;
      if (!ParseIndex(token, &index) || index >= v->Size()) return nullptr;
      v = &(*v)[static_cast<rapidjson::SizeType>(index)];
    } else {
      return nullptr;
    }
  }
  return v;
}

std::string WriteJson(const Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  v.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

Value MakeString(std::string_view s, rapidjson::MemoryPoolAllocator<>& a) {
  return Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

// Sets object member `key` (replacing in place to keep the order).
void SetMember(Value& object, std::string_view key, Value&& value,
               rapidjson::MemoryPoolAllocator<>& a) {
  auto it = FindKey(object, key);
  if (it != object.MemberEnd()) {
    it->value = value;
  } else {
    object.AddMember(MakeString(key, a), value, a);
  }
}

void EraseMember(Value& object, std::string_view key) {
  auto it = FindKey(object, key);
  if (it != object.MemberEnd()) object.EraseMember(it);
}

const Value* MetadataOf(const Value& root) {
  auto it = root.FindMember("metadata");
  return it == root.MemberEnd() ? nullptr : &it->value;
}

}  // namespace

// ---------------------------------------------------------------------------
// StringMapView

StringMapView::value_type StringMapView::iterator::operator*() const {
  return {StringOf(it_->name), StringOf(it_->value)};
}

std::optional<std::string_view> StringMapView::Get(std::string_view key) const {
  if (map_ == nullptr) return std::nullopt;
  auto it = FindKey(*map_, key);
  if (it == map_->MemberEnd()) return std::nullopt;
  return StringOf(it->value);
}

StringMapView::iterator StringMapView::begin() const {
  return map_ == nullptr ? iterator() : iterator(map_->MemberBegin());
}

StringMapView::iterator StringMapView::end() const {
  return map_ == nullptr ? iterator() : iterator(map_->MemberEnd());
}

std::map<std::string, std::string> StringMapView::ToMap() const {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : *this) out.emplace(k, v);
  return out;
}

// ---------------------------------------------------------------------------
// Object

absl::StatusOr<ObjectPtr> Object::Parse(std::string_view json,
                                        const ParseOptions& options) {
  // JSON text never holds a raw NUL; refusing it here lets the in-situ
  // parser treat NUL as the end of input.
  const InputShape shape = Inspect(json);
  if (shape.has_nul) {
    const char* nul =
        static_cast<const char*>(std::memchr(json.data(), '\0', json.size()));
    return Invalid(absl::StrCat("invalid JSON at offset ", nul - json.data(),
                                ": NUL byte in input."));
  }
  Scratch& scratch = ThreadScratch();
  scratch.text.assign(json.data(), json.size());
  scratch.pool.Clear();
  rapidjson::Document doc(&scratch.pool);
  // RapidJSON's fastest path (recursive, no UTF-8 check) is used only when
  // it is safe: nesting cannot exceed the count of '[' and '{' bytes, and
  // pure ASCII needs no validation. Otherwise the iterative, validating
  // parser takes over, which never recurses.
  constexpr unsigned kIterative = rapidjson::kParseIterativeFlag;
  constexpr unsigned kValidate = rapidjson::kParseValidateEncodingFlag;
  // Numbers parse to the nearest double, so reading an object and writing
  // it back never changes a value.
  constexpr unsigned kExact = rapidjson::kParseFullPrecisionFlag;
  char* text = scratch.text.data();
  if (shape.brackets <= kMaxJsonDepth) {
    if (shape.ascii) {
      doc.ParseInsitu<kExact>(text);
    } else {
      doc.ParseInsitu<kExact | kValidate>(text);
    }
  } else {
    if (shape.ascii) {
      doc.ParseInsitu<kExact | kIterative>(text);
    } else {
      doc.ParseInsitu<kExact | kIterative | kValidate>(text);
    }
  }
  if (doc.HasParseError()) {
    return Invalid(
        absl::StrCat("invalid JSON at offset ", doc.GetErrorOffset(), ": ",
                     rapidjson::GetParseError_En(doc.GetParseError())));
  }
  if (MayHoldSurrogateEscape(json)) ReplaceLoneSurrogates(doc);
  absl::StatusOr<ObjectPtr> object = FromValue(doc, options);
  if (object.ok() ||
      object.status().code() != absl::StatusCode::kInvalidArgument) {
    return object;
  }
  // Say where in the text the problem is: the failing value, the object
  // that lacks a required member, or the first array or object too deep.
  ErrorSite site;
  const std::optional<size_t> offset =
      !Validate(doc, &site).ok()
          ? SiteLocator(json, site).Run()
          : SiteLocator(json, options.strip_managed_fields).Run();
  if (!offset.has_value()) return object.status();
  return Invalid(absl::StrCat(
      object.status().message(),
      site.missing ? " from the object at offset " : " at offset ", *offset));
}

absl::StatusOr<ObjectPtr> Object::FromValue(const Value& value,
                                            const ParseOptions& options) {
  if (absl::Status s = Validate(value); !s.ok()) return s;
  const Value* skip =
      options.strip_managed_fields ? MetadataOf(value) : nullptr;
  Plan& plan = ThreadScratch().plan;
  plan.Clear();
  if (absl::Status s = MakePlan(value, skip, &plan); !s.ok()) return s;

  const size_t pool_bytes = kPoolHeader + std::max<size_t>(plan.node_bytes, 8);
  const size_t arena_size = pool_bytes + plan.blob_bytes;
  if (arena_size > std::numeric_limits<uint32_t>::max()) {
    return Invalid("object too large: its tree needs more than 4 GiB");
  }
  auto object = std::make_shared<Object>(PrivateTag{});
  object->arena_size_ = static_cast<uint32_t>(arena_size);
  object->arena_.reset(new char[arena_size]);
  char* blob = object->arena_.get() + pool_bytes;
  for (const auto& [s, offset] : plan.offsets) {
    std::memcpy(blob + offset, s.data(), s.size());
    blob[offset + s.size()] = '\0';
  }
  // The pool is needed only while the tree is built: values hold no
  // allocator pointer, and an Object never allocates again. The plan sized
  // the arena for exactly this tree; should building ever need more, the
  // object is refused rather than kept with memory it does not account for.
  const size_t pool_capacity = pool_bytes - kPoolHeader;
  rapidjson::MemoryPoolAllocator<> pool(object->arena_.get(), pool_bytes,
                                        /*chunkSize=*/1024);
  rapidjson::Document doc(&pool);
  StringSink sink{&plan, blob, 0};
  bool ok = false;
  auto generator = [&](rapidjson::Document& handler) {
    ok = Emit(value, handler, skip, sink);
    return ok;
  };
  doc.Populate(generator);
  if (!ok) return absl::InternalError("copying the object tree failed");
  if (pool.Capacity() != pool_capacity) {
    return absl::InternalError("the object tree outgrew its planned size");
  }
  object->root_.Swap(doc);
  object->Index();
  return ObjectPtr(std::move(object));
}

namespace {

// What each hot field is: its key, and whether its value is an object
// (else a string). Indexed by Object::HotField.
struct HotFieldSpec {
  const char* key;
  bool is_object;
};
constexpr HotFieldSpec kHotFieldSpecs[] = {
    {"apiVersion", false}, {"kind", false},       {"name", false},
    {"namespace", false},  {"uid", false},        {"resourceVersion", false},
    {"labels", true},      {"annotations", true},
};

}  // namespace

Value::ConstMemberIterator Object::FindHot(HotField field) const {
  const HotFieldSpec& spec = kHotFieldSpecs[field];
  const Value& parent = HotParent(field);
  auto it = parent.FindMember(spec.key);
  if (it == parent.MemberEnd()) return it;
  const bool typed =
      spec.is_object ? it->value.IsObject() : it->value.IsString();
  return typed ? it : parent.MemberEnd();
}

const Value* Object::HotByKey(HotField field) const {
  auto it = FindHot(field);
  return it == HotParent(field).MemberEnd() ? nullptr : &it->value;
}

void Object::Index() {
  static_assert(std::size(kHotFieldSpecs) == kHotFields);
  metadata_ = &root_.FindMember("metadata")->value;  // Validate checked it
  for (int f = 0; f < kHotFields; ++f) {
    const auto field = static_cast<HotField>(f);
    const Value& parent = HotParent(field);
    auto it = FindHot(field);
    const size_t index = static_cast<size_t>(it - parent.MemberBegin());
    hot_[f] = it == parent.MemberEnd() ? kAbsent
              : index < kByKey         ? static_cast<uint16_t>(index)
                                       : kByKey;
  }
}

const Value* Object::MetadataMember(std::string_view key) const {
  auto it = FindKey(*metadata_, key);
  return it == metadata_->MemberEnd() ? nullptr : &it->value;
}

std::string_view Object::generate_name() const {
  const Value* v = MetadataMember("generateName");
  return v != nullptr && v->IsString() ? StringOf(*v) : std::string_view();
}

std::string_view Object::creation_timestamp() const {
  const Value* v = MetadataMember("creationTimestamp");
  return v != nullptr && v->IsString() ? StringOf(*v) : std::string_view();
}

std::string_view Object::deletion_timestamp() const {
  const Value* v = MetadataMember("deletionTimestamp");
  return v != nullptr && v->IsString() ? StringOf(*v) : std::string_view();
}

int64_t Object::generation() const {
  const Value* v = MetadataMember("generation");
  return v != nullptr && v->IsInt64() ? v->GetInt64() : 0;
}

std::string Object::Key() const {
  if (namespace_().empty()) return std::string(name());
  return absl::StrCat(ToAbsl(namespace_()), "/", ToAbsl(name()));
}

std::vector<OwnerReferenceView> Object::owner_references() const {
  std::vector<OwnerReferenceView> out;
  const Value* refs = MetadataMember("ownerReferences");
  if (refs == nullptr || !refs->IsArray()) return out;
  out.reserve(refs->Size());
  for (const Value& ref : refs->GetArray()) {
    OwnerReferenceView view;
    for (const auto& m : ref.GetObject()) {
      std::string_view key = StringOf(m.name);
      if (m.value.IsString()) {
        if (key == "apiVersion") view.api_version = StringOf(m.value);
        if (key == "kind") view.kind = StringOf(m.value);
        if (key == "name") view.name = StringOf(m.value);
        if (key == "uid") view.uid = StringOf(m.value);
      } else if (m.value.IsBool()) {
        if (key == "controller") view.controller = m.value.GetBool();
        if (key == "blockOwnerDeletion") {
          view.block_owner_deletion = m.value.GetBool();
        }
      }
    }
    out.push_back(view);
  }
  return out;
}

std::optional<OwnerReferenceView> Object::controller_reference() const {
  for (const OwnerReferenceView& ref : owner_references()) {
    if (ref.controller) return ref;
  }
  return std::nullopt;
}

std::vector<std::string_view> Object::finalizers() const {
  std::vector<std::string_view> out;
  const Value* list = MetadataMember("finalizers");
  if (list == nullptr || !list->IsArray()) return out;
  out.reserve(list->Size());
  for (const Value& f : list->GetArray()) out.push_back(StringOf(f));
  return out;
}

bool Object::HasFinalizer(std::string_view finalizer) const {
  const Value* list = MetadataMember("finalizers");
  if (list == nullptr || !list->IsArray()) return false;
  for (const Value& f : list->GetArray()) {
    if (StringOf(f) == finalizer) return true;
  }
  return false;
}

const Value* Object::Find(std::string_view json_pointer) const {
  return FindPointer(root_, json_pointer);
}

std::string Object::ToJson() const { return WriteJson(root_); }

size_t Object::SpaceUsed() const {
  return sizeof(Object) + kControlBlock + arena_size_;
}

ObjectBuilder Object::ToBuilder() const { return ObjectBuilder(*this); }

// ---------------------------------------------------------------------------
// ObjectBuilder

namespace {
constexpr size_t kBuilderChunk = 4096;
}  // namespace

ObjectBuilder::ObjectBuilder()
    : pool_(std::make_unique<rapidjson::MemoryPoolAllocator<>>(kBuilderChunk)),
      doc_(std::make_unique<rapidjson::Document>(rapidjson::kObjectType,
                                                 pool_.get())) {
  doc_->AddMember("metadata", Value(rapidjson::kObjectType), *pool_);
}

ObjectBuilder::ObjectBuilder(std::string_view api_version,
                             std::string_view kind)
    : pool_(std::make_unique<rapidjson::MemoryPoolAllocator<>>(kBuilderChunk)),
      doc_(std::make_unique<rapidjson::Document>(rapidjson::kObjectType,
                                                 pool_.get())) {
  doc_->AddMember("apiVersion", MakeString(api_version, *pool_), *pool_);
  doc_->AddMember("kind", MakeString(kind, *pool_), *pool_);
  doc_->AddMember("metadata", Value(rapidjson::kObjectType), *pool_);
}

ObjectBuilder::ObjectBuilder(const Object& object)
    : pool_(std::make_unique<rapidjson::MemoryPoolAllocator<>>(kBuilderChunk)),
      doc_(std::make_unique<rapidjson::Document>(pool_.get())) {
  // Object trees hold strings by reference into their arena, so copy every
  // string (RapidJSON's CopyFrom would keep those references).
  StringSink sink;
  auto generator = [&](rapidjson::Document& handler) {
    return Emit(object.json(), handler, nullptr, sink);
  };
  doc_->Populate(generator);
}

ObjectBuilder::~ObjectBuilder() = default;

absl::StatusOr<ObjectBuilder> ObjectBuilder::FromJson(std::string_view json) {
  ObjectBuilder builder;
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag |
                              rapidjson::kParseValidateEncodingFlag |
                              rapidjson::kParseFullPrecisionFlag;
  rapidjson::MemoryStream stream(json.data(), json.size());
  builder.doc_->ParseStream<kFlags, rapidjson::UTF8<>>(stream);
  if (builder.doc_->HasParseError()) {
    return Invalid(absl::StrCat(
        "invalid JSON at offset ", builder.doc_->GetErrorOffset(), ": ",
        rapidjson::GetParseError_En(builder.doc_->GetParseError())));
  }
  if (MayHoldSurrogateEscape(json)) ReplaceLoneSurrogates(*builder.doc_);
  if (!builder.doc_->IsObject()) {
    builder.doc_->SetObject();
    return Invalid("top level is not an object");
  }
  Plan plan;
  if (absl::Status s = MakePlan(*builder.doc_, nullptr, &plan); !s.ok()) {
    // Drop the tree: later recursive walks must not meet it.
    builder.doc_->SetObject();
    return s;
  }
  return builder;
}

Value& ObjectBuilder::ObjectMember(Value& parent, std::string_view key) {
  auto it = FindKey(parent, key);
  if (it == parent.MemberEnd()) {
    parent.AddMember(MakeString(key, *pool_), Value(rapidjson::kObjectType),
                     *pool_);
    return parent.MemberEnd()[-1].value;
  }
  if (!it->value.IsObject()) it->value.SetObject();
  return it->value;
}

Value& ObjectBuilder::Metadata() { return ObjectMember(*doc_, "metadata"); }

ObjectBuilder& ObjectBuilder::SetApiVersion(std::string_view v) {
  SetMember(*doc_, "apiVersion", MakeString(v, *pool_), *pool_);
  return *this;
}
ObjectBuilder& ObjectBuilder::SetKind(std::string_view v) {
  SetMember(*doc_, "kind", MakeString(v, *pool_), *pool_);
  return *this;
}
ObjectBuilder& ObjectBuilder::SetName(std::string_view v) {
  SetMember(Metadata(), "name", MakeString(v, *pool_), *pool_);
  return *this;
}
ObjectBuilder& ObjectBuilder::SetGenerateName(std::string_view v) {
  SetMember(Metadata(), "generateName", MakeString(v, *pool_), *pool_);
  return *this;
}
ObjectBuilder& ObjectBuilder::SetNamespace(std::string_view v) {
  SetMember(Metadata(), "namespace", MakeString(v, *pool_), *pool_);
  return *this;
}
ObjectBuilder& ObjectBuilder::SetUid(std::string_view v) {
  SetMember(Metadata(), "uid", MakeString(v, *pool_), *pool_);
  return *this;
}
ObjectBuilder& ObjectBuilder::SetResourceVersion(std::string_view v) {
  SetMember(Metadata(), "resourceVersion", MakeString(v, *pool_), *pool_);
  return *this;
}
ObjectBuilder& ObjectBuilder::SetGeneration(int64_t v) {
  SetMember(Metadata(), "generation", Value(static_cast<int64_t>(v)), *pool_);
  return *this;
}

ObjectBuilder& ObjectBuilder::SetLabel(std::string_view key,
                                       std::string_view value) {
  SetMember(ObjectMember(Metadata(), "labels"), key, MakeString(value, *pool_),
            *pool_);
  return *this;
}
ObjectBuilder& ObjectBuilder::RemoveLabel(std::string_view key) {
  EraseMember(ObjectMember(Metadata(), "labels"), key);
  return *this;
}
ObjectBuilder& ObjectBuilder::SetLabels(
    const std::map<std::string, std::string>& labels) {
  Value& map = ObjectMember(Metadata(), "labels");
  map.RemoveAllMembers();
  for (const auto& [k, v] : labels) {
    map.AddMember(MakeString(k, *pool_), MakeString(v, *pool_), *pool_);
  }
  return *this;
}
ObjectBuilder& ObjectBuilder::SetAnnotation(std::string_view key,
                                            std::string_view value) {
  SetMember(ObjectMember(Metadata(), "annotations"), key,
            MakeString(value, *pool_), *pool_);
  return *this;
}
ObjectBuilder& ObjectBuilder::RemoveAnnotation(std::string_view key) {
  EraseMember(ObjectMember(Metadata(), "annotations"), key);
  return *this;
}
ObjectBuilder& ObjectBuilder::SetAnnotations(
    const std::map<std::string, std::string>& annotations) {
  Value& map = ObjectMember(Metadata(), "annotations");
  map.RemoveAllMembers();
  for (const auto& [k, v] : annotations) {
    map.AddMember(MakeString(k, *pool_), MakeString(v, *pool_), *pool_);
  }
  return *this;
}

namespace {
Value& ArrayMember(Value& parent, std::string_view key,
                   rapidjson::MemoryPoolAllocator<>& a) {
  auto it = FindKey(parent, key);
  if (it == parent.MemberEnd()) {
    parent.AddMember(MakeString(key, a), Value(rapidjson::kArrayType), a);
    return parent.MemberEnd()[-1].value;
  }
  if (!it->value.IsArray()) it->value.SetArray();
  return it->value;
}
}  // namespace

ObjectBuilder& ObjectBuilder::AddFinalizer(std::string_view finalizer) {
  Value& list = ArrayMember(Metadata(), "finalizers", *pool_);
  for (const Value& f : list.GetArray()) {
    if (f.IsString() && StringOf(f) == finalizer) return *this;
  }
  list.PushBack(MakeString(finalizer, *pool_), *pool_);
  return *this;
}

ObjectBuilder& ObjectBuilder::RemoveFinalizer(std::string_view finalizer) {
  Value& list = ArrayMember(Metadata(), "finalizers", *pool_);
  for (auto it = list.Begin(); it != list.End();) {
    if (it->IsString() && StringOf(*it) == finalizer) {
      it = list.Erase(it);
    } else {
      ++it;
    }
  }
  return *this;
}

ObjectBuilder& ObjectBuilder::SetFinalizers(
    const std::vector<std::string>& finalizers) {
  Value& list = ArrayMember(Metadata(), "finalizers", *pool_);
  list.Clear();
  for (const std::string& f : finalizers) {
    list.PushBack(MakeString(f, *pool_), *pool_);
  }
  return *this;
}

namespace {
Value OwnerReferenceJson(const OwnerReferenceView& ref,
                         rapidjson::MemoryPoolAllocator<>& a) {
  Value v(rapidjson::kObjectType);
  v.AddMember("apiVersion", MakeString(ref.api_version, a), a);
  v.AddMember("kind", MakeString(ref.kind, a), a);
  v.AddMember("name", MakeString(ref.name, a), a);
  v.AddMember("uid", MakeString(ref.uid, a), a);
  if (ref.controller) v.AddMember("controller", true, a);
  if (ref.block_owner_deletion) v.AddMember("blockOwnerDeletion", true, a);
  return v;
}
}  // namespace

ObjectBuilder& ObjectBuilder::AddOwnerReference(const OwnerReferenceView& ref) {
  Value& list = ArrayMember(Metadata(), "ownerReferences", *pool_);
  Value json = OwnerReferenceJson(ref, *pool_);
  for (Value& existing : list.GetArray()) {
    if (!existing.IsObject()) continue;
    auto uid = existing.FindMember("uid");
    if (uid != existing.MemberEnd() && uid->value.IsString() &&
        StringOf(uid->value) == ref.uid) {
      existing = json;
      return *this;
    }
  }
  list.PushBack(json, *pool_);
  return *this;
}

ObjectBuilder& ObjectBuilder::RemoveOwnerReference(std::string_view uid) {
  Value& list = ArrayMember(Metadata(), "ownerReferences", *pool_);
  for (auto it = list.Begin(); it != list.End();) {
    auto u = it->IsObject() ? it->FindMember("uid") : Value::MemberIterator();
    if (it->IsObject() && u != it->MemberEnd() && u->value.IsString() &&
        StringOf(u->value) == uid) {
      it = list.Erase(it);
    } else {
      ++it;
    }
  }
  return *this;
}

ObjectBuilder& ObjectBuilder::SetOwnerReferences(
    const std::vector<OwnerReferenceView>& refs) {
  Value& list = ArrayMember(Metadata(), "ownerReferences", *pool_);
  list.Clear();
  for (const auto& ref : refs)
    list.PushBack(OwnerReferenceJson(ref, *pool_), *pool_);
  return *this;
}

Value* ObjectBuilder::Resolve(std::string_view pointer, bool create,
                              absl::Status* status) {
  // Resolves the parent of the last token; the caller handles the last.
  Value* v = doc_.get();
  std::string buffer;
  std::string_view token;
  // Creating levels one per token must not build a tree deeper than any
  // Object may be (ToJson and copies recurse over it).
  if (create && static_cast<size_t>(std::count(pointer.begin(), pointer.end(),
                                               '/')) >= kMaxJsonDepth) {
    *status = Invalid("JSON pointer nests too deep");
    return nullptr;
  }
  while (!pointer.empty()) {
    if (!NextToken(&pointer, &buffer, &token)) {
      *status = Invalid("malformed JSON pointer");
      return nullptr;
    }
    if (v->IsObject()) {
      auto it = FindKey(*v, token);
      if (it == v->MemberEnd()) {
        if (!create) return nullptr;
        v->AddMember(MakeString(token, *pool_), Value(rapidjson::kObjectType),
                     *pool_);
        v = &v->MemberEnd()[-1].value;
      } else {
        v = &it->value;
      }
    } else if (v->IsArray()) {
      size_t index;
      if (!ParseIndex(token, &index) || index >= v->Size()) {
        *status = Invalid(
            absl::StrCat("array index \"", Quote(token), "\" out of range"));
        return nullptr;
      }
      v = &(*v)[static_cast<rapidjson::SizeType>(index)];
    } else {
      *status = Invalid(absl::StrCat("\"", Quote(token),
                                     "\": parent is not an object or array"));
      return nullptr;
    }
  }
  return v;
}

absl::Status ObjectBuilder::SetValue(std::string_view pointer, Value&& value) {
  if (pointer.empty()) {
    if (!value.IsObject()) return Invalid("top level must be an object");
    static_cast<Value&>(*doc_) = value;
    return absl::OkStatus();
  }
  size_t slash = pointer.rfind('/');
  if (pointer[0] != '/') return Invalid("malformed JSON pointer");
  std::string_view parent_ptr = pointer.substr(0, slash);
  std::string_view last = pointer.substr(slash);
  absl::Status status;
  Value* parent = Resolve(parent_ptr, /*create=*/true, &status);
  if (parent == nullptr) return status;
  std::string buffer;
  std::string_view token;
  if (!NextToken(&last, &buffer, &token)) {
    return Invalid("malformed JSON pointer");
  }
  if (parent->IsObject()) {
    SetMember(*parent, token, std::move(value), *pool_);
    return absl::OkStatus();
  }
  if (parent->IsArray()) {
    size_t index;
    if (token == "-") {
      parent->PushBack(value, *pool_);
      return absl::OkStatus();
    }
    if (!ParseIndex(token, &index) || index > parent->Size()) {
      return Invalid(
          absl::StrCat("array index \"", Quote(token), "\" out of range"));
    }
    if (index == parent->Size()) {
      parent->PushBack(value, *pool_);
    } else {
      (*parent)[static_cast<rapidjson::SizeType>(index)] = value;
    }
    return absl::OkStatus();
  }
  return Invalid(
      absl::StrCat("\"", Quote(token), "\": parent is not an object or array"));
}

absl::Status ObjectBuilder::Set(std::string_view pointer, const Value& value) {
  Value copy;
  StringSink sink;
  rapidjson::Document tmp(pool_.get());
  Plan plan;
  if (absl::Status s = MakePlan(value, nullptr, &plan); !s.ok()) return s;
  auto generator = [&](rapidjson::Document& handler) {
    return Emit(value, handler, nullptr, sink);
  };
  tmp.Populate(generator);
  copy.Swap(tmp);
  return SetValue(pointer, std::move(copy));
}

absl::Status ObjectBuilder::SetString(std::string_view pointer,
                                      std::string_view v) {
  return SetValue(pointer, MakeString(v, *pool_));
}
absl::Status ObjectBuilder::SetInt(std::string_view pointer, int64_t v) {
  return SetValue(pointer, Value(static_cast<int64_t>(v)));
}
absl::Status ObjectBuilder::SetBool(std::string_view pointer, bool v) {
  return SetValue(pointer, Value(v));
}
absl::Status ObjectBuilder::SetDouble(std::string_view pointer, double v) {
  if (!std::isfinite(v)) return Invalid("JSON has no NaN or infinity");
  return SetValue(pointer, Value(v));
}

absl::Status ObjectBuilder::SetJson(std::string_view pointer,
                                    std::string_view json) {
  rapidjson::Document tmp(pool_.get());
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag |
                              rapidjson::kParseValidateEncodingFlag |
                              rapidjson::kParseFullPrecisionFlag;
  rapidjson::MemoryStream stream(json.data(), json.size());
  tmp.ParseStream<kFlags, rapidjson::UTF8<>>(stream);
  if (tmp.HasParseError()) {
    return Invalid(
        absl::StrCat("invalid JSON at offset ", tmp.GetErrorOffset(), ": ",
                     rapidjson::GetParseError_En(tmp.GetParseError())));
  }
  Plan plan;
  if (absl::Status s = MakePlan(tmp, nullptr, &plan); !s.ok()) return s;
  if (MayHoldSurrogateEscape(json)) ReplaceLoneSurrogates(tmp);
  Value value;
  value.Swap(tmp);
  return SetValue(pointer, std::move(value));
}

bool ObjectBuilder::Remove(std::string_view pointer) {
  if (pointer.empty() || pointer[0] != '/') return false;
  size_t slash = pointer.rfind('/');
  absl::Status status;
  Value* parent = Resolve(pointer.substr(0, slash), /*create=*/false, &status);
  if (parent == nullptr) return false;
  std::string_view last = pointer.substr(slash);
  std::string buffer;
  std::string_view token;
  if (!NextToken(&last, &buffer, &token)) return false;
  if (parent->IsObject()) {
    auto it = FindKey(*parent, token);
    if (it == parent->MemberEnd()) return false;
    parent->EraseMember(it);
    return true;
  }
  if (parent->IsArray()) {
    size_t index;
    if (!ParseIndex(token, &index) || index >= parent->Size()) return false;
    parent->Erase(parent->Begin() + index);
    return true;
  }
  return false;
}

const Value* ObjectBuilder::Find(std::string_view pointer) const {
  return FindPointer(*doc_, pointer);
}

std::string ObjectBuilder::ToJson() const { return WriteJson(*doc_); }

absl::StatusOr<ObjectPtr> ObjectBuilder::Build(
    const ParseOptions& options) const {
  return Object::FromValue(*doc_, options);
}

}  // namespace api
}  // namespace kcr
