#include "controllers/pods/pod_diff.h"

#include "absl/strings/str_cat.h"
#include "api/types/pod.h"

namespace kcr::pods {
namespace {

std::string Value(const std::string& v) { return v.empty() ? "\"\"" : v; }
std::string Value(bool v) { return v ? "true" : "false"; }
std::string Value(int64_t v) { return absl::StrCat(v); }

template <typename T>
void Compare(const char* field, const T& a, const T& b,
             std::vector<PodChange>& out) {
  if (a != b) out.push_back({field, Value(a), Value(b)});
}

}  // namespace

PodState PodStateOf(const api::ObjectPtr& pod) {
  PodState state;
  absl::StatusOr<api::PodView> view = api::PodView::Create(pod);
  if (!view.ok()) return state;
  state.phase = std::string(view->phase());
  state.ready = view->ready();
  state.restarts = view->total_restarts();
  state.node = std::string(view->node_name());
  return state;
}

std::vector<PodChange> DiffPodStates(const PodState& before,
                                     const PodState& after) {
  std::vector<PodChange> changes;
  Compare("phase", before.phase, after.phase, changes);
  Compare("ready", before.ready, after.ready, changes);
  Compare("restarts", before.restarts, after.restarts, changes);
  Compare("node", before.node, after.node, changes);
  return changes;
}

std::string FormatChanges(const std::vector<PodChange>& changes) {
  std::string out;
  for (const PodChange& c : changes) {
    absl::StrAppend(&out, out.empty() ? "" : " ", c.field, "=", c.from, "->",
                    c.to);
  }
  return out;
}

std::string FormatState(const PodState& state) {
  return absl::StrCat(
      "phase=", Value(state.phase), " ready=", Value(state.ready),
      " restarts=", Value(state.restarts), " node=", Value(state.node));
}

}  // namespace kcr::pods
