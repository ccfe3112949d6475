// Registry (registry.h): Update and UpdateScale, and UpdateLocked, which
// every write of an existing object ends in: optimistic concurrency, what
// the main resource and the status and finalize subresources may change,
// finalizers of an object being deleted, generation, managedFields, and
// the writes that change nothing.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "api/errors/errors.h"
#include "api/json/json_util.h"
#include "api/object_builder.h"
#include "api/patch/json_patch.h"
#include "apiserver/internal/object_fields.h"
#include "apiserver/internal/write_context.h"
#include "apiserver/registry/builtin_conversion.h"
#include "apiserver/registry/core_strategy.h"
#include "apiserver/registry/managed_fields.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/registry_internal.h"
#include "apiserver/registry/scale.h"
#include "base/status_macros.h"
#include "base/str_cat.h"
#include "base/string_view.h"

namespace kcr {
namespace apiserver {
namespace {

using Mutation = Storage::Mutation;
using api::FieldError;
using rapidjson::Value;
using registry_internal::CheckTypeMeta;
using registry_internal::DropBuiltinUnknownFields;
using registry_internal::IsCoreServices;
using registry_internal::NameMismatch;
using registry_internal::RunWrite;
using registry_internal::SetRequestNamespace;
using registry_internal::StrategyFor;
using registry_internal::ValidateMeta;

bool EqualMember(const Value& a, const Value& b, const char* key) {
  const Value* x = Member(a, key);
  const Value* y = Member(b, key);
  if (x == nullptr || y == nullptr) return x == y;
  return json::JsonDeepEqual(*x, *y);
}

// Whether two managedFields lists differ at most in their entries' `time`.
bool SameManagedFieldsButTimes(const Value& a, const Value& b) {
  if (!a.IsArray() || !b.IsArray() || a.Size() != b.Size()) return false;
  for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
    const Value& x = a[i];
    const Value& y = b[i];
    if (!x.IsObject() || !y.IsObject()) return false;
    size_t counted = 0;
    for (const auto& m : x.GetObject()) {
      if (std::string_view(m.name.GetString()) == "time") continue;
      ++counted;
      const Value* other = Member(y, m.name.GetString());
      if (other == nullptr || !json::JsonDeepEqual(m.value, *other))
        return false;
    }
    const size_t y_count = y.MemberCount() - (Member(y, "time") != nullptr);
    if (counted != y_count) return false;
  }
  return true;
}

// Whether the change from `old` to `cur` bumps metadata.generation.
bool GenerationChanged(GenerationPolicy policy, bool has_status,
                       const Value& old, const Value& cur) {
  switch (policy) {
    case GenerationPolicy::kNone:
      return false;
    case GenerationPolicy::kSpec:
      return !EqualMember(old, cur, "spec");
    case GenerationPolicy::kSpecAndAnnotations: {
      if (!EqualMember(old, cur, "spec")) return true;
      const Value* om = Member(old, "metadata");
      const Value* cm = Member(cur, "metadata");
      if (om == nullptr || cm == nullptr) return om != cm;
      return !EqualMember(*om, *cm, "annotations");
    }
    case GenerationPolicy::kAllButMetadata: {
      // With a status subresource, status is not part of the spec.
      auto ignored = [has_status](std::string_view k) {
        return k == "metadata" || k == "apiVersion" || k == "kind" ||
               (has_status && k == "status");
      };
      auto count = [&](const Value& v) {
        size_t n = 0;
        for (const auto& m : v.GetObject()) {
          if (!ignored(std::string_view(m.name.GetString(),
                                        m.name.GetStringLength()))) {
            ++n;
          }
        }
        return n;
      };
      if (count(old) != count(cur)) return true;
      for (const auto& m : cur.GetObject()) {
        std::string_view k(m.name.GetString(), m.name.GetStringLength());
        if (ignored(k)) continue;
        const Value* o = Member(old, m.name.GetString());
        if (o == nullptr || !json::JsonDeepEqual(*o, m.value)) return true;
      }
      return false;
    }
  }
  return false;
}

// Copies member `key` of `from` (or removes it from `to` when absent).
void CopyMember(const Value& from, const char* key, api::ObjectBuilder* to) {
  const Value* v = Member(from, key);
  // An update nearly always sends the status it read: comparing costs
  // less than a copy, and no allocation.
  const Value* has = Member(to->json(), key);
  if (v != nullptr && has != nullptr && json::JsonDeepEqual(*v, *has)) return;
  std::string pointer = Cat("/", key);
  if (v == nullptr) {
    to->Remove(pointer);
  } else {
    (void)to->Set(pointer, *v);
  }
}

void CopyMetadataMember(const Value& from_root, const char* key,
                        api::ObjectBuilder* to) {
  const Value* md = Member(from_root, "metadata");
  const Value* v = md == nullptr ? nullptr : Member(*md, key);
  // Most writes send these as stored: nothing to copy.
  const Value* to_md = Member(to->json(), "metadata");
  const Value* has = to_md == nullptr ? nullptr : Member(*to_md, key);
  if (v == nullptr ? has == nullptr
                   : has != nullptr && json::JsonDeepEqual(*v, *has)) {
    return;
  }
  std::string pointer = Cat("/metadata/", key);
  if (v == nullptr) {
    to->Remove(pointer);
  } else {
    (void)to->Set(pointer, *v);
  }
}

}  // namespace

absl::StatusOr<Mutation> Registry::UpdateLocked(
    const ResourceInfo& r, const api::ObjectPtr& current, api::ObjectBuilder b,
    const std::string& sub_in, bool is_patch,
    const WriteManager* manager) const {
  // A CertificateSigningRequest's approval is a write to its status
  // (conditions), as kube's approval strategy keeps the rest.
  const std::string sub = sub_in == "approval" ? "status" : sub_in;
  std::string name = StringAt(b, "/metadata/name");
  rapidjson::Document applied_fields;
  if (manager != nullptr && manager->apply) {
    const Value* mf = b.Find("/metadata/managedFields");
    if (mf != nullptr)
      applied_fields.CopyFrom(*mf, applied_fields.GetAllocator());
  }
  if (current == nullptr) {
    return api::StatusError::NotFound(r.group_resource(), name).ToStatus();
  }
  const Value& cur = current->json();
  const Strategy& strategy = StrategyFor(r);
  // Type meta: any served version of the resource is accepted.
  KCR_RETURN_IF_ERROR(CheckTypeMeta(r, b, current->api_version()));
  if (ConvertsBuiltin(r) &&
      StringAt(b, "/apiVersion") != current->api_version()) {
    ConvertBuiltinToStorage(r, &b);
  }
  // Optimistic concurrency.
  std::string rv = StringAt(b, "/metadata/resourceVersion");
  if (rv.empty() || rv == "0") {
    if (!r.allow_unconditional_update && !is_patch) {
      return api::StatusError::Invalid(
                 r.group_kind(), name,
                 {FieldErr(FieldError::Type::kInvalid,
                           "metadata.resourceVersion", "0x0",
                           "must be specified for an update")})
          .ToStatus();
    }
  } else if (rv != current->resource_version()) {
    return api::StatusError::StaleConflict(r.group_resource(), name).ToStatus();
  }

  api::ObjectBuilder out;
  if (sub == "status") {
    // The stored object with the sent status, each copied once (not the
    // stored status too, only to be replaced).
    absl::StatusOr<api::ObjectBuilder> replaced =
        api::ObjectBuilder::ReplacingMember(*current, "status",
                                            Member(b.json(), "status"));
    if (!replaced.ok()) {
      return api::StatusError::BadRequest(ToStd(replaced.status().message()))
          .ToStatus();
    }
    out = std::move(*replaced);
    strategy.PrepareForStatusUpdate(b.json(), &out);
  } else if (sub == "finalize") {
    out = current->ToBuilder();
    const Value* f = b.Find("/spec/finalizers");
    if (f == nullptr) {
      out.Remove("/spec/finalizers");
    } else {
      (void)out.Set("/spec/finalizers", *f);
    }
  } else {
    out = std::move(b);
    if (r.has_status()) CopyMember(cur, "status", &out);
    strategy.PrepareForUpdate(cur, &out);
  }
  // Fields no update may change. A status or finalize write starts from
  // the stored object, which has them already.
  if (sub != "status" && sub != "finalize") {
    out.SetApiVersion(current->api_version());
    out.SetKind(current->kind());
    for (const char* key :
         {"name", "namespace", "uid", "creationTimestamp", "deletionTimestamp",
          "deletionGracePeriodSeconds", "generation"}) {
      CopyMetadataMember(cur, key, &out);
    }
  }
  out.Remove("/metadata/selfLink");
  strategy.Default(&out);
  DropEmptyMaps(r, &out);

  std::vector<FieldError> errors;
  if (current->being_deleted()) {
    std::vector<std::string> old_f,
        new_f = StringsAt(out, "/metadata/finalizers");
    for (auto f : current->finalizers()) old_f.emplace_back(f);
    std::vector<std::string> added;
    for (const std::string& f : new_f) {
      if (std::find(old_f.begin(), old_f.end(), f) == old_f.end()) {
        added.push_back(Quote(f));
      }
    }
    if (!added.empty()) {
      errors.push_back(
          FieldErr(FieldError::Type::kForbidden, "metadata.finalizers", "",
                   Cat("no new finalizers can be added if the object is "
                       "being deleted, found new finalizers []string{",
                       absl::StrJoin(added, ", "), "}")));
    }
  }
  ValidateMeta(strategy, out, &errors);
  strategy.ValidateUpdate(r, cur, &out, Now(), &errors);
  if (!errors.empty()) {
    return api::StatusError::Invalid(r.group_kind(), name, errors).ToStatus();
  }
  // Status writes never bump the generation (kube's status strategies).
  if (sub != "status" &&
      GenerationChanged(r.generation, r.has_status(), cur, out.json())) {
    out.SetGeneration(current->generation() + 1);
  }
  if (manager != nullptr && manager->apply) {
    out.Remove("/metadata/managedFields");
    if (!applied_fields.IsNull())
      (void)out.Set("/metadata/managedFields", applied_fields);
  } else if (manager != nullptr) {
    KCR_RETURN_IF_ERROR(RecordWriteManagedFields(
        r, &cur, &out.json(), out.allocator(), manager->field_manager,
        manager->user_agent, manager->subresource, options_.clock->Now()));
  }
  // An update that changes nothing is not written (no new resourceVersion).
  out.SetResourceVersion(current->resource_version());
  if (json::JsonDeepEqual(out.json(), cur)) {
    return Mutation::Keep();
  }
  // Nor is one that changes nothing but the managers' timestamps
  // (kube-apiserver's IgnoreManagedFieldsTimestampsTransformer).
  const Value* old_meta = Member(cur, "metadata");
  const Value* old_fields =
      old_meta != nullptr ? Member(*old_meta, "managedFields") : nullptr;
  const Value* new_fields = out.Find("/metadata/managedFields");
  if (old_fields != nullptr && new_fields != nullptr &&
      SameManagedFieldsButTimes(*old_fields, *new_fields)) {
    Value fresh(*new_fields, out.allocator());
    (void)out.Set("/metadata/managedFields", *old_fields);
    if (json::JsonDeepEqual(out.json(), cur)) return Mutation::Keep();
    (void)out.Set("/metadata/managedFields", fresh);
  }
  if (current->being_deleted() &&
      StringsAt(out, "/metadata/finalizers").empty() &&
      !strategy.WaitsForFinalize(out)) {
    return Mutation::Remove();
  }
  if (IsCoreServices(r) && sub.empty()) {
    KCR_RETURN_IF_ERROR(
        service_allocator_->Allocate(r.group_kind(), current.get(), &out)
            .status());
  }
  return Mutation::Put(std::move(out));
}

absl::StatusOr<WriteResult> Registry::Update(const ResourceInfo& r,
                                             std::string_view ns,
                                             std::string_view name,
                                             api::ObjectBuilder object,
                                             const WriteOptions& options) {
  ScopedWriteContext context(
      {.verb = "update", .subresource = options.subresource});
  std::string body_name = StringAt(object, "/metadata/name");
  if (body_name != name) {
    return NameMismatch(body_name, name);
  }
  if (r.namespaced()) KCR_RETURN_IF_ERROR(SetRequestNamespace(ns, &object));
  std::vector<std::string> warnings;
  KCR_RETURN_IF_ERROR(CheckUnknownFields(r, object.json(),
                                         options.field_validation, &warnings));
  DropBuiltinUnknownFields(r, &object);
  std::string obj_ns = r.namespaced() ? std::string(ns) : "";
  // Storage runs the function once: the request moves into it.
  auto result = RunWrite(
      storage_, r.StorageKey(), obj_ns, name, options.dry_run,
      [&](const api::ObjectPtr& cur) -> absl::StatusOr<Mutation> {
        const WriteManager manager{options.field_manager, options.user_agent,
                                   options.subresource, false};
        return UpdateLocked(r, cur, std::move(object), options.subresource,
                            false, &manager);
      });
  if (!result.ok()) return result.status();
  if (!options.dry_run) AfterWrite(r, *result);
  WriteResult out;
  out.warnings = warnings;
  out.object = AtVersion(result->object, r);
  return out;
}

absl::StatusOr<WriteResult> Registry::UpdateScale(const ResourceInfo& r,
                                                  std::string_view ns,
                                                  std::string_view name,
                                                  const rapidjson::Value& scale,
                                                  const WriteOptions& options) {
  ScopedWriteContext context({.verb = "update", .subresource = "scale"});
  if (!r.has_scale()) return api::StatusError::PathNotFound().ToStatus();
  KCR_ASSIGN_OR_RETURN(const int64_t n, ScaleReplicas(scale, name));
  const Value* rv = api::ResolveJsonPointer(scale, "/metadata/resourceVersion");
  std::string want_rv = rv != nullptr && rv->IsString() ? rv->GetString() : "";
  std::string obj_ns = r.namespaced() ? std::string(ns) : "";
  auto result = RunWrite(
      storage_, r.StorageKey(), obj_ns, name, options.dry_run,
      [&](const api::ObjectPtr& cur) -> absl::StatusOr<Mutation> {
        if (cur == nullptr) {
          return api::StatusError::NotFound(r.group_resource(), name)
              .ToStatus();
        }
        if (!want_rv.empty() && want_rv != cur->resource_version()) {
          return api::StatusError::StaleConflict(r.group_resource(), name)
              .ToStatus();
        }
        api::ObjectBuilder b = cur->ToBuilder();
        (void)b.SetInt(r.scale.spec_replicas, n);
        const WriteManager manager{options.field_manager, options.user_agent,
                                   "scale", false};
        return UpdateLocked(r, cur, std::move(b), "", true, &manager);
      });
  if (!result.ok()) return result.status();
  if (!options.dry_run) AfterWrite(r, *result);
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr s, GetScale(r, ns, name));
  return WriteResult{s, false};
}

}  // namespace apiserver
}  // namespace kcr
