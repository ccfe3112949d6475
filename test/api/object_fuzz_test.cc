// Fuzzes Object::Parse: any bytes must give an Object or an error, never a
// crash. On success every accessor runs, the JSON round trip is stable and
// a builder round trip rebuilds an equal object.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "api/transform.h"
#include "api/types/condition.h"
#include "api/types/config_map.h"
#include "api/types/deployment.h"
#include "api/types/event.h"
#include "api/types/lease.h"
#include "api/types/namespace.h"
#include "api/types/owner_reference.h"
#include "api/types/pod.h"
#include "api/types/secret.h"
#include "base/string_view.h"
#include "rapidjson/document.h"
#include "test/fuzz/server_stack.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

void Exercise(const kcr::api::Object& obj) {
  size_t sink = obj.api_version().size() + obj.kind().size() +
                obj.name().size() + obj.namespace_().size() + obj.uid().size() +
                obj.resource_version().size() + obj.generate_name().size() +
                obj.creation_timestamp().size() +
                obj.deletion_timestamp().size() + obj.Key().size();
  sink += obj.being_deleted() + static_cast<size_t>(obj.generation());
  for (const auto& [k, v] : obj.labels()) {
    Check(obj.Label(k).has_value());
    sink += k.size() + v.size();
  }
  for (const auto& [k, v] : obj.annotations()) {
    Check(obj.Annotation(k).has_value());
    sink += k.size() + v.size();
  }
  sink += obj.labels().ToMap().size();
  for (const auto& ref : obj.owner_references()) {
    sink += ref.api_version.size() + ref.kind.size() + ref.name.size() +
            ref.uid.size() + ref.controller + ref.block_owner_deletion;
  }
  sink += obj.controller_reference().has_value();
  for (std::string_view f : obj.finalizers()) {
    Check(obj.HasFinalizer(f));
  }
  for (const char* pointer :
       {"", "/", "/metadata", "/metadata/name", "/spec/0", "/spec/a~1b",
        "/status/conditions/0/type", "/~", "/a/-", "x"}) {
    sink += obj.Find(pointer) != nullptr;
  }
  Check(obj.Find("") == &obj.json());
  Check(obj.SpaceUsed() > 0);
  (void)sink;
}

// Every typed view reads any object without crashing.
void ExerciseViews(const kcr::api::ObjectPtr& obj) {
  using namespace kcr::api;  // NOLINT: test-local brevity
  size_t sink = 0;
  if (auto pod = PodView::Create(obj); pod.ok()) {
    sink += pod->phase().size() + pod->total_restarts() + pod->ready() +
            pod->ready_containers() + pod->conditions().size() +
            pod->node_name().size() + pod->pod_ip().size();
  }
  if (auto d = DeploymentView::Create(obj); d.ok()) {
    sink += d->replicas() + d->ready_replicas() + d->available_replicas() +
            d->updated_replicas() + d->status_replicas() +
            d->observed_generation() + d->containers().size() +
            d->selector_match_labels().size() + d->template_labels().size();
  }
  if (auto cm = ConfigMapView::Create(obj); cm.ok()) {
    sink += cm->data().ToMap().size() + cm->binary_data().size();
  }
  if (auto s = SecretView::Create(obj); s.ok()) {
    sink += s->DebugString().size() + s->type().size();
    for (const auto& [k, v] : s->data()) sink += s->Decoded(k).ok();
  }
  if (auto ns = NamespaceView::Create(obj); ns.ok()) {
    sink += ns->active() + ns->terminating();
  }
  if (auto l = LeaseView::Create(obj); l.ok()) {
    sink += l->holder_identity().size() + l->acquire_time().has_value() +
            l->renew_time().has_value() + l->lease_transitions() +
            l->lease_duration_seconds().value_or(0);
  }
  if (auto e = EventView::Create(obj); e.ok()) {
    sink += e->involved_object().name.size() + e->count() + e->reason().size() +
            e->source_component().size();
  }
  sink += ConditionsOf(*obj).size() + ControllerOf(*obj).has_value() +
          OwnerReferencesOf(*obj).size();
  (void)sink;
}

// A parse error names an offset within the input.
void CheckOffset(const absl::Status& status, size_t size) {
  std::string_view message(status.message().data(), status.message().size());
  const size_t at = message.find(" offset ");
  Check(at != std::string_view::npos);
  std::string_view digits = message.substr(at + 8);
  digits = digits.substr(0, digits.find_first_not_of("0123456789"));
  size_t offset = 0;
  Check(!digits.empty() && absl::SimpleAtoi(kcr::ToAbsl(digits), &offset));
  Check(offset <= size);
}

}  // namespace

static int FuzzOne(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<kcr::api::ObjectPtr> parsed = kcr::api::Object::Parse(input);
  absl::StatusOr<kcr::api::ObjectPtr> stripped =
      kcr::api::Object::Parse(input, {.strip_managed_fields = true});
  // Stripping may only accept more: managedFields nested too deep are
  // dropped, not kept.
  Check(parsed.ok() == stripped.ok() ||
        (stripped.ok() &&
         absl::StrContains(parsed.status().message(), "nests deeper")));
  (void)kcr::api::ObjectBuilder::FromJson(input);
  if (!parsed.ok()) {
    CheckOffset(parsed.status(), size);
    if (!stripped.ok()) CheckOffset(stripped.status(), size);
    return 0;
  }
  const kcr::api::Object& obj = **parsed;
  Exercise(obj);
  Exercise(**stripped);
  ExerciseViews(*parsed);
  Check((*stripped)->Find("/metadata/managedFields") == nullptr);

  // Serialising and parsing again gives the same text.
  const std::string json = obj.ToJson();

  // The in-situ parse (its own string scanning) reads what RapidJSON's
  // byte-by-byte reader reads from the same bytes. Unicode escapes are left
  // out: lone surrogates are repaired only by Parse.
  if (input.find("\\u") == std::string_view::npos) {
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseValidateEncodingFlag |
              rapidjson::kParseFullPrecisionFlag |
              rapidjson::kParseIterativeFlag>(input.data(), input.size());
    Check(!doc.HasParseError());
    absl::StatusOr<kcr::api::ObjectPtr> reference =
        kcr::api::Object::FromValue(doc);
    Check(reference.ok());
    Check((*reference)->ToJson() == json);
  }
  absl::StatusOr<kcr::api::ObjectPtr> again = kcr::api::Object::Parse(json);
  Check(again.ok());
  Check((*again)->ToJson() == json);

  // Builder round trip: a copy builds the same object, and edits build.
  kcr::api::ObjectBuilder builder = obj.ToBuilder();
  Check(builder.ToJson() == json);
  absl::StatusOr<kcr::api::ObjectPtr> rebuilt = builder.Build();
  Check(rebuilt.ok());
  Check((*rebuilt)->ToJson() == json);
  builder.SetName("fuzz").SetLabel("k", "v").AddFinalizer("f");
  builder.AddOwnerReference({"v1", "Kind", "n", "u", true, true});
  (void)builder.SetString("/spec/x", "y");
  builder.Remove("/status");
  absl::StatusOr<kcr::api::ObjectPtr> edited = builder.Build();
  Check(edited.ok());
  Check((*edited)->name() == "fuzz");
  Check((*edited)->Label("k") == "v");
  absl::StatusOr<kcr::api::ObjectPtr> transformed =
      kcr::api::StripManagedFields()(*parsed);
  Check(transformed.ok());
  return 0;
}

// On a thread with the local API server's connection stack, so that
// recursion the server could not afford fails here too.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kcr::fuzz::RunOnServerStack([data, size] { FuzzOne(data, size); });
  return 0;
}
