#include "apiserver/kube_controllers/job_controller.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/json/json_util.h"
#include "api/object_builder.h"
#include "api/selector/label_selector.h"
#include "api/types/field.h"
#include "api/types/time.h"
#include "apiserver/kube_controllers/controller_indexes.h"
#include "apiserver/kube_controllers/pod_util.h"
#include "apiserver/kube_controllers/stored_objects.h"
#include "base/str_cat.h"
#include "glog/logging.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace {

namespace field = ::kcr::api::field;
using Value = rapidjson::Value;
using Allocator = rapidjson::MemoryPoolAllocator<>;

constexpr char kJobsKey[] = "batch/jobs";
constexpr char kPodsKey[] = "/pods";
constexpr char kOrphanPrefix[] = "pod:";
// kube's MaxPodCreateDeletePerSync.
constexpr int64_t kBurst = 500;

constexpr char kBackoffReason[] = "BackoffLimitExceeded";
constexpr char kBackoffMessage[] =
    "Job has reached the specified backoff limit";
constexpr char kDeadlineReason[] = "DeadlineExceeded";
constexpr char kDeadlineMessage[] =
    "Job was active longer than specified deadline";
constexpr char kMaxFailedIndexesReason[] = "MaxFailedIndexesExceeded";
constexpr char kMaxFailedIndexesMessage[] =
    "Job has exceeded the specified maximal number of failed indexes";
constexpr char kFailedIndexesReason[] = "FailedIndexes";
constexpr char kFailedIndexesMessage[] = "Job has failed indexes";
constexpr char kIndexFailureCountAnnotation[] =
    "batch.kubernetes.io/job-index-failure-count";
constexpr char kCompletionsReason[] = "CompletionsReached";
constexpr char kCompletionsMessage[] =
    "Reached expected number of succeeded pods";

// The completion index a pod carries, or -1.
int64_t PodIndex(const api::Object& pod) {
  std::optional<std::string_view> v =
      pod.Annotation(kJobCompletionIndexAnnotation);
  if (!v.has_value()) v = pod.Label(kJobCompletionIndexAnnotation);
  int64_t i = -1;
  if (!v.has_value() || !absl::SimpleAtoi(std::string(*v), &i) || i < 0) {
    return -1;
  }
  return i;
}

// The failures of the pod's index before it, as the annotation says.
int64_t IndexFailureCount(const api::Object& pod) {
  std::optional<std::string_view> v =
      pod.Annotation(kIndexFailureCountAnnotation);
  int64_t n = 0;
  if (!v.has_value() || !absl::SimpleAtoi(std::string(*v), &n) || n < 0) {
    return 0;
  }
  return n;
}

// status.completedIndexes ("1,3-5") as a set, and back.
std::set<int64_t> ParseIntervals(std::string_view text) {
  std::set<int64_t> out;
  for (const std::string& part : std::vector<std::string>(
           absl::StrSplit(std::string(text), ',', absl::SkipEmpty()))) {
    const std::vector<std::string> ends = absl::StrSplit(part, '-');
    int64_t lo = 0, hi = 0;
    if (!absl::SimpleAtoi(ends[0], &lo)) continue;
    hi = lo;
    if (ends.size() == 2 && !absl::SimpleAtoi(ends[1], &hi)) continue;
    for (int64_t i = lo; i <= hi && i - lo < 1000000; ++i) out.insert(i);
  }
  return out;
}

std::string FormatIntervals(const std::set<int64_t>& set) {
  std::vector<std::string> parts;
  for (auto it = set.begin(); it != set.end();) {
    const int64_t lo = *it;
    int64_t hi = lo;
    for (++it; it != set.end() && *it == hi + 1; ++it) hi = *it;
    parts.push_back(hi == lo ? Cat(lo) : Cat(lo, "-", hi));
  }
  return absl::StrJoin(parts, ",");
}

Value* FindCondition(Value* status, std::string_view type) {
  Value* conditions = status->FindMember("conditions") != status->MemberEnd()
                          ? &(*status)["conditions"]
                          : nullptr;
  if (conditions == nullptr || !conditions->IsArray()) return nullptr;
  for (Value& c : conditions->GetArray()) {
    if (field::String(&c, "type") == type) return &c;
  }
  return nullptr;
}

bool ConditionTrue(Value* status, std::string_view type) {
  const Value* c = FindCondition(status, type);
  return c != nullptr && field::String(c, "status") == "True";
}

