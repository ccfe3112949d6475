#include "apiserver/kube_controllers/ttl_after_finished_controller.h"

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/types/field.h"
#include "api/types/time.h"
#include "apiserver/kube_controllers/stored_objects.h"
#include "glog/logging.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace {

namespace field = ::kcr::api::field;

constexpr char kJobsKey[] = "batch/jobs";

// When the Job finished, or nullopt while it runs.
std::optional<absl::Time> FinishedAt(const api::Object& job) {
  const rapidjson::Value* conditions =
      field::Array(field::Object(&job.json(), "status"), "conditions");
  if (conditions == nullptr) return std::nullopt;
  for (const rapidjson::Value& c : conditions->GetArray()) {
    const std::string_view type = field::String(&c, "type");
    if ((type != "Complete" && type != "Failed") ||
        field::String(&c, "status") != "True") {
      continue;
    }
    absl::StatusOr<absl::Time> t =
        api::ParseTime(field::String(&c, "lastTransitionTime"));
    return t.ok() ? *t : absl::InfinitePast();
  }
  return std::nullopt;
}

}  // namespace

TtlAfterFinishedController::TtlAfterFinishedController(
    Registry* registry, const Clock* clock,
    IncrementalControllerOptions options)
    : IncrementalController(registry, clock, options) {}

bool TtlAfterFinishedController::Wants(const StoredEvent& event) const {
  return event.collection == kJobsKey;
}

void TtlAfterFinishedController::OnEvent(const StoredEvent& event) {
  if (event.type == EventType::kDeleted) return;
  const api::Object& job = *event.object;
  if (job.Find("/spec/ttlSecondsAfterFinished") == nullptr) return;
  Enqueue(Storage::Key(job.namespace_(), job.name()));
}

void TtlAfterFinishedController::EnqueueAll() {
  for (const api::ObjectPtr& job : storage()->Snapshot(kJobsKey)) {
    if (job->Find("/spec/ttlSecondsAfterFinished") == nullptr) continue;
    Enqueue(Storage::Key(job->namespace_(), job->name()));
  }
}

absl::Time TtlAfterFinishedController::SyncKey(const std::string& key,
                                               absl::Time now) {
  ResourceInfoPtr jobs = registry()->resources()->Lookup("batch", "v1", "jobs");
  if (jobs == nullptr) return absl::InfiniteFuture();
  api::ObjectPtr job = storage()->GetByKey(jobs->StorageKey(), key);
  if (job == nullptr || job->being_deleted()) return absl::InfiniteFuture();
  const std::optional<int64_t> ttl = field::Int64(
      field::Object(&job->json(), "spec"), "ttlSecondsAfterFinished");
  const std::optional<absl::Time> finished = FinishedAt(*job);
  if (!ttl.has_value() || !finished.has_value()) return absl::InfiniteFuture();
  const absl::Time due = *finished + absl::Seconds(*ttl);
  if (now < due) return due;
  DeleteOptions o;
  o.propagation_policy = "Foreground";
  o.precondition_uid = std::string(job->uid());
  absl::Status s =
      registry()->Delete(*jobs, job->namespace_(), job->name(), o).status();
  if (!s.ok() && !IsRaceError(s)) {
    LOG(WARNING) << "ttl-after-finished controller: deleting job=" << key
                 << " failed: " << s;
    return now + absl::Seconds(1);
  }
  VLOG(2) << "ttl-after-finished controller: deleted job=" << key;
  return absl::InfiniteFuture();
}

}  // namespace apiserver
}  // namespace kcr
