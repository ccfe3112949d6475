// What Registry's read and write paths (registry*.cc) share: the kind's
// Strategy, the checks every write of a body makes, the dry-run-aware
// storage write, and the decoding of built-in kinds' bodies.
//
// Internal to Registry (registry.h).
#ifndef KCR_APISERVER_REGISTRY_REGISTRY_INTERNAL_H_
#define KCR_APISERVER_REGISTRY_REGISTRY_INTERNAL_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/object_builder.h"
#include "api/schema/field_error.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/resources.h"
#include "apiserver/registry/strategy.h"
#include "apiserver/storage/storage.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

// Who makes a write, for metadata.managedFields.
struct WriteManager {
  std::string field_manager;
  std::string user_agent;
  std::string subresource;
  // An apply: managedFields come with the applied object.
  bool apply = false;
};

namespace registry_internal {

// The strategy of `r`'s kind; never null.
const Strategy& StrategyFor(const ResourceInfo& r);

// ObjectMeta validation: the kind's name rule and the labels.
void ValidateMeta(const Strategy& strategy, const api::ObjectBuilder& b,
                  std::vector<api::FieldError>* errors);

// 400 unless the body's apiVersion (when set) is the resource's or
// `also_accepted`, and its kind (when set) the resource's.
absl::Status CheckTypeMeta(const ResourceInfo& r, const api::ObjectBuilder& b,
                           std::string_view also_accepted);

// A namespaced object takes the request's namespace; 400 if it names
// another.
absl::Status SetRequestNamespace(std::string_view ns, api::ObjectBuilder* b);

// 400: the body names another object than the URL.
absl::Status NameMismatch(std::string_view body_name,
                          std::string_view url_name);

// Whether `r` is the core group's services (cluster IPs, node ports).
bool IsCoreServices(const ResourceInfo& r);

// Runs a write for real, or (dry run) computes it without storing.
absl::StatusOr<Storage::WriteResult> RunWrite(
    Storage* storage, const std::string& collection, std::string_view ns,
    std::string_view name, bool dry_run, const Storage::UpdateFunc& fn,
    const Storage::Precondition* precondition = nullptr);

// A patched built-in object decodes as the kind's Go type: a type error is
// kube-apiserver's 422 on the field "patch"; unknown fields are dropped.
absl::Status DecodePatched(const ResourceInfo& r, rapidjson::Value* patched);

// Drops what decoding a built-in kind's body into its Go type drops.
void DropBuiltinUnknownFields(const ResourceInfo& r, api::ObjectBuilder* b);

}  // namespace registry_internal
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_REGISTRY_INTERNAL_H_
