#include "apiserver/endpoints/pod_log.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "api/errors/errors.h"
#include "api/types/field.h"
#include "api/types/time.h"
#include "apiserver/endpoints/request_options.h"
#include "apiserver/endpoints/response_writers.h"
#include "apiserver/internal/object_fields.h"
#include "base/status_macros.h"
#include "base/str_cat.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace {

using rapidjson::Value;
namespace field = api::field;

// How often a follower looks for new lines and for the container's end.
constexpr absl::Duration kFollowPoll = absl::Milliseconds(100);

// The time in string member `key` of `object`, when it is one.
std::optional<absl::Time> TimeOf(const Value* object, const char* key) {
  const std::string_view s = field::String(object, key);
  if (s.empty()) return std::nullopt;
  absl::StatusOr<absl::Time> t = api::ParseTime(s);
  if (!t.ok()) return std::nullopt;
  return *t;
}

// The status of `container` among the pod's containers and init containers.
const Value* ContainerStatus(const api::Object& pod,
                             std::string_view container) {
  const Value* status = Member(pod.json(), "status");
  for (const char* list : {"containerStatuses", "initContainerStatuses"}) {
    const Value* statuses = field::Member(status, list);
    if (statuses == nullptr || !statuses->IsArray()) continue;
    for (const auto& s : statuses->GetArray()) {
      if (field::String(&s, "name") == container) return &s;
    }
  }
  return nullptr;
}

// The container's spec entry (init containers too), or null.
const Value* ContainerSpec(const api::Object& pod, std::string_view name) {
  const Value* spec = Member(pod.json(), "spec");
  for (const char* list : {"initContainers", "containers"}) {
    const Value* containers = field::Member(spec, list);
    if (containers == nullptr || !containers->IsArray()) continue;
    for (const auto& c : containers->GetArray()) {
      if (field::String(&c, "name") == name) return &c;
    }
  }
  return nullptr;
}

// podutil.VisitContainers order: init containers, then containers.
std::vector<std::string> ContainerNames(const api::Object& pod) {
  std::vector<std::string> out;
  const Value* spec = Member(pod.json(), "spec");
  for (const char* list : {"initContainers", "containers"}) {
    const Value* containers = field::Member(spec, list);
    if (containers == nullptr || !containers->IsArray()) continue;
    for (const auto& c : containers->GetArray()) {
      out.emplace_back(field::String(&c, "name"));
    }
  }
  return out;
}

bool Terminated(const api::Object& pod, std::string_view container) {
  return field::Member(field::Member(ContainerStatus(pod, container), "state"),
                       "terminated") != nullptr;
}

// The kubelet's validateContainerLogStatus: why there is no log to read.
absl::Status CheckLogStatus(const api::Object& pod,
                            const std::string& container, bool previous) {
  const std::string who =
      Cat("container ", Quote(container), " in pod ", Quote(pod.name()));
  const Value* status = ContainerStatus(pod, container);
  if (status == nullptr) {
    return api::StatusError::BadRequest(Cat(who, " is not available"))
        .ToStatus();
  }
  if (previous) {
    // Containers never restart on the simulated node.
    const Value* last =
        field::Member(field::Member(status, "lastState"), "terminated");
    if (last == nullptr || field::String(last, "containerID").empty()) {
      return api::StatusError::BadRequest(Cat("previous terminated container ",
                                              Quote(container), " in pod ",
                                              Quote(pod.name()), " not found"))
          .ToStatus();
    }
    return absl::OkStatus();
  }
  const Value* state = field::Member(status, "state");
  if (field::Member(state, "running") != nullptr) return absl::OkStatus();
  if (const Value* terminated = field::Member(state, "terminated")) {
    if (field::String(terminated, "containerID").empty() &&
        field::String(status, "containerID").empty()) {
      return api::StatusError::BadRequest(Cat(who, " is terminated"))
          .ToStatus();
    }
    return absl::OkStatus();
  }
  if (const Value* waiting = field::Member(state, "waiting")) {
    const std::string_view reason = field::String(waiting, "reason");
    if (reason == "ErrImagePull") {
      return api::StatusError::BadRequest(
                 Cat(who, " is waiting to start: image can't be pulled"))
          .ToStatus();
    }
    if (reason == "ImagePullBackOff") {
      return api::StatusError::BadRequest(
                 Cat(who,
                     " is waiting to start: trying and failing to pull image"))
          .ToStatus();
    }
    return api::StatusError::BadRequest(
               Cat(who, " is waiting to start: ", reason))
        .ToStatus();
  }
  return api::StatusError::BadRequest(
             Cat(who, " is waiting to start - no logs yet"))
      .ToStatus();
}

absl::StatusOr<std::optional<int64_t>> IntQuery(const HttpRequest& req,
                                                const char* key) {
  if (!req.HasQuery(key)) return std::optional<int64_t>();
  const std::string v = req.Query(key);
  int64_t n;
  if (!absl::SimpleAtoi(v, &n)) {
    return api::StatusError::BadRequest(Cat(key, ": strconv.ParseInt: parsing ",
                                            Quote(v), ": invalid syntax"))
        .ToStatus();
  }
  return std::optional<int64_t>(n);
}

