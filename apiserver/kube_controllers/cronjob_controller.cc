#include "apiserver/kube_controllers/cronjob_controller.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "api/errors/errors.h"
#include "api/json/json_util.h"
#include "api/object_builder.h"
#include "api/types/field.h"
#include "api/types/time.h"
#include "apiserver/internal/cron_schedule.h"
#include "apiserver/kube_controllers/controller_indexes.h"
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

constexpr char kCronJobsKey[] = "batch/cronjobs";
constexpr char kJobsKey[] = "batch/jobs";
// kube's nextScheduleDelta: a pass a little after the time, so that the
// time has surely passed.
constexpr absl::Duration kNextScheduleDelta = absl::Milliseconds(100);

// "Complete" or "Failed" when the Job finished, else empty.
std::string_view FinishedType(const api::Object& job) {
  const Value* conditions =
      field::Array(field::Object(&job.json(), "status"), "conditions");
  if (conditions == nullptr) return "";
  for (const Value& c : conditions->GetArray()) {
    const std::string_view type = field::String(&c, "type");
    if ((type == "Complete" || type == "Failed") &&
        field::String(&c, "status") == "True") {
      return type;
    }
  }
  return "";
}

std::optional<absl::Time> TimeField(const Value* object, const char* key) {
  const std::string_view text = field::String(object, key);
  if (text.empty()) return std::nullopt;
  absl::StatusOr<absl::Time> t = api::ParseTime(text);
  if (!t.ok()) return std::nullopt;
  return *t;
}

// Go's time.RFC3339 in `zone`: "Z" for UTC, else the offset.
std::string Rfc3339In(absl::Time t, const absl::TimeZone& zone) {
  std::string s = absl::FormatTime("%Y-%m-%dT%H:%M:%S%Ez", t, zone);
  if (absl::EndsWith(s, "+00:00") && zone == absl::UTCTimeZone()) {
    s.replace(s.size() - 6, 6, "Z");
  }
  return s;
}

struct ScheduleTimes {
  absl::Time earliest;
  std::optional<absl::Time> most_recent;
  int64_t missed = 0;
};

// kube's mostRecentScheduleTime.
ScheduleTimes MostRecentScheduleTime(const api::Object& cj, absl::Time now,
                                     const CronSchedule& schedule,
                                     const absl::TimeZone& zone,
                                     bool include_deadline) {
  const Value* spec = field::Object(&cj.json(), "spec");
  ScheduleTimes out;
  std::optional<absl::Time> last =
      TimeField(field::Object(&cj.json(), "status"), "lastScheduleTime");
  if (last.has_value()) {
    out.earliest = *last;
  } else {
    absl::StatusOr<absl::Time> created =
        api::ParseTime(cj.creation_timestamp());
    out.earliest = created.ok() ? *created : now;
  }
  const std::optional<int64_t> deadline =
      field::Int64(spec, "startingDeadlineSeconds");
  if (include_deadline && deadline.has_value()) {
    out.earliest = std::max(out.earliest, now - absl::Seconds(*deadline));
  }
  const absl::Time t1 = schedule.Next(out.earliest, zone);
  if (now < t1) return out;
  const absl::Time t2 = schedule.Next(t1, zone);
  out.most_recent = t1;
  out.missed = 1;
  if (now < t2) return out;
  // Walk while it is cheap, then jump by the interval as kube does.
  absl::Time most = t1;
  int64_t n = 1;
  for (absl::Time t = t2; t <= now && n <= 200; t = schedule.Next(t, zone)) {
    most = t;
    ++n;
  }
  if (n > 200) {
    const absl::Duration between = t2 - t1;
    n = absl::IDivDuration(now - t1, between, nullptr) + 1;
    most = t1 + (n - 1) * between;
    for (absl::Time t = schedule.Next(most, zone); t <= now;
         t = schedule.Next(t, zone)) {
      most = t;
    }
  }
  out.most_recent = most;
  out.missed = n;
  return out;
}

Value JobReference(const api::Object& job, Allocator& a) {
  Value ref(rapidjson::kObjectType);
  ref.AddMember("kind", "Job", a);
  ref.AddMember("namespace", field::Str(job.namespace_(), a), a);
  ref.AddMember("name", field::Str(job.name(), a), a);
  ref.AddMember("uid", field::Str(job.uid(), a), a);
  ref.AddMember("apiVersion", "batch/v1", a);
  ref.AddMember("resourceVersion", field::Str(job.resource_version(), a), a);
  return ref;
}