Value Condition(std::string_view type, std::string_view status,
                std::string_view reason, std::string_view message,
                absl::Time now, Allocator& a) {
  const std::string t = api::FormatRfc3339(now);
  Value c(rapidjson::kObjectType);
  c.AddMember("type", field::Str(type, a), a);
  c.AddMember("status", field::Str(status, a), a);
  c.AddMember("lastProbeTime", field::Str(t, a), a);
  c.AddMember("lastTransitionTime", field::Str(t, a), a);
  c.AddMember("reason", field::Str(reason, a), a);
  c.AddMember("message", field::Str(message, a), a);
  return c;
}

void AddCondition(Value* status, Value condition, Allocator& a) {
  if (status->FindMember("conditions") == status->MemberEnd() ||
      !(*status)["conditions"].IsArray()) {
    status->RemoveMember("conditions");
    status->AddMember("conditions", Value(rapidjson::kArrayType), a);
  }
  (*status)["conditions"].PushBack(condition, a);
}

// kube's ensureJobConditionStatus: true when the condition changed. A
// False condition is only written over an existing one.
bool EnsureCondition(Value* status, std::string_view type,
                     std::string_view want, std::string_view reason,
                     std::string_view message, absl::Time now, Allocator& a) {
  Value* c = FindCondition(status, type);
  if (c == nullptr) {
    if (want != "True") return false;
    AddCondition(status, Condition(type, want, reason, message, now, a), a);
    return true;
  }
  if (field::String(c, "status") == want) return false;
  *c = Condition(type, want, reason, message, now, a);
  return true;
}

void SetMember(Value* object, const char* key, Value v, Allocator& a) {
  object->RemoveMember(key);
  object->AddMember(Value(key, a), v, a);
}

std::vector<std::string> Strings(const Value* array) {
  std::vector<std::string> out;
  if (array == nullptr || !array->IsArray()) return out;
  for (const Value& v : array->GetArray()) {
    if (v.IsString()) out.emplace_back(field::View(v));
  }
  return out;
}

Value StringArray(const std::vector<std::string>& list, Allocator& a) {
  Value out(rapidjson::kArrayType);
  for (const std::string& s : list) out.PushBack(field::Str(s, a), a);
  return out;
}

// A pod for `job` from its template; `index` >= 0 for Indexed Jobs.
// `failures` >= 0: the index's failures so far (backoffLimitPerIndex).
absl::StatusOr<api::ObjectBuilder> NewPod(const api::Object& job, int64_t index,
                                          int64_t failures) {
  const Value* tmpl =
      field::Object(field::Object(&job.json(), "spec"), "template");
  api::ObjectBuilder b("v1", "Pod");
  b.SetGenerateName(index < 0 ? Cat(job.name(), "-")
                              : Cat(job.name(), "-", index, "-"));
  b.SetNamespace(job.namespace_());
  const Value* meta = field::Object(tmpl, "metadata");
  for (const char* key : {"labels", "annotations", "finalizers"}) {
    if (const Value* v = field::Member(meta, key); v != nullptr) {
      if (absl::Status s = b.Set(Cat("/metadata/", key), *v); !s.ok()) return s;
    }
  }
  b.AddFinalizer(kJobTrackingFinalizer);
  api::OwnerReferenceView ref;
  ref.api_version = "batch/v1";
  ref.kind = "Job";
  ref.name = job.name();
  ref.uid = job.uid();
  ref.controller = true;
  ref.block_owner_deletion = true;
  b.AddOwnerReference(ref);
  if (const Value* spec = field::Object(tmpl, "spec"); spec != nullptr) {
    if (absl::Status s = b.Set("/spec", *spec); !s.ok()) return s;
  }
  if (index < 0) return b;
  const std::string i = Cat(index);
  b.SetAnnotation(kJobCompletionIndexAnnotation, i);
  b.SetLabel(kJobCompletionIndexAnnotation, i);
  if (failures >= 0)
    b.SetAnnotation(kIndexFailureCountAnnotation, Cat(failures));
  const Value* hostname = b.Find("/spec/hostname");
  if (hostname == nullptr || !hostname->IsString() ||
      hostname->GetStringLength() == 0) {
    (void)b.SetString("/spec/hostname", Cat(job.name(), "-", index));
  }
  // kube's addCompletionIndexEnvVariables.
  Allocator& a = b.allocator();
  for (const char* list : {"/spec/containers", "/spec/initContainers"}) {
    Value* containers = const_cast<Value*>(b.Find(list));
    if (containers == nullptr || !containers->IsArray()) continue;
    for (Value& c : containers->GetArray()) {
      if (!c.IsObject()) continue;
      if (c.FindMember("env") == c.MemberEnd() || !c["env"].IsArray()) {
        c.RemoveMember("env");
        c.AddMember("env", Value(rapidjson::kArrayType), a);
      }
      bool present = false;
      for (const Value& e : c["env"].GetArray()) {
        present =
            present || field::String(&e, "name") == "JOB_COMPLETION_INDEX";
      }
      if (present) continue;
      Value ref_json(rapidjson::kObjectType);
      ref_json.AddMember(
          "fieldPath",
          field::Str(
              Cat("metadata.labels['", kJobCompletionIndexAnnotation, "']"), a),
          a);
      Value value_from(rapidjson::kObjectType);
      value_from.AddMember("fieldRef", ref_json, a);
      Value env(rapidjson::kObjectType);
      env.AddMember("name", "JOB_COMPLETION_INDEX", a);
      env.AddMember("valueFrom", value_from, a);
      c["env"].PushBack(env, a);
    }
  }
  return b;
}

