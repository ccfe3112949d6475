// Fuzzes label- and field-selector parsing: arbitrary bytes must never
// crash; whatever parses must render to a canonical string that parses back
// to an equal selector with the same matching behaviour.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "api/selector/field_selector.h"
#include "api/selector/label_selector.h"
#include "rapidjson/document.h"
#include "test/fuzz/server_stack.h"

namespace {

using ::kcr::api::FieldSelector;
using ::kcr::api::LabelMap;
using ::kcr::api::LabelSelector;

void Check(bool ok) {
  if (!ok) std::abort();
}

void FuzzLabels(std::string_view input) {
  absl::StatusOr<LabelSelector> s = LabelSelector::Parse(input);
  if (!s.ok()) return;
  const std::string canonical = s->ToString();
  absl::StatusOr<LabelSelector> again = LabelSelector::Parse(canonical);
  Check(again.ok());
  Check(*again == *s);
  Check(again->ToString() == canonical);
  static const LabelMap* const kSamples[] = {
      new LabelMap{},
      new LabelMap{{"a", "b"}, {"x", "1"}, {"in", "notin"}},
      new LabelMap{{"app", "web"}, {"env", "prod"}, {"n", "42"}, {"e", ""}},
  };
  for (const LabelMap* labels : kSamples) {
    Check(s->Matches(*labels) == again->Matches(*labels));
  }
  rapidjson::Document json;
  json.Parse(R"({"app": "web", "n": "7", "x": 1})");
  (void)s->Matches(&json);
  (void)s->Matches(nullptr);
  for (const auto& r : s->requirements()) (void)s->RequiresExactMatch(r.key());
}

void FuzzFields(std::string_view input) {
  absl::StatusOr<FieldSelector> s = FieldSelector::Parse(input);
  if (!s.ok()) return;
  const std::string canonical = s->ToString();
  absl::StatusOr<FieldSelector> again = FieldSelector::Parse(canonical);
  Check(again.ok());
  Check(*again == *s);
  Check(again->ToString() == canonical);
  rapidjson::Document pod;
  pod.Parse(R"({"metadata": {"name": "a", "namespace": "b"},
                "status": {"phase": "Running"}, "spec": {"n": 3, "l": []}})");
  Check(s->Matches(pod) == again->Matches(pod));
}

}  // namespace

static int FuzzOne(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  FuzzLabels(input);
  FuzzFields(input);
  return 0;
}

// On a thread with the local API server's connection stack, so that
// recursion the server could not afford fails here too.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kcr::fuzz::RunOnServerStack([data, size] { FuzzOne(data, size); });
  return 0;
}