// kube's byJobStartTime: started before not started, then by start, then
// by name.
bool StartedBefore(const api::ObjectPtr& a, const api::ObjectPtr& b) {
  const std::optional<absl::Time> sa =
      TimeField(field::Object(&a->json(), "status"), "startTime");
  const std::optional<absl::Time> sb =
      TimeField(field::Object(&b->json(), "status"), "startTime");
  if (sa.has_value() != sb.has_value()) return sa.has_value();
  if (!sa.has_value() || *sa == *sb) return a->name() < b->name();
  return *sa < *sb;
}

}  // namespace

CronJobController::CronJobController(Registry* registry, const Clock* clock,
                                     IncrementalControllerOptions options)
    : IncrementalController(registry, clock, options),
      events_(registry, "cronjob-controller") {
  AddControllerIndexes(registry->storage());
}

bool CronJobController::Wants(const StoredEvent& event) const {
  return event.collection == kCronJobsKey || event.collection == kJobsKey;
}

void CronJobController::OnEvent(const StoredEvent& event) {
  const api::Object& o = *event.object;
  if (event.collection == kCronJobsKey) {
    Enqueue(Storage::Key(o.namespace_(), o.name()));
    return;
  }
  const std::optional<api::OwnerReferenceView> ref = o.controller_reference();
  if (ref.has_value() && ref->kind == "CronJob" &&
      ref->api_version == "batch/v1") {
    Enqueue(Storage::Key(o.namespace_(), ref->name));
  }
}

void CronJobController::EnqueueAll() {
  for (const api::ObjectPtr& cj : storage()->Snapshot(kCronJobsKey)) {
    Enqueue(Storage::Key(cj->namespace_(), cj->name()));
  }
}

absl::Time CronJobController::SyncKey(const std::string& key, absl::Time now) {
  ResourceRegistry* resources = registry()->resources();
  ResourceInfoPtr cronjobs = resources->Lookup("batch", "v1", "cronjobs");
  ResourceInfoPtr jobs = resources->Lookup("batch", "v1", "jobs");
  if (cronjobs == nullptr || jobs == nullptr) return absl::InfiniteFuture();
  api::ObjectPtr cj = storage()->GetByKey(cronjobs->StorageKey(), key);
  if (cj == nullptr) return absl::InfiniteFuture();
  return SyncCronJob(
      *cronjobs, *jobs, cj,
      storage()->ByIndex(jobs->StorageKey(), kControllerIndex, cj->uid()), now);
}

bool CronJobController::DeleteJob(const ResourceInfo& jobs,
                                  const api::Object& cj, const api::Object& job,
                                  absl::Time now) {
  DeleteOptions o;
  o.propagation_policy = "Background";
  o.precondition_uid = std::string(job.uid());
  absl::Status s =
      registry()->Delete(jobs, job.namespace_(), job.name(), o).status();
  if (!s.ok()) {
    if (!IsRaceError(s)) {
      events_.Record(cj, "batch/v1", "CronJob", true, "FailedDelete",
                     Cat("Deleted job: ", s.message()), now);
    }
    return false;
  }
  events_.Record(cj, "batch/v1", "CronJob", false, "SuccessfulDelete",
                 Cat("Deleted job ", job.name()), now);
  return true;
}