// Whether the Job's spec.selector matches `pod`'s labels.
bool SelectorMatches(const api::Object& job, const api::Object& pod) {
  const Value* selector_json =
      field::Member(field::Object(&job.json(), "spec"), "selector");
  if (selector_json == nullptr) return false;
  absl::StatusOr<api::LabelSelector> selector =
      api::LabelSelector::FromLabelSelector(*selector_json);
  return selector.ok() && !selector->Empty() &&
         selector->Matches(
             field::Object(field::Object(&pod.json(), "metadata"), "labels"));
}

// Active pods to delete first: not ready, then newer.
bool DeleteBefore(const api::ObjectPtr& a, const api::ObjectPtr& b) {
  if (PodReadySince(*a).has_value() != PodReadySince(*b).has_value())
    return !PodReadySince(*a).has_value();
  if (a->creation_timestamp() != b->creation_timestamp()) {
    return a->creation_timestamp() > b->creation_timestamp();
  }
  return a->name() > b->name();
}

}  // namespace

JobController::JobController(Registry* registry, const Clock* clock,
                             IncrementalControllerOptions options)
    : IncrementalController(registry, clock, options),
      events_(registry, "job-controller") {
  AddControllerIndexes(registry->storage());
}

bool JobController::Wants(const StoredEvent& event) const {
  return event.collection == kJobsKey || event.collection == kPodsKey;
}

void JobController::OnEvent(const StoredEvent& event) {
  const api::Object& o = *event.object;
  if (event.collection == kJobsKey) {
    const std::string key = Storage::Key(o.namespace_(), o.name());
    Enqueue(key);
    if (event.type == EventType::kDeleted) {
      backoff_.erase(key);
      // Its pods may still hold the tracking finalizer.
      for (const api::ObjectPtr& pod :
           storage()->ByIndex(kPodsKey, kControllerIndex, o.uid())) {
        if (pod->HasFinalizer(kJobTrackingFinalizer)) {
          Enqueue(Cat(kOrphanPrefix, pod->namespace_(), "/", pod->name()));
        }
      }
    }
    return;
  }
  if (event.collection != kPodsKey) return;
  const std::optional<api::OwnerReferenceView> ref = o.controller_reference();
  if (!ref.has_value()) {
    if (event.type != EventType::kDeleted && !o.being_deleted()) {
      EnqueueSelecting(o);
    }
    return;
  }
  if (ref->kind != "Job" || ref->api_version != "batch/v1") return;
  Enqueue(Storage::Key(o.namespace_(), ref->name));
  if (event.type != EventType::kDeleted &&
      o.HasFinalizer(kJobTrackingFinalizer) &&
      storage()->ByIndex(kJobsKey, kUidIndex, ref->uid).empty()) {
    Enqueue(Cat(kOrphanPrefix, o.namespace_(), "/", o.name()));
  }
}

void JobController::EnqueueSelecting(const api::Object& pod) {
  for (const api::ObjectPtr& job :
       SelectorCandidates(*storage(), kJobsKey, pod)) {
    if (SelectorMatches(*job, pod)) {
      Enqueue(Storage::Key(job->namespace_(), job->name()));
    }
  }
}

