#include "apiserver/registry/builtin_conversion.h"

#include <initializer_list>
#include <string>
#include <utility>

#include "api/json/json_util.h"
#include "api/meta/group_version.h"
#include "rapidjson/document.h"
#include "rapidjson/pointer.h"

namespace kcr {
namespace apiserver {
namespace {

using rapidjson::Value;

constexpr char kMetricsAnnotation[] =
    "/metadata/annotations/autoscaling.alpha.kubernetes.io~1metrics";
constexpr char kBehaviorAnnotation[] =
    "/metadata/annotations/autoscaling.alpha.kubernetes.io~1behavior";
constexpr char kConditionsAnnotation[] =
    "/metadata/annotations/autoscaling.alpha.kubernetes.io~1conditions";
constexpr char kCurrentMetricsAnnotation[] =
    "/metadata/annotations/autoscaling.alpha.kubernetes.io~1current-metrics";

bool IsCpu(const Value& metric, const char* value_key) {
  if (!metric.IsObject()) return false;
  const Value* type = rapidjson::Pointer("/type").Get(metric);
  const Value* name = rapidjson::Pointer("/resource/name").Get(metric);
  return type != nullptr && type->IsString() &&
         std::string_view(type->GetString()) == "Resource" && name != nullptr &&
         name->IsString() && std::string_view(name->GetString()) == "cpu" &&
         rapidjson::Pointer(value_key).Get(metric) != nullptr;
}

// Moves the CPU utilization entry of the list at `list` to the integer
// `field`, and the rest (if any) as JSON to the annotation `annotation`.
void ListToV1(api::ObjectBuilder* b, const char* list, const char* value_key,
              const char* field, const char* annotation) {
  const Value* items = b->Find(list);
  if (items == nullptr || !items->IsArray()) {
    b->Remove(list);
    return;
  }
  rapidjson::Document rest(rapidjson::kArrayType);
  int64_t cpu = -1;
  for (const Value& m : items->GetArray()) {
    const Value* v = rapidjson::Pointer(value_key).Get(m);
    if (cpu < 0 && IsCpu(m, value_key) && v->IsInt64()) {
      cpu = v->GetInt64();
    } else {
      rest.PushBack(Value(m, rest.GetAllocator()), rest.GetAllocator());
    }
  }
  b->Remove(list);
  if (cpu >= 0) (void)b->SetInt(field, cpu);
  if (!rest.Empty()) {
    auto text = json::JsonToString(rest);
    if (text.ok()) (void)b->SetString(annotation, *text);
  }
}

// The reverse of ListToV1.
void ListToV2(api::ObjectBuilder* b, const char* field, const char* list,
              const char* cpu_json_prefix, const char* annotation) {
  std::string items = "[";
  const Value* cpu = b->Find(field);
  if (cpu != nullptr && cpu->IsInt64()) {
    items += cpu_json_prefix + std::to_string(cpu->GetInt64()) + "}}}";
  }
  const Value* saved = b->Find(annotation);
  if (saved != nullptr && saved->IsString()) {
    rapidjson::Document rest;
    rest.Parse(saved->GetString(), saved->GetStringLength());
    if (!rest.HasParseError() && rest.IsArray()) {
      for (const Value& m : rest.GetArray()) {
        auto text = json::JsonToString(m);
        if (!text.ok()) continue;
        if (items.size() > 1) items += ",";
        items += *text;
      }
    }
  }
  items += "]";
  b->Remove(field);
  b->Remove(annotation);
  if (items != "[]") (void)b->SetJson(list, items);
}

// An annotation holding JSON back to the member it came from.
void AnnotationToMember(api::ObjectBuilder* b, const char* annotation,
                        const char* member) {
  const Value* saved = b->Find(annotation);
  if (saved != nullptr && saved->IsString()) {
    (void)b->SetJson(member,
                     std::string(saved->GetString(), saved->GetStringLength()));
  }
  b->Remove(annotation);
}

void MemberToAnnotation(api::ObjectBuilder* b, const char* member,
                        const char* annotation) {
  const Value* v = b->Find(member);
  if (v != nullptr && !v->IsNull()) {
    auto text = json::JsonToString(*v);
    if (text.ok()) (void)b->SetString(annotation, *text);
  }
  b->Remove(member);
}

void RemoveEmptyAnnotations(api::ObjectBuilder* b) {
  const Value* a = b->Find("/metadata/annotations");
  if (a != nullptr && a->IsObject() && a->MemberCount() == 0) {
    b->Remove("/metadata/annotations");
  }
}

void HpaToV1(api::ObjectBuilder* b) {
  if (b->Find("/spec") != nullptr) {
    ListToV1(b, "/spec/metrics", "/resource/target/averageUtilization",
             "/spec/targetCPUUtilizationPercentage", kMetricsAnnotation);
    MemberToAnnotation(b, "/spec/behavior", kBehaviorAnnotation);
  }
  if (b->Find("/status") != nullptr) {
    ListToV1(
        b, "/status/currentMetrics", "/resource/current/averageUtilization",
        "/status/currentCPUUtilizationPercentage", kCurrentMetricsAnnotation);
    MemberToAnnotation(b, "/status/conditions", kConditionsAnnotation);
    if (b->Find("/status/currentReplicas") == nullptr) {
      (void)b->SetInt("/status/currentReplicas", 0);
    }
  }
}

void HpaToV2(api::ObjectBuilder* b) {
  if (b->Find("/spec") != nullptr) {
    ListToV2(b, "/spec/targetCPUUtilizationPercentage", "/spec/metrics",
             R"({"type":"Resource","resource":{"name":"cpu",)"
             R"("target":{"type":"Utilization","averageUtilization":)",
             kMetricsAnnotation);
    AnnotationToMember(b, kBehaviorAnnotation, "/spec/behavior");
  } else {
    b->Remove(kMetricsAnnotation);
    b->Remove(kBehaviorAnnotation);
  }
  if (b->Find("/status") != nullptr) {
    ListToV2(b, "/status/currentCPUUtilizationPercentage",
             "/status/currentMetrics",
             R"({"type":"Resource","resource":{"name":"cpu",)"
             R"("current":{"averageUtilization":)",
             kCurrentMetricsAnnotation);
    AnnotationToMember(b, kConditionsAnnotation, "/status/conditions");
  } else {
    b->Remove(kCurrentMetricsAnnotation);
    b->Remove(kConditionsAnnotation);
  }
}

// Renames members of `b` from the first of each pair to the second (or
// back).
void Rename(api::ObjectBuilder* b,
            std::initializer_list<std::pair<const char*, const char*>> names,
            bool reverse) {
  Value& o = b->json();
  if (!o.IsObject()) return;
  for (const auto& [core, events] : names) {
    const char* from = reverse ? events : core;
    const char* to = reverse ? core : events;
    auto it = o.FindMember(from);
    if (it == o.MemberEnd()) continue;
    Value v(std::move(it->value));
    o.RemoveMember(it);
    o.RemoveMember(to);
    o.AddMember(Value(to, b->allocator()), std::move(v), b->allocator());
  }
}

// core/v1 Event member, events.k8s.io/v1 Event member.
constexpr std::initializer_list<std::pair<const char*, const char*>>
    kEventNames = {{"involvedObject", "regarding"},
                   {"message", "note"},
                   {"source", "deprecatedSource"},
                   {"firstTimestamp", "deprecatedFirstTimestamp"},
                   {"lastTimestamp", "deprecatedLastTimestamp"},
                   {"count", "deprecatedCount"},
                   {"reportingComponent", "reportingController"}};

bool IsHpa(const ResourceInfo& r) {
  return r.group() == "autoscaling" &&
         r.resource() == "horizontalpodautoscalers";
}

bool IsEvents(const ResourceInfo& r) {
  return r.stored_in_core_group && r.resource() == "events";
}

}  // namespace

bool ConvertsBuiltin(const ResourceInfo& r) {
  return !r.custom &&
         (r.stored_in_core_group || r.version() != r.storage_version);
}

void ConvertBuiltinToStorage(const ResourceInfo& r, api::ObjectBuilder* b) {
  if (IsHpa(r) && r.version() == "v1" && r.storage_version == "v2") {
    HpaToV2(b);
    RemoveEmptyAnnotations(b);
  } else if (IsEvents(r)) {
    Rename(b, kEventNames, /*reverse=*/true);
  }
  b->SetApiVersion(r.storage_api_version());
}

void ConvertBuiltinFromStorage(const ResourceInfo& r, api::ObjectBuilder* b) {
  if (IsHpa(r) && r.version() == "v1" && r.storage_version == "v2") {
    HpaToV1(b);
    RemoveEmptyAnnotations(b);
  } else if (IsEvents(r)) {
    Rename(b, kEventNames, /*reverse=*/false);
  }
  b->SetApiVersion(r.api_version());
}

}  // namespace apiserver
}  // namespace kcr