api::FieldError Invalid(const char* field, int64_t value, const char* detail) {
  return FieldErr(api::FieldError::Type::kInvalid, field, Cat(value), detail);
}

// The text of the lines to send, after sinceSeconds/sinceTime and
// limitBytes (counted down over the whole response).
class LogWriter {
 public:
  LogWriter(const PodLogOptions& o, absl::Time since)
      : options_(o), since_(since) {
    if (o.limit_bytes.has_value()) left_ = *o.limit_bytes;
  }

  // Appends lines[from..] that pass sinceSeconds/sinceTime.
  void Add(const std::vector<LogLine>& lines, size_t from) {
    for (size_t i = from; i < lines.size(); ++i) {
      if (lines[i].time < since_) continue;
      std::string text = FormatLogLine(lines[i], options_.timestamps);
      if (left_.has_value()) {
        if (*left_ <= 0) return;
        if (static_cast<int64_t>(text.size()) > *left_) text.resize(*left_);
        *left_ -= static_cast<int64_t>(text.size());
      }
      pending_ += text;
    }
  }
  bool Exhausted() const { return left_.has_value() && *left_ <= 0; }
  std::string Take() { return std::exchange(pending_, {}); }

 private:
  const PodLogOptions& options_;
  const absl::Time since_;
  std::optional<int64_t> left_;
  std::string pending_;
};

// Appends the lines of `text`, each at `time`; a final newline ends the
// last line rather than starting an empty one.
void AppendLines(std::string_view text, absl::Time time,
                 std::vector<LogLine>* out) {
  std::vector<std::string> lines =
      absl::StrSplit(absl::string_view(text.data(), text.size()), '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  for (std::string& line : lines) out->push_back({time, std::move(line)});
}

}  // namespace

absl::StatusOr<std::string> ResolveContainer(const api::Object& pod,
                                             const std::string& container) {
  if (!container.empty()) {
    if (ContainerSpec(pod, container) == nullptr) {
      return api::StatusError::BadRequest(Cat("container ", container,
                                              " is not valid for pod ",
                                              pod.name()))
          .ToStatus();
    }
    return container;
  }
  const Value* containers =
      field::Array(Member(pod.json(), "spec"), "containers");
  switch (containers != nullptr ? containers->Size() : 0) {
    case 0:
      return api::StatusError::BadRequest(
                 Cat("a container name must be specified for pod ", pod.name()))
          .ToStatus();
    case 1:
      return std::string(field::String(&(*containers)[0], "name"));
    default:
      // Go's %s of a []string: [a b c].
      return api::StatusError::BadRequest(
                 Cat("a container name must be specified for pod ", pod.name(),
                     ", choose one of: [",
                     absl::StrJoin(ContainerNames(pod), " "), "]"))
          .ToStatus();
  }
}

std::vector<LogLine> SimulatedContainerLog(const api::Object& pod,
                                           std::string_view container) {
  std::vector<LogLine> out;
  const Value* status = ContainerStatus(pod, container);
  const Value* state = field::Member(status, "state");
  const Value* running = field::Member(state, "running");
  const Value* terminated = field::Member(state, "terminated");
  if (running == nullptr && terminated == nullptr) return out;
  const absl::Time start =
      TimeOf(running != nullptr ? running : terminated, "startedAt")
          .value_or(
              TimeOf(terminated, "finishedAt").value_or(absl::UnixEpoch()));
  if (std::optional<std::string_view> text =
          pod.Annotation(kSimLogAnnotation)) {
    AppendLines(*text, start, &out);
  } else {
    const Value* spec = ContainerSpec(pod, container);
    const std::string_view node =
        field::String(Member(pod.json(), "spec"), "nodeName");
    out.push_back({start, Cat("Starting ", container, " (image ",
                              field::String(spec, "image"), ")")});
    out.push_back({start, Cat(container, " is running on node ", node,
                              " (simulated: no process runs)")});
  }
  if (terminated != nullptr) {
    const std::string_view message = field::String(terminated, "message");
    if (!message.empty()) {
      const absl::Time finished =
          TimeOf(terminated, "finishedAt").value_or(start);
      AppendLines(message, finished, &out);
    }
  }
  return out;
}