void JobController::EnqueueAll() {
  for (const api::ObjectPtr& job : storage()->Snapshot(kJobsKey)) {
    Enqueue(Storage::Key(job->namespace_(), job->name()));
  }
}

void JobController::FreeOrphan(const ResourceInfo& pods,
                               const std::string& key) {
  api::ObjectPtr pod = storage()->GetByKey(pods.StorageKey(), key);
  if (pod == nullptr || !pod->HasFinalizer(kJobTrackingFinalizer)) return;
  const std::optional<api::OwnerReferenceView> ref =
      pod->controller_reference();
  if (ref.has_value() &&
      !storage()->ByIndex(kJobsKey, kUidIndex, ref->uid).empty()) {
    return;  // its Job tracks it
  }
  absl::Status s =
      RemoveFinalizer(registry(), pods, *pod, kJobTrackingFinalizer);
  if (!s.ok() && !IsRaceError(s)) {
    LOG(WARNING) << "job controller: freeing pod=" << key << " failed: " << s;
  }
}

bool JobController::DeletePod(const ResourceInfo& pods, const api::Object& job,
                              const api::Object& pod, absl::Time now) {
  DeleteOptions o;
  o.precondition_uid = std::string(pod.uid());
  absl::Status s =
      registry()->Delete(pods, pod.namespace_(), pod.name(), o).status();
  if (s.ok()) {
    events_.Record(job, "batch/v1", "Job", false, "SuccessfulDelete",
                   Cat("Deleted pod: ", pod.name()), now);
    return true;
  }
  if (!IsRaceError(s)) {
    LOG(WARNING) << "job controller: deleting pod=" << pod.Key()
                 << " failed: " << s;
  }
  return false;
}

std::vector<api::ObjectPtr> JobController::ClaimPods(const ResourceInfo& pods,
                                                     const api::Object& job) {
  std::vector<api::ObjectPtr> owned;
  for (api::ObjectPtr& pod :
       storage()->ByIndex(pods.StorageKey(), kControllerIndex, job.uid())) {
    if (SelectorMatches(job, *pod) || job.being_deleted()) {
      owned.push_back(std::move(pod));
      continue;
    }
    // Released: the ownerReference and the tracking finalizer go.
    api::ObjectBuilder b = pod->ToBuilder();
    b.RemoveOwnerReference(job.uid());
    b.RemoveFinalizer(kJobTrackingFinalizer);
    absl::Status s =
        registry()
            ->Update(pods, pod->namespace_(), pod->name(), std::move(b))
            .status();
    if (!s.ok() && !IsRaceError(s)) {
      LOG(WARNING) << "job controller: releasing pod=" << pod->Key()
                   << " failed: " << s;
    }
  }
  if (job.being_deleted()) return owned;
  for (const api::ObjectPtr& pod : storage()->ByIndex(
           pods.StorageKey(), kControllerIndex, OrphanKey(job.namespace_()))) {
    if (pod->being_deleted() || !SelectorMatches(job, *pod)) continue;
    // Adopted: a controller ownerReference and the tracking finalizer.
    api::ObjectBuilder b = pod->ToBuilder();
    api::OwnerReferenceView ref;
    ref.api_version = "batch/v1";
    ref.kind = "Job";
    ref.name = job.name();
    ref.uid = job.uid();
    ref.controller = true;
    ref.block_owner_deletion = true;
    b.AddOwnerReference(ref);
    b.AddFinalizer(kJobTrackingFinalizer);
    absl::StatusOr<WriteResult> w =
        registry()->Update(pods, pod->namespace_(), pod->name(), std::move(b));
    if (w.ok()) {
      owned.push_back(w->object);
    } else if (!IsRaceError(w.status())) {
      LOG(WARNING) << "job controller: adopting pod=" << pod->Key()
                   << " failed: " << w.status();
    }
  }
  return owned;
}

absl::Time JobController::SyncKey(const std::string& key, absl::Time now) {
  ResourceRegistry* resources = registry()->resources();
  ResourceInfoPtr jobs = resources->Lookup("batch", "v1", "jobs");
  ResourceInfoPtr pods = resources->Lookup("", "v1", "pods");
  if (jobs == nullptr || pods == nullptr) return absl::InfiniteFuture();
  if (key.rfind(kOrphanPrefix, 0) == 0) {
    FreeOrphan(*pods, key.substr(sizeof(kOrphanPrefix) - 1));
    return absl::InfiniteFuture();
  }
  api::ObjectPtr job = storage()->GetByKey(jobs->StorageKey(), key);
  if (job == nullptr) return absl::InfiniteFuture();
  return SyncJob(*jobs, *pods, job, ClaimPods(*pods, *job), now);
}

