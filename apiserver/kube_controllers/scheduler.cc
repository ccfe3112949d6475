#include "apiserver/kube_controllers/scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "absl/strings/numbers.h"
#include "api/types/field.h"
#include "base/str_cat.h"
#include "base/string_view.h"

namespace kcr {
namespace apiserver {
namespace {

using Value = rapidjson::Value;
namespace field = api::field;

std::string_view Str(const Value* v) {
  return v != nullptr && v->IsString()
             ? std::string_view(v->GetString(), v->GetStringLength())
             : std::string_view();
}

const Value* At(const Value* v, const char* key) {
  return v != nullptr && v->IsObject() ? field::Member(v, key) : nullptr;
}

// v1 Toleration.ToleratesTaint: an empty effect matches every effect, an
// empty key with Exists every key.
bool Tolerates(const Value& t, const Value& taint) {
  const std::string_view effect = Str(At(&t, "effect"));
  if (!effect.empty() && effect != Str(At(&taint, "effect"))) return false;
  const std::string_view key = Str(At(&t, "key"));
  const std::string_view op = Str(At(&t, "operator"));
  if (key.empty() && op == "Exists") return true;
  if (key != Str(At(&taint, "key"))) return false;
  if (op == "Exists") return true;
  return Str(At(&t, "value")) == Str(At(&taint, "value"));
}

bool Tolerated(const api::Object& pod, const Value& taint) {
  const Value* tolerations = pod.Find("/spec/tolerations");
  if (tolerations == nullptr || !tolerations->IsArray()) return false;
  for (const auto& t : tolerations->GetArray()) {
    if (t.IsObject() && Tolerates(t, taint)) return true;
  }
  return false;
}

// One nodeSelectorRequirement against `value` (present or not).
bool Requirement(const Value& r, std::optional<std::string_view> value) {
  const std::string_view op = Str(At(&r, "operator"));
  const Value* values = At(&r, "values");
  auto in = [&] {
    if (!value.has_value() || values == nullptr || !values->IsArray()) {
      return false;
    }
    for (const auto& v : values->GetArray()) {
      if (Str(&v) == *value) return true;
    }
    return false;
  };
  if (op == "In") return in();
  if (op == "NotIn") return !in();
  if (op == "Exists") return value.has_value();
  if (op == "DoesNotExist") return !value.has_value();
  if (op == "Gt" || op == "Lt") {
    if (!value.has_value() || values == nullptr || !values->IsArray() ||
        values->Size() != 1) {
      return false;
    }
    int64_t have = 0, want = 0;
    if (!absl::SimpleAtoi(ToAbsl(*value), &have) ||
        !absl::SimpleAtoi(ToAbsl(Str(&(*values)[0])), &want)) {
      return false;
    }
    return op == "Gt" ? have > want : have < want;
  }
  return false;
}

// A nodeSelectorTerm: every matchExpression on labels and matchField on
// metadata.name holds; an empty term matches nothing.
bool Term(const Value& term, const api::Object& node) {
  const Value* exprs = At(&term, "matchExpressions");
  const Value* fields = At(&term, "matchFields");
  const bool has_exprs =
      exprs != nullptr && exprs->IsArray() && !exprs->Empty();
  const bool has_fields =
      fields != nullptr && fields->IsArray() && !fields->Empty();
  if (!has_exprs && !has_fields) return false;
  if (has_exprs) {
    for (const auto& r : exprs->GetArray()) {
      if (!Requirement(r, node.Label(Str(At(&r, "key"))))) return false;
    }
  }
  if (has_fields) {
    for (const auto& r : fields->GetArray()) {
      if (Str(At(&r, "key")) != "metadata.name") return false;
      if (!Requirement(r, node.name())) return false;
    }
  }
  return true;
}

}  // namespace

bool MatchesNodeAffinity(const api::Object& pod, const api::Object& node) {
  const Value* selector = pod.Find("/spec/nodeSelector");
  if (selector != nullptr && selector->IsObject()) {
    for (const auto& m : selector->GetObject()) {
      if (node.Label(std::string_view(
              m.name.GetString(), m.name.GetStringLength())) != Str(&m.value)) {
        return false;
      }
    }
  }
  const Value* terms = pod.Find(
      "/spec/affinity/nodeAffinity/"
      "requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms");
  if (terms != nullptr && terms->IsArray()) {
    for (const auto& t : terms->GetArray()) {
      if (Term(t, node)) return true;
    }
    return false;
  }
  return true;
}

const Value* UntoleratedTaint(const api::Object& pod, const api::Object& node,
                              bool no_execute_only) {
  const Value* taints = node.Find("/spec/taints");
  if (taints == nullptr || !taints->IsArray()) return nullptr;
  for (const auto& taint : taints->GetArray()) {
    if (!taint.IsObject()) continue;
    const std::string_view effect = Str(At(&taint, "effect"));
    if (effect != "NoExecute" && (no_execute_only || effect != "NoSchedule")) {
      continue;
    }
    if (!Tolerated(pod, taint)) return &taint;
  }
  return nullptr;
}

namespace {

// The reasons `node` refuses `pod`, as kube-scheduler's first failing
// filter words them; empty when it fits.
std::vector<std::string> Refusals(const api::Object& pod,
                                  const api::Object& node,
                                  const Resources& used, bool* resources) {
  *resources = false;
  const Value* unschedulable = node.Find("/spec/unschedulable");
  if (unschedulable != nullptr && unschedulable->IsBool() &&
      unschedulable->GetBool()) {
    rapidjson::Document taint;
    taint.Parse(R"({"key":"node.kubernetes.io/unschedulable",)"
                R"("effect":"NoSchedule"})");
    if (!Tolerated(pod, taint)) return {"node(s) were unschedulable"};
  }
  if (!MatchesNodeAffinity(pod, node)) {
    return {"node(s) didn't match Pod's node affinity/selector"};
  }
  if (const Value* taint = UntoleratedTaint(pod, node, false);
      taint != nullptr) {
    const std::string_view value = Str(At(taint, "value"));
    return {Cat("node(s) had untolerated taint {", Str(At(taint, "key")),
                value.empty() ? "" : ": ", value, "}")};
  }
  const Resources want = PodRequests(pod);
  const Resources have = NodeAllocatable(node);
  std::vector<std::string> out;
  if (used.pods + 1 > have.pods) out.push_back("Too many pods");
  if (want.cpu_milli > 0 && used.cpu_milli + want.cpu_milli > have.cpu_milli) {
    out.push_back("Insufficient cpu");
  }
  if (want.memory > 0 && used.memory + want.memory > have.memory) {
    out.push_back("Insufficient memory");
  }
  *resources = !out.empty();
  return out;
}

// Sum of a container list's requests (limits standing in).
Resources Containers(const Value* list, bool max_of_each) {
  Resources out;
  if (list == nullptr || !list->IsArray()) return out;
  for (const auto& c : list->GetArray()) {
    Resources r;
    const Value* resources = At(&c, "resources");
    for (const char* kind : {"requests", "limits"}) {
      const Value* m = At(resources, kind);
      if (r.cpu_milli == 0) {
        r.cpu_milli = ParseQuantity(Str(At(m, "cpu")), true).value_or(0);
      }
      if (r.memory == 0) {
        r.memory = ParseQuantity(Str(At(m, "memory")), false).value_or(0);
      }
    }
    if (max_of_each) {
      out.cpu_milli = std::max(out.cpu_milli, r.cpu_milli);
      out.memory = std::max(out.memory, r.memory);
    } else {
      out += r;
    }
  }
  return out;
}

}  // namespace

std::optional<int64_t> ParseQuantity(std::string_view q, bool milli) {
  if (q.empty()) return std::nullopt;
  // The number, then the suffix.
  size_t i = 0;
  if (q[i] == '+' || q[i] == '-') ++i;
  while (i < q.size() && ((q[i] >= '0' && q[i] <= '9') || q[i] == '.')) ++i;
  std::string_view number = q.substr(0, i);
  std::string_view suffix = q.substr(i);
  long double exponent_scale = 1;
  if (!suffix.empty() && (suffix[0] == 'e' || suffix[0] == 'E') &&
      suffix.size() > 1) {
    int exp = 0;
    if (!absl::SimpleAtoi(ToAbsl(suffix.substr(1)), &exp) || exp > 30 ||
        exp < -30) {
      return std::nullopt;
    }
    exponent_scale = std::pow(10.0L, exp);
    suffix = {};
  }
  double value = 0;
  if (number.empty() || !absl::SimpleAtod(ToAbsl(number), &value))
    return std::nullopt;
  static const std::map<std::string_view, long double> kSuffixes = {
      {"", 1},
      {"n", 1e-9},
      {"u", 1e-6},
      {"m", 1e-3},
      {"k", 1e3},
      {"M", 1e6},
      {"G", 1e9},
      {"T", 1e12},
      {"P", 1e15},
      {"E", 1e18},
      {"Ki", 1024.0L},
      {"Mi", 1048576.0L},
      {"Gi", 1073741824.0L},
      {"Ti", 1099511627776.0L},
      {"Pi", 1125899906842624.0L},
      {"Ei", 1152921504606846976.0L}};
  auto it = kSuffixes.find(suffix);
  if (it == kSuffixes.end()) return std::nullopt;
  long double units = static_cast<long double>(value) * it->second *
                      exponent_scale * (milli ? 1000.0L : 1.0L);
  units = std::ceil(units - 1e-9L);
  if (units >= static_cast<long double>(std::numeric_limits<int64_t>::max())) {
    return std::numeric_limits<int64_t>::max();
  }
  if (units < 0) return std::nullopt;
  return static_cast<int64_t>(units);
}

Resources PodRequests(const api::Object& pod) {
  const Value* spec = pod.Find("/spec");
  Resources sum = Containers(At(spec, "containers"), false);
  const Resources init = Containers(At(spec, "initContainers"), true);
  sum.cpu_milli = std::max(sum.cpu_milli, init.cpu_milli);
  sum.memory = std::max(sum.memory, init.memory);
  sum.pods = 1;
  return sum;
}

Resources NodeAllocatable(const api::Object& node) {
  const Value* m = node.Find("/status/allocatable");
  if (m == nullptr || !m->IsObject()) m = node.Find("/status/capacity");
  Resources r;
  r.cpu_milli = ParseQuantity(Str(At(m, "cpu")), true).value_or(0);
  r.memory = ParseQuantity(Str(At(m, "memory")), false).value_or(0);
  r.pods = ParseQuantity(Str(At(m, "pods")), false).value_or(0);
  return r;
}

Placement Schedule(const api::Object& pod,
                   const std::vector<api::ObjectPtr>& nodes,
                   const std::function<Resources(std::string_view)>& used) {
  Placement out;
  std::map<std::string, int> reasons;
  int for_resources = 0;
  double best_score = 0;
  int64_t best_pods = 0;
  for (const api::ObjectPtr& node : nodes) {
    if (node->being_deleted()) continue;
    const Resources u = used(node->name());
    bool resources = false;
    std::vector<std::string> refused = Refusals(pod, *node, u, &resources);
    if (!refused.empty()) {
      for (std::string& r : refused) ++reasons[std::move(r)];
      if (resources) ++for_resources;
      continue;
    }
    const Resources have = NodeAllocatable(*node);
    const Resources want = PodRequests(pod);
    auto share = [](int64_t used, int64_t want, int64_t have) {
      return have <= 0
                 ? 0.0
                 : static_cast<double>(used + want) / static_cast<double>(have);
    };
    const double score = (share(u.cpu_milli, want.cpu_milli, have.cpu_milli) +
                          share(u.memory, want.memory, have.memory)) /
                         2;
    const std::string_view name = node->name();
    if (out.node.empty() || score < best_score ||
        (score == best_score &&
         (u.pods < best_pods || (u.pods == best_pods && name < out.node)))) {
      out.node = std::string(name);
      best_score = score;
      best_pods = u.pods;
    }
  }
  if (!out.node.empty()) return out;
  int n = 0;
  for (const api::ObjectPtr& node : nodes) {
    if (!node->being_deleted()) ++n;
  }
  if (n == 0) {
    out.message = "no nodes available to schedule pods";
    return out;
  }
  std::string why;
  for (const auto& [reason, count] : reasons) {
    CatAppend(&why, why.empty() ? "" : ", ", count, " ", reason);
  }
  std::string preemption;
  if (for_resources > 0) {
    CatAppend(&preemption, for_resources,
              " No preemption victims found for incoming pod.");
  }
  if (n - for_resources > 0) {
    CatAppend(&preemption, preemption.empty() ? "" : ", ", n - for_resources,
              " Preemption is not helpful for scheduling.");
  }
  out.message = Cat("0/", n, " nodes are available: ", why, ". preemption: 0/",
                    n, " nodes are available: ", preemption);
  return out;
}

}  // namespace apiserver
}  // namespace kcr