absl::StatusOr<PodLogOptions> ParsePodLogOptions(const HttpRequest& req,
                                                 std::string_view pod_name) {
  PodLogOptions o;
  o.container = req.Query("container");
  o.follow = ParseBool(req.Query("follow"));
  o.previous = ParseBool(req.Query("previous"));
  o.timestamps = ParseBool(req.Query("timestamps"));
  KCR_ASSIGN_OR_RETURN(o.tail_lines, IntQuery(req, "tailLines"));
  KCR_ASSIGN_OR_RETURN(o.limit_bytes, IntQuery(req, "limitBytes"));
  KCR_ASSIGN_OR_RETURN(o.since_seconds, IntQuery(req, "sinceSeconds"));
  if (req.HasQuery("sinceTime")) {
    absl::StatusOr<absl::Time> t = api::ParseTime(req.Query("sinceTime"));
    if (!t.ok()) {
      return api::StatusError::BadRequest(Cat("sinceTime: parsing time ",
                                              Quote(req.Query("sinceTime")),
                                              ": not an RFC 3339 time"))
          .ToStatus();
    }
    o.since_time = *t;
  }
  // validation.ValidatePodLogOptions.
  std::vector<api::FieldError> errors;
  if (o.tail_lines.has_value() && *o.tail_lines < 0) {
    errors.push_back(Invalid("tailLines", *o.tail_lines,
                             "must be greater than or equal to 0"));
  }
  if (o.limit_bytes.has_value() && *o.limit_bytes < 1) {
    errors.push_back(
        Invalid("limitBytes", *o.limit_bytes, "must be greater than 0"));
  }
  if (o.since_seconds.has_value() && o.since_time.has_value()) {
    errors.push_back(FieldErr(
        api::FieldError::Type::kForbidden, "", "",
        "at most one of `sinceTime` or `sinceSeconds` may be specified"));
  } else if (o.since_seconds.has_value() && *o.since_seconds < 1) {
    errors.push_back(
        Invalid("sinceSeconds", *o.since_seconds, "must be greater than 0"));
  }
  if (!errors.empty()) {
    return api::StatusError::Invalid({"", "PodLogOptions"}, pod_name, errors)
        .ToStatus();
  }
  return o;
}

std::string FormatLogLine(const LogLine& line, bool timestamps) {
  if (!timestamps) return Cat(line.text, "\n");
  // The kubelet's timeFormatOut: nine fractional digits, always.
  return Cat(absl::FormatTime("%Y-%m-%d%ET%H:%M:%E9SZ", line.time,
                              absl::UTCTimeZone()),
             " ", line.text, "\n");
}

void ServePodLog(Registry* registry, const ResourceInfo& pods,
                 const std::string& ns, const std::string& name,
                 const HttpRequest& req, HttpExchange* ex, const Clock* clock) {
  if (req.method != "GET") {
    return SendApiError(
        ex, api::StatusError::MethodNotSupported({"", "pods/log"}, req.method));
  }
  absl::StatusOr<PodLogOptions> options = ParsePodLogOptions(req, name);
  if (!options.ok()) return SendError(ex, options.status());
  absl::StatusOr<api::ObjectPtr> pod = registry->Get(pods, ns, name);
  if (!pod.ok()) return SendError(ex, pod.status());
  absl::StatusOr<std::string> container =
      ResolveContainer(**pod, options->container);
  if (!container.ok()) return SendError(ex, container.status());
  HttpResponse empty;
  empty.content_type = "text/plain";
  // Not on a node yet: kube-apiserver has no kubelet to ask and answers an
  // empty log.
  if (field::String(Member((*pod)->json(), "spec"), "nodeName").empty()) {
    return ex->Respond(std::move(empty));
  }
  if (absl::Status s = CheckLogStatus(**pod, *container, options->previous);
      !s.ok()) {
    return SendError(ex, s);
  }
  absl::Time since = absl::InfinitePast();
  if (options->since_time.has_value()) since = *options->since_time;
  if (options->since_seconds.has_value()) {
    since = clock->Now() - absl::Seconds(*options->since_seconds);
  }
  LogWriter writer(*options, since);
  std::vector<LogLine> lines = SimulatedContainerLog(**pod, *container);
  size_t first = 0;
  if (options->tail_lines.has_value()) {
    first = lines.size() - std::min<size_t>(lines.size(), *options->tail_lines);
  }
  writer.Add(lines, first);
  if (!options->follow || Terminated(**pod, *container) || writer.Exhausted()) {
    HttpResponse r;
    r.content_type = "text/plain";
    r.body = writer.Take();
    return ex->Respond(std::move(r));
  }
  if (!ex->StartStream(200, "text/plain", {})) return;
  std::string chunk = writer.Take();
  if (!chunk.empty() && !ex->WriteChunk(chunk)) return;
  size_t seen = lines.size();
  const std::string uid((*pod)->uid());
  while (!ex->Cancelled()) {
    absl::SleepFor(kFollowPoll);
    api::ObjectPtr now = registry->storage()->Get(pods.StorageKey(), ns, name);
    // The pod is gone (or replaced by another of the same name): the
    // kubelet's stream of the old container ends.
    if (now == nullptr || now->uid() != uid) break;
    lines = SimulatedContainerLog(*now, *container);
    if (lines.size() > seen) {
      writer.Add(lines, seen);
      seen = lines.size();
      chunk = writer.Take();
      if (!chunk.empty() && !ex->WriteChunk(chunk)) return;
    }
    if (Terminated(*now, *container) || writer.Exhausted()) break;
  }
  ex->EndStream();
}

}  // namespace apiserver
}  // namespace kcr