absl::Time JobController::SyncJob(const ResourceInfo& jobs,
                                  const ResourceInfo& pods,
                                  const api::ObjectPtr& job_in,
                                  std::vector<api::ObjectPtr> owned,
                                  absl::Time now) {
  api::ObjectPtr job = job_in;
  const std::string key = Storage::Key(job->namespace_(), job->name());
  const Value* spec = field::Object(&job->json(), "spec");
  const bool indexed = field::String(spec, "completionMode") == "Indexed";
  const int64_t parallelism = field::Int64(spec, "parallelism").value_or(1);
  const std::optional<int64_t> completions = field::Int64(spec, "completions");
  // backoffLimitPerIndex: Indexed Jobs only; backoffLimit then defaults to
  // no limit.
  const std::optional<int64_t> per_index_limit =
      indexed ? field::Int64(spec, "backoffLimitPerIndex") : std::nullopt;
  const std::optional<int64_t> max_failed_indexes =
      field::Int64(spec, "maxFailedIndexes");
  const int64_t backoff_limit =
      field::Int64(spec, "backoffLimit")
          .value_or(per_index_limit.has_value() ? INT32_MAX : 6);
  const std::optional<int64_t> deadline =
      field::Int64(spec, "activeDeadlineSeconds");
  const bool suspended = field::Bool(spec, "suspend", false);

  Allocator a(1024);
  Value status(rapidjson::kObjectType);
  if (const Value* old = field::Object(&job->json(), "status");
      old != nullptr) {
    status.CopyFrom(*old, a);
  }
  const bool finished =
      ConditionTrue(&status, "Complete") || ConditionTrue(&status, "Failed");

  // A finished or deleted Job tracks nothing more: its pods are freed.
  if (finished || job->being_deleted()) {
    for (const api::ObjectPtr& pod : owned) {
      if (!pod->HasFinalizer(kJobTrackingFinalizer)) continue;
      absl::Status s =
          RemoveFinalizer(registry(), pods, *pod, kJobTrackingFinalizer);
      if (!s.ok() && !IsRaceError(s)) {
        LOG(WARNING) << "job controller: freeing pod=" << pod->Key()
                     << " failed: " << s;
      }
    }
    return absl::InfiniteFuture();
  }

  // 1. Finished pods still holding the finalizer become uncounted.
  const Value* uncounted_json =
      field::Object(&status, "uncountedTerminatedPods");
  std::vector<std::string> uncounted_s =
      Strings(field::Member(uncounted_json, "succeeded"));
  std::vector<std::string> uncounted_f =
      Strings(field::Member(uncounted_json, "failed"));
  std::set<int64_t> completed_indexes =
      ParseIntervals(field::String(&status, "completedIndexes"));
  std::set<int64_t> failed_indexes =
      ParseIntervals(field::String(&status, "failedIndexes"));
  absl::flat_hash_set<std::string> known(uncounted_s.begin(),
                                         uncounted_s.end());
  known.insert(uncounted_f.begin(), uncounted_f.end());
  int64_t new_failures = 0, new_successes = 0;
  for (const api::ObjectPtr& pod : owned) {
    if (!pod->HasFinalizer(kJobTrackingFinalizer)) continue;
    const std::string uid(pod->uid());
    if (known.contains(uid)) continue;
    const std::string_view phase = PodPhase(*pod);
    if (phase == "Succeeded") {
      uncounted_s.push_back(uid);
      ++new_successes;
      const int64_t index = PodIndex(*pod);
      if (indexed && index >= 0 && index < completions.value_or(0)) {
        completed_indexes.insert(index);
      }
    } else if (phase == "Failed" || pod->being_deleted()) {
      uncounted_f.push_back(uid);
      ++new_failures;
      // An index fails once its failures exceed backoffLimitPerIndex.
      const int64_t index = PodIndex(*pod);
      if (per_index_limit.has_value() && index >= 0 &&
          index < completions.value_or(0) &&
          completed_indexes.count(index) == 0 &&
          IndexFailureCount(*pod) + 1 > *per_index_limit) {
        failed_indexes.insert(index);
      }
    }
  }
  auto write_uncounted = [&](Value* st) {
    Value u(rapidjson::kObjectType);
    if (!uncounted_s.empty()) {
      u.AddMember("succeeded", StringArray(uncounted_s, a), a);
    }
    if (!uncounted_f.empty())
      u.AddMember("failed", StringArray(uncounted_f, a), a);
    SetMember(st, "uncountedTerminatedPods", std::move(u), a);
    st->RemoveMember("completedIndexes");
    if (indexed && !completed_indexes.empty()) {
      st->AddMember("completedIndexes",
                    field::Str(FormatIntervals(completed_indexes), a), a);
    }
    st->RemoveMember("failedIndexes");
    if (per_index_limit.has_value()) {
      st->AddMember("failedIndexes",
                    field::Str(FormatIntervals(failed_indexes), a), a);
    }
  };
  auto write_status = [&](const Value& st) -> bool {
    api::ObjectBuilder b = StatusWriteOf(*job);
    (void)b.Set("/status", st);
    WriteOptions w;
    w.subresource = "status";
    absl::StatusOr<WriteResult> r = registry()->Update(
        jobs, job->namespace_(), job->name(), std::move(b), w);
    if (!r.ok()) {
      if (!IsRaceError(r.status())) {
        LOG(WARNING) << "job controller: status of job=" << key
                     << " failed: " << r.status();
      }
      return false;
    }
    job = r->object;
    return true;
  };
  if (new_failures > 0 || new_successes > 0) {
    BackoffRecord& rec = backoff_[key];
    if (new_failures > 0) {
      rec.failures += new_failures;
      rec.last_failure = now;
    } else {
      rec.failures = 0;
    }
    write_uncounted(&status);
    // The uids are recorded before the finalizers go, so that no finished
    // pod is lost or counted twice.
    if (!write_status(status)) return now + absl::Seconds(1);
  }

  // 2. Their finalizers go; 3. those freed (or gone) are counted.
  absl::flat_hash_map<std::string, api::ObjectPtr> by_uid;
  for (const api::ObjectPtr& pod : owned) by_uid[std::string(pod->uid())] = pod;
  absl::flat_hash_set<std::string> freed;
  for (const std::vector<std::string>* list : {&uncounted_s, &uncounted_f}) {
    for (const std::string& uid : *list) {
      auto it = by_uid.find(uid);
      if (it == by_uid.end() ||
          !it->second->HasFinalizer(kJobTrackingFinalizer)) {
        freed.insert(uid);
        continue;
      }
      absl::Status s =
          RemoveFinalizer(registry(), pods, *it->second, kJobTrackingFinalizer);
      if (s.ok()) {
        freed.insert(uid);
      } else if (!IsRaceError(s)) {
        LOG(WARNING) << "job controller: finalizer of pod=" << it->second->Key()
                     << " failed: " << s;
      }
    }
  }
  int64_t succeeded = field::Int64(&status, "succeeded").value_or(0);
  int64_t failed = field::Int64(&status, "failed").value_or(0);
  auto count = [&](std::vector<std::string>* list, int64_t* counter) {
    std::vector<std::string> left;
    for (std::string& uid : *list) {
      if (freed.contains(uid)) {
        ++*counter;
      } else {
        left.push_back(std::move(uid));
      }
    }
    *list = std::move(left);
  };
  count(&uncounted_s, &succeeded);
  count(&uncounted_f, &failed);
  const int64_t succeeded_total =
      succeeded + static_cast<int64_t>(uncounted_s.size());
  const int64_t failed_total =
      failed + static_cast<int64_t>(uncounted_f.size());

  std::vector<api::ObjectPtr> active;
  int64_t terminating = 0;
  for (const api::ObjectPtr& pod : owned) {
    const std::string_view phase = PodPhase(*pod);
    if (phase == "Succeeded" || phase == "Failed") continue;
    if (pod->being_deleted()) {
      if (!freed.contains(std::string(pod->uid()))) ++terminating;
      continue;
    }
    active.push_back(pod);
  }

  std::optional<absl::Time> start;
  if (absl::StatusOr<absl::Time> t =
          api::ParseTime(field::String(&status, "startTime"));
      t.ok() && !field::String(&status, "startTime").empty()) {
    start = *t;
  }

  absl::Time next = absl::InfiniteFuture();
  int64_t created = 0, deleted = 0;
  auto delete_active = [&](const std::vector<api::ObjectPtr>& victims) {
    for (const api::ObjectPtr& pod : victims) {
      if (DeletePod(pods, *job, *pod, now)) ++deleted;
    }
  };

  // Finishing: the interim condition first, the terminal one when no pod
  // is left.
  bool failure_target = ConditionTrue(&status, "FailureTarget");
  bool success_met = ConditionTrue(&status, "SuccessCriteriaMet");
  if (!failure_target && !success_met) {
    if (failed_total > backoff_limit) {
      AddCondition(&status,
                   Condition("FailureTarget", "True", kBackoffReason,
                             kBackoffMessage, now, a),
                   a);
      failure_target = true;
    } else if (!suspended && deadline.has_value() && start.has_value() &&
               now >= *start + absl::Seconds(*deadline)) {
      AddCondition(&status,
                   Condition("FailureTarget", "True", kDeadlineReason,
                             kDeadlineMessage, now, a),
                   a);
      failure_target = true;
    } else if (per_index_limit.has_value() && max_failed_indexes.has_value() &&
               static_cast<int64_t>(failed_indexes.size()) >
                   *max_failed_indexes) {
      AddCondition(&status,
                   Condition("FailureTarget", "True", kMaxFailedIndexesReason,
                             kMaxFailedIndexesMessage, now, a),
                   a);
      failure_target = true;
    } else if (per_index_limit.has_value() && !failed_indexes.empty() &&
               static_cast<int64_t>(failed_indexes.size() +
                                    completed_indexes.size()) >=
                   completions.value_or(0)) {
      AddCondition(&status,
                   Condition("FailureTarget", "True", kFailedIndexesReason,
                             kFailedIndexesMessage, now, a),
                   a);
      failure_target = true;
    } else {
      bool complete = false;
      if (indexed) {
        complete =
            completions.has_value() &&
            static_cast<int64_t>(completed_indexes.size()) >= *completions;
      } else if (completions.has_value()) {
        complete = succeeded_total >= *completions;
      } else {
        complete = succeeded_total > 0 && active.empty();
      }
      if (complete) {
        AddCondition(&status,
                     Condition("SuccessCriteriaMet", "True", kCompletionsReason,
                               kCompletionsMessage, now, a),
                     a);
        success_met = true;
      }
    }
  }

  if (failure_target || success_met) {
    delete_active(active);
    const bool drained = static_cast<int64_t>(active.size()) == 0 &&
                         terminating == 0 && uncounted_s.empty() &&
                         uncounted_f.empty();
    if (drained) {
      Value* interim = FindCondition(
          &status, failure_target ? "FailureTarget" : "SuccessCriteriaMet");
      const std::string reason(field::String(interim, "reason"));
      const std::string message(field::String(interim, "message"));
      if (failure_target) {
        AddCondition(&status,
                     Condition("Failed", "True", reason, message, now, a), a);
        events_.Record(*job, "batch/v1", "Job", true, reason, message, now);
      } else {
        AddCondition(&status,
                     Condition("Complete", "True", reason, message, now, a), a);
        SetMember(&status, "completionTime",
                  field::Str(api::FormatRfc3339(now), a), a);
        events_.Record(*job, "batch/v1", "Job", false, "Completed",
                       "Job completed", now);
      }
    }
  } else if (suspended) {
    delete_active(active);
    if (EnsureCondition(&status, "Suspended", "True", "JobSuspended",
                        "Job suspended", now, a)) {
      events_.Record(*job, "batch/v1", "Job", false, "Suspended",
                     "Job suspended", now);
    }
  } else {
    if (EnsureCondition(&status, "Suspended", "False", "JobResumed",
                        "Job resumed", now, a)) {
      events_.Record(*job, "batch/v1", "Job", false, "Resumed", "Job resumed",
                     now);
      // The deadline counts the time the Job is continuously active.
      start.reset();
    }
    if (!start.has_value()) {
      start = now;
      SetMember(&status, "startTime", field::Str(api::FormatRfc3339(now), a),
                a);
    }
    if (deadline.has_value()) {
      next = std::min(next, *start + absl::Seconds(*deadline));
    }
    // Replacements of failed pods wait out the back-off.
    absl::Time backoff_until = absl::InfinitePast();
    if (auto it = backoff_.find(key);
        it != backoff_.end() && it->second.failures > 0) {
      absl::Duration delay = kPodFailureBackOff;
      for (int64_t i = 1;
           i < it->second.failures && delay < kMaxPodFailureBackOff; ++i) {
        delay *= 2;
      }
      backoff_until =
          it->second.last_failure + std::min(delay, kMaxPodFailureBackOff);
    }
    auto create = [&](int64_t index) -> bool {
      int64_t failures = -1;
      if (per_index_limit.has_value() && index >= 0) {
        failures = 0;
        for (const api::ObjectPtr& p : owned) {
          if (PodIndex(*p) != index) continue;
          const bool failed_pod =
              PodPhase(*p) == "Failed" ||
              (p->being_deleted() && PodPhase(*p) != "Succeeded");
          failures =
              std::max(failures, IndexFailureCount(*p) + (failed_pod ? 1 : 0));
        }
      }
      absl::StatusOr<api::ObjectBuilder> pod = NewPod(*job, index, failures);
      if (!pod.ok()) {
        LOG_EVERY_N(WARNING, 100) << "job controller: bad template job=" << key
                                  << ": " << pod.status();
        return false;
      }
      absl::StatusOr<WriteResult> w =
          registry()->Create(pods, job->namespace_(), std::move(*pod));
      if (!w.ok()) {
        events_.Record(*job, "batch/v1", "Job", true, "FailedCreate",
                       Cat("Error creating: ", w.status().message()), now);
        next = std::min(next, now + absl::Seconds(1));
        return false;
      }
      events_.Record(*job, "batch/v1", "Job", false, "SuccessfulCreate",
                     Cat("Created pod: ", w->object->name()), now);
      ++created;
      return true;
    };
    const bool may_create = backoff_until <= now;
    if (!may_create) next = std::min(next, backoff_until);
    if (!indexed) {
      int64_t want = parallelism;
      if (!completions.has_value()) {
        // Once a pod succeeded, those running are left to finish.
        if (succeeded_total > 0) {
          want = std::min(static_cast<int64_t>(active.size()), parallelism);
        }
      } else {
        want =
            std::clamp(*completions - succeeded_total, int64_t{0}, parallelism);
      }
      const int64_t diff = static_cast<int64_t>(active.size()) - want;
      if (diff > 0) {
        std::vector<api::ObjectPtr> victims = active;
        std::sort(victims.begin(), victims.end(), DeleteBefore);
        victims.resize(static_cast<size_t>(std::min(diff, kBurst)));
        delete_active(victims);
      } else if (diff < 0 && may_create) {
        for (int64_t i = 0; i < std::min(-diff, kBurst); ++i) {
          if (!create(-1)) break;
        }
      }
    } else {
      // One active pod per index not yet completed, lowest first.
      std::map<int64_t, api::ObjectPtr> by_index;
      std::vector<api::ObjectPtr> extra;
      for (const api::ObjectPtr& pod : active) {
        const int64_t i = PodIndex(*pod);
        if (i < 0 || i >= completions.value_or(0) ||
            completed_indexes.count(i) > 0 || failed_indexes.count(i) > 0 ||
            by_index.count(i) > 0) {
          extra.push_back(pod);
        } else {
          by_index[i] = pod;
        }
      }
      while (static_cast<int64_t>(by_index.size()) > parallelism) {
        extra.push_back(std::prev(by_index.end())->second);
        by_index.erase(std::prev(by_index.end()));
      }
      delete_active(extra);
      int64_t room = parallelism - static_cast<int64_t>(by_index.size());
      for (int64_t i = 0; may_create && room > 0 &&
                          i < completions.value_or(0) && created < kBurst;
           ++i) {
        if (completed_indexes.count(i) > 0 || failed_indexes.count(i) > 0 ||
            by_index.count(i) > 0) {
          continue;
        }
        if (!create(i)) break;
        --room;
      }
    }
  }

  int64_t ready = 0;
  for (const api::ObjectPtr& pod : active)
    ready += PodReadySince(*pod).has_value() ? 1 : 0;
  const int64_t active_now =
      static_cast<int64_t>(active.size()) + created - deleted;
  SetStatusCount(&status, "active", active_now, true, a);
  SetStatusCount(&status, "ready", std::min(ready, active_now), false, a);
  SetStatusCount(&status, "terminating", terminating + deleted, false, a);
  SetStatusCount(&status, "succeeded", succeeded, true, a);
  SetStatusCount(&status, "failed", failed, true, a);
  write_uncounted(&status);
  const Value* old = field::Object(&job->json(), "status");
  if (old == nullptr || !json::JsonDeepEqual(status, *old)) {
    if (!write_status(status)) return std::min(next, now + absl::Seconds(1));
  }
  return next;
}

}  // namespace apiserver
}  // namespace kcr