absl::Time CronJobController::SyncCronJob(
    const ResourceInfo& cronjobs, const ResourceInfo& jobs,
    const api::ObjectPtr& cj_ptr, const std::vector<api::ObjectPtr>& owned,
    absl::Time now) {
  const api::Object& cj = *cj_ptr;
  const Value* spec = field::Object(&cj.json(), "spec");
  Allocator a(1024);
  Value status(rapidjson::kObjectType);
  if (const Value* old = field::Object(&cj.json(), "status"); old != nullptr) {
    status.CopyFrom(*old, a);
  }
  // status.active as uid -> reference.
  std::vector<Value> active;
  if (const Value* list = field::Array(&status, "active"); list != nullptr) {
    for (const Value& ref : list->GetArray()) active.emplace_back(ref, a);
  }
  auto in_active = [&](std::string_view uid) {
    for (const Value& ref : active) {
      if (field::String(&ref, "uid") == uid) return true;
    }
    return false;
  };
  auto drop_active = [&](std::string_view uid) {
    active.erase(std::remove_if(active.begin(), active.end(),
                                [&](const Value& ref) {
                                  return field::String(&ref, "uid") == uid;
                                }),
                 active.end());
  };

  // The Jobs it owns against status.active.
  std::vector<std::string> children;
  for (const api::ObjectPtr& job : owned) {
    children.emplace_back(job->uid());
    const std::string_view finished = FinishedType(*job);
    const bool listed = in_active(job->uid());
    if (!listed && finished.empty()) {
      events_.Record(
          cj, "batch/v1", "CronJob", true, "UnexpectedJob",
          Cat("Saw a job that the controller did not create or forgot: ",
              job->name()),
          now);
    } else if (listed && !finished.empty()) {
      drop_active(job->uid());
      events_.Record(
          cj, "batch/v1", "CronJob", false, "SawCompletedJob",
          Cat("Saw completed job: ", job->name(), ", condition: ", finished),
          now);
    } else if (finished == "Complete") {
      const std::optional<absl::Time> done =
          TimeField(field::Object(&job->json(), "status"), "completionTime");
      const std::optional<absl::Time> last =
          TimeField(&status, "lastSuccessfulTime");
      if (done.has_value() && (!last.has_value() || *done > *last)) {
        status.RemoveMember("lastSuccessfulTime");
        status.AddMember("lastSuccessfulTime",
                         field::Str(api::FormatRfc3339(*done), a), a);
      }
    }
  }
  for (size_t i = 0; i < active.size();) {
    const std::string uid(field::String(&active[i], "uid"));
    if (std::find(children.begin(), children.end(), uid) != children.end() ||
        storage()->GetByKey(
            jobs.StorageKey(),
            Storage::Key(cj.namespace_(), field::String(&active[i], "name"))) !=
            nullptr) {
      ++i;
      continue;
    }
    events_.Record(
        cj, "batch/v1", "CronJob", false, "MissingJob",
        Cat("Active job went missing: ", field::String(&active[i], "name")),
        now);
    active.erase(active.begin() + static_cast<std::ptrdiff_t>(i));
  }

  absl::Time next = absl::InfiniteFuture();
  [&] {
    if (cj.being_deleted()) return;
    const Value* tz_json = field::Member(spec, "timeZone");
    const std::string tz_name(
        tz_json != nullptr && tz_json->IsString() ? field::View(*tz_json) : "");
    absl::StatusOr<absl::TimeZone> zone = LoadCronTimeZone(tz_name);
    if (!zone.ok()) {
      events_.Record(
          cj, "batch/v1", "CronJob", true, "UnknownTimeZone",
          Cat("invalid timeZone: \"", tz_name, "\": ", zone.status().message()),
          now);
      return;
    }
    if (field::Bool(spec, "suspend", false)) return;
    const std::string_view schedule_text = field::String(spec, "schedule");
    absl::StatusOr<CronSchedule> schedule = CronSchedule::Parse(schedule_text);
    if (!schedule.ok()) {
      events_.Record(cj, "batch/v1", "CronJob", true, "UnparseableSchedule",
                     Cat("unparseable schedule: \"", schedule_text,
                         "\" : ", schedule.status().message()),
                     now);
      return;
    }
    const ScheduleTimes times =
        MostRecentScheduleTime(cj, now, *schedule, *zone, true);
    if (times.missed > 100) {
      events_.Record(
          cj, "batch/v1", "CronJob", true, "TooManyMissedTimes",
          Cat("too many missed start times: ", times.missed,
              ". Set or decrease .spec.startingDeadlineSeconds or check clock "
              "skew"),
          now);
    }
    // kube's nextScheduleTimeDuration: after the most recent time (or the
    // earliest one when none has come).
    auto requeue = [&](absl::Time after) {
      next = schedule->Next(after, *zone) + kNextScheduleDelta;
    };
    if (!times.most_recent.has_value()) {
      const ScheduleTimes plain =
          MostRecentScheduleTime(cj, now, *schedule, *zone, false);
      requeue(plain.most_recent.value_or(plain.earliest));
      return;
    }
    const absl::Time scheduled = *times.most_recent;
    requeue(scheduled);
    const std::optional<int64_t> deadline =
        field::Int64(spec, "startingDeadlineSeconds");
    if (deadline.has_value() && scheduled + absl::Seconds(*deadline) < now) {
      events_.Record(cj, "batch/v1", "CronJob", true, "MissSchedule",
                     Cat("Missed scheduled time to start a job: ",
                         absl::FormatTime("%a, %d %b %Y %H:%M:%S %z", scheduled,
                                          absl::UTCTimeZone())),
                     now);
      return;
    }
    const std::string job_name =
        Cat(cj.name(), "-", absl::ToUnixSeconds(scheduled) / 60);
    bool processed = false;
    for (const Value& ref : active) {
      processed = processed || field::String(&ref, "name") == job_name;
    }
    const std::optional<absl::Time> last =
        TimeField(&status, "lastScheduleTime");
    if (processed || (last.has_value() && *last == scheduled)) return;
    const std::string_view policy = field::String(spec, "concurrencyPolicy");
    if (policy == "Forbid" && !active.empty()) {
      events_.Record(cj, "batch/v1", "CronJob", false, "JobAlreadyActive",
                     "Not starting job because prior execution is running and "
                     "concurrency policy is Forbid",
                     now);
      return;
    }
    if (policy == "Replace") {
      std::vector<Value> still;
      for (Value& ref : active) {
        api::ObjectPtr job = storage()->GetByKey(
            jobs.StorageKey(),
            Storage::Key(cj.namespace_(), field::String(&ref, "name")));
        if (job == nullptr) continue;
        if (!DeleteJob(jobs, cj, *job, now)) still.push_back(std::move(ref));
      }
      active = std::move(still);
      if (!active.empty()) {
        next = now + absl::Seconds(1);
        return;
      }
    }
    // kube's getJobFromTemplate2.
    const Value* tmpl = field::Object(spec, "jobTemplate");
    api::ObjectBuilder b("batch/v1", "Job");
    b.SetName(job_name);
    b.SetNamespace(cj.namespace_());
    const Value* meta = field::Object(tmpl, "metadata");
    for (const char* key : {"labels", "annotations"}) {
      if (const Value* v = field::Object(meta, key); v != nullptr) {
        (void)b.Set(Cat("/metadata/", key), *v);
      }
    }
    b.SetAnnotation(
        kCronJobScheduledTimestampAnnotation,
        Rfc3339In(scheduled, tz_name.empty() ? absl::UTCTimeZone() : *zone));
    api::OwnerReferenceView owner;
    owner.api_version = "batch/v1";
    owner.kind = "CronJob";
    owner.name = cj.name();
    owner.uid = cj.uid();
    owner.controller = true;
    owner.block_owner_deletion = true;
    b.AddOwnerReference(owner);
    if (const Value* job_spec = field::Object(tmpl, "spec");
        job_spec != nullptr) {
      (void)b.Set("/spec", *job_spec);
    }
    absl::StatusOr<WriteResult> created =
        registry()->Create(jobs, cj.namespace_(), std::move(b));
    if (!created.ok()) {
      const api::StatusError e = api::StatusError::FromStatus(created.status());
      if (e.code == 409) {
        VLOG(2) << "cronjob controller: job exists job=" << job_name;
        return;
      }
      events_.Record(cj, "batch/v1", "CronJob", true, "FailedCreate",
                     Cat("Error creating job: ", created.status().message()),
                     now);
      next = now + absl::Seconds(1);
      return;
    }
    events_.Record(cj, "batch/v1", "CronJob", false, "SuccessfulCreate",
                   Cat("Created job ", created->object->name()), now);
    active.push_back(JobReference(*created->object, a));
    status.RemoveMember("lastScheduleTime");
    status.AddMember("lastScheduleTime",
                     field::Str(api::FormatRfc3339(scheduled), a), a);
  }();

  // kube's cleanupFinishedJobs: the oldest finished Jobs beyond the limits.
  if (!cj.being_deleted()) {
    for (const auto& [limit_key, type] :
         {std::pair<const char*, std::string_view>{"successfulJobsHistoryLimit",
                                                   "Complete"},
          {"failedJobsHistoryLimit", "Failed"}}) {
      const std::optional<int64_t> limit = field::Int64(spec, limit_key);
      if (!limit.has_value()) continue;
      std::vector<api::ObjectPtr> finished;
      for (const api::ObjectPtr& job : owned) {
        if (FinishedType(*job) == type && !job->being_deleted()) {
          finished.push_back(job);
        }
      }
      if (static_cast<int64_t>(finished.size()) <= *limit) continue;
      std::sort(finished.begin(), finished.end(), StartedBefore);
      const size_t excess = finished.size() - static_cast<size_t>(*limit);
      for (size_t i = 0; i < excess; ++i) {
        if (DeleteJob(jobs, cj, *finished[i], now)) {
          drop_active(finished[i]->uid());
        }
      }
    }
  }

  status.RemoveMember("active");
  if (!active.empty()) {
    Value list(rapidjson::kArrayType);
    for (Value& ref : active) list.PushBack(ref, a);
    status.AddMember("active", list, a);
  }
  const Value* old = field::Object(&cj.json(), "status");
  if (old == nullptr || !json::JsonDeepEqual(status, *old)) {
    api::ObjectBuilder w = StatusWriteOf(cj);
    (void)w.Set("/status", status);
    WriteOptions o;
    o.subresource = "status";
    absl::Status s =
        registry()
            ->Update(cronjobs, cj.namespace_(), cj.name(), std::move(w), o)
            .status();
    if (!s.ok()) {
      if (!IsRaceError(s)) {
        LOG(WARNING) << "cronjob controller: status of cronjob=" << cj.Key()
                     << " failed: " << s;
      }
      return std::min(next, now + absl::Seconds(1));
    }
  }
  return next;
}

}  // namespace apiserver
}  // namespace kcr
