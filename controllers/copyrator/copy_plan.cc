#include "controllers/copyrator/copy_plan.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/object_builder.h"
#include "api/types/namespace.h"
#include "base/status_macros.h"
#include "base/string_view.h"
#include "rapidjson/document.h"

namespace kcr::copyrator {
namespace {

constexpr size_t kMaxLabelValue = 63;

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// The data fields a copy carries, by kind.
std::vector<const char*> DataFields(std::string_view kind) {
  if (kind == kSecretKind) return {"/type", "/data"};
  return {"/data", "/binaryData"};
}

// Absent and {} mean the same for maps; absent and "" for a type.
bool SameField(const rapidjson::Value* a, const rapidjson::Value* b) {
  auto empty = [](const rapidjson::Value* v) {
    return v == nullptr || v->IsNull() ||
           (v->IsObject() && v->MemberCount() == 0) ||
           (v->IsString() && v->GetStringLength() == 0);
  };
  if (empty(a) || empty(b)) return empty(a) && empty(b);
  return *a == *b;
}

bool Active(const api::ObjectPtr& ns) {
  absl::StatusOr<api::NamespaceView> view = api::NamespaceView::Create(ns);
  return view.ok() && view->active() && !view->terminating();
}

}  // namespace

std::string LabelValue(std::string_view ns, std::string_view name) {
  std::string value = absl::StrCat(ToAbsl(ns), ".", ToAbsl(name));
  if (value.size() <= kMaxLabelValue) return value;
  return absl::StrFormat("%s-%016x", value.substr(0, kMaxLabelValue - 17),
                         Fnv1a(value));
}

std::string RefOf(const api::Object& object) {
  return absl::StrCat(ToAbsl(object.namespace_()), "/", ToAbsl(object.name()));
}

bool IsCopy(const api::Object& object) {
  return object.Annotation(kRuleAnnotation).has_value();
}

absl::StatusOr<api::ObjectPtr> DesiredCopy(std::string_view rule,
                                           const api::Object& source,
                                           std::string_view ns) {
  const std::string_view kind = source.kind() == kSecretKind
                                    ? std::string_view(kSecretKind)
                                    : std::string_view(kConfigMapKind);
  api::ObjectBuilder copy("v1", kind);
  copy.SetNamespace(ns).SetName(source.name());
  std::map<std::string, std::string> labels = source.labels().ToMap();
  const size_t slash = rule.find('/');
  labels[kRuleLabel] =
      LabelValue(rule.substr(0, slash), slash == std::string_view::npos
                                            ? std::string_view()
                                            : rule.substr(slash + 1));
  labels[kSourceLabel] = LabelValue(source.namespace_(), source.name());
  copy.SetLabels(labels);
  copy.SetAnnotation(kRuleAnnotation, rule);
  copy.SetAnnotation(kSourceAnnotation, RefOf(source));
  for (const char* field : DataFields(kind)) {
    const rapidjson::Value* v = source.Find(field);
    if (v != nullptr && !v->IsNull()) KCR_RETURN_IF_ERROR(copy.Set(field, *v));
  }
  return copy.Build();
}

bool InStep(const api::Object& existing, const api::Object& desired) {
  if (existing.labels().ToMap() != desired.labels().ToMap()) return false;
  for (const char* key : {kRuleAnnotation, kSourceAnnotation}) {
    if (existing.Annotation(key) != desired.Annotation(key)) return false;
  }
  for (const char* field : DataFields(desired.kind())) {
    if (!SameField(existing.Find(field), desired.Find(field))) return false;
  }
  return true;
}

namespace {

// `existing` (our copy) edited to hold what `desired` holds.
absl::StatusOr<api::ObjectPtr> Updated(const api::Object& existing,
                                       const api::Object& desired) {
  api::ObjectBuilder b = existing.ToBuilder();
  b.SetLabels(desired.labels().ToMap());
  for (const char* key : {kRuleAnnotation, kSourceAnnotation}) {
    b.SetAnnotation(key, *desired.Annotation(key));
  }
  for (const char* field : DataFields(desired.kind())) {
    const rapidjson::Value* v = desired.Find(field);
    if (v == nullptr) {
      b.Remove(field);
    } else {
      KCR_RETURN_IF_ERROR(b.Set(field, *v));
    }
  }
  return b.Build();
}

}  // namespace

absl::StatusOr<CopyPlan> PlanCopies(const PlanInput& in) {
  CopyPlan plan;
  std::vector<std::string> active;
  for (const api::ObjectPtr& ns : in.namespaces) {
    if (Active(ns)) active.emplace_back(ns->name());
  }
  std::sort(active.begin(), active.end());

  // Target "<ns>/<name>" -> the sources that want it, in priority order.
  std::map<std::string, std::vector<const api::Object*>> claims;
  std::map<std::string, std::string> target_ns;
  for (const api::ObjectPtr& source : in.sources) {
    for (const std::string& ns : active) {
      // Never onto itself: a source is copied into the other namespaces.
      if (ns == source->namespace_()) continue;
      std::string target = absl::StrCat(ns, "/", ToAbsl(source->name()));
      claims[target].push_back(source.get());
      target_ns[target] = ns;
    }
  }

  // Kind + target of each wanted copy, to find the copies no longer wanted.
  std::map<std::string, bool> wanted;
  for (const auto& [target, sources] : claims) {
    const std::string& ns = target_ns[target];
    const std::string_view name = sources.front()->name();
    api::ObjectPtr existing = in.existing(ns, name);
    const bool ours =
        existing != nullptr && existing->Annotation(kRuleAnnotation) == in.rule;

    // The source already copied there keeps the target; else the first.
    const api::Object* winner = sources.front();
    if (ours) {
      std::optional<std::string_view> from =
          existing->Annotation(kSourceAnnotation);
      for (const api::Object* s : sources) {
        if (from == RefOf(*s)) winner = s;
      }
    }
    for (const api::Object* s : sources) {
      if (s == winner) continue;
      plan.conflicts.push_back({target, RefOf(*s),
                                absl::StrCat("also claimed by source ",
                                             RefOf(*winner), " of this rule")});
    }

    if (existing != nullptr && !ours) {
      std::optional<std::string_view> other =
          existing->Annotation(kRuleAnnotation);
      plan.conflicts.push_back(
          {target, RefOf(*winner),
           other.has_value()
               ? absl::StrCat("is a copy made by rule ", ToAbsl(*other))
               : std::string("exists and is not a copy")});
      continue;
    }
    wanted[absl::StrCat(in.kind, " ", target)] = true;
    ++plan.wanted;
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr desired,
                         DesiredCopy(in.rule, *winner, ns));
    if (existing == nullptr) {
      plan.create.push_back(std::move(desired));
    } else if (existing->being_deleted()) {
      // Going away; created again once gone (its delete wakes the rule).
    } else if (in.kind == kSecretKind &&
               !SameField(existing->Find("/type"), desired->Find("/type"))) {
      plan.remove.push_back(existing);
    } else if (InStep(*existing, *desired)) {
      ++plan.in_step;
    } else {
      KCR_ASSIGN_OR_RETURN(api::ObjectPtr updated,
                           Updated(*existing, *desired));
      plan.update.push_back(std::move(updated));
    }
  }

  for (const api::ObjectPtr& copy : in.copies) {
    if (copy->Annotation(kRuleAnnotation) != in.rule) continue;
    if (copy->being_deleted()) continue;
    const std::string kind =
        copy->kind() == kSecretKind ? kSecretKind : kConfigMapKind;
    if (!wanted.count(absl::StrCat(kind, " ", RefOf(*copy)))) {
      plan.remove.push_back(copy);
    }
  }
  return plan;
}

}  // namespace kcr::copyrator
