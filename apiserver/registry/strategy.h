// Strategy: what one kind adds to the generic store (registry.h) on create,
// update and delete — kube-apiserver's RESTCreateStrategy and
// RESTUpdateStrategy (pkg/registry/<group>/<kind>/strategy.go) together with
// the kind's decoding defaults (SetDefaults_<Kind>).
//
// The store does everything kinds share (type and object meta, optimistic
// concurrency, status and immutable fields, generation, finalizers) and
// calls the strategy at fixed points:
//   create  Default, PrepareForCreate, Validate; ValidateName when the
//           name is final; NameGenerated for a generateName.
//   update  PrepareForUpdate (writes to the main resource only) or
//           PrepareForStatusUpdate (to status), Default, ValidateName,
//           ValidateUpdate.
//   delete  WaitsForFinalize, PrepareForDelete.
// Strategies keep no state; one instance per kind serves every thread.
#ifndef KCR_APISERVER_REGISTRY_STRATEGY_H_
#define KCR_APISERVER_REGISTRY_STRATEGY_H_

#include <string>
#include <string_view>
#include <vector>

#include "api/errors/errors.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "apiserver/registry/resources.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

class Strategy {
 public:
  virtual ~Strategy() = default;

  // The defaults kube-apiserver applies when it decodes the kind (the ones
  // kubectl and controllers rely on); run on every create and update.
  virtual void Default(api::ObjectBuilder* object) const {}

  // What a new object starts with (status, finalizers), once the store has
  // filled its metadata. `now` is an RFC 3339 timestamp.
  virtual void PrepareForCreate(const ResourceInfo& resource,
                                api::ObjectBuilder* object,
                                const std::string& now) const {}

  // A generated name was set on a new object.
  virtual void NameGenerated(std::string_view name,
                             api::ObjectBuilder* object) const {}

  // A write to the main resource: copies from `live` what it may not change
  // besides status (which the store keeps when the kind has a status
  // subresource).
  virtual void PrepareForUpdate(const rapidjson::Value& live,
                                api::ObjectBuilder* object) const {}

  // A write to the status subresource: `out` is the live object with the
  // sent status; copies what else the kind lets a status write change
  // (`sent` is the request's object).
  virtual void PrepareForStatusUpdate(const rapidjson::Value& sent,
                                      api::ObjectBuilder* out) const {}

  // The rule for metadata.name (an RFC 1123 subdomain unless overridden).
  virtual void ValidateName(std::string_view name,
                            std::vector<api::FieldError>* errors) const;

  // Validates a new object; may complete it (schema defaults, pruning).
  virtual void Validate(const ResourceInfo& resource,
                        api::ObjectBuilder* object,
                        std::vector<api::FieldError>* errors) const {}

  // Validates an update after the store's own checks, which left *errors;
  // may complete the object (schema defaults, a CRD's status).
  virtual void ValidateUpdate(const ResourceInfo& resource,
                              const rapidjson::Value& live,
                              api::ObjectBuilder* object,
                              const std::string& now,
                              std::vector<api::FieldError>* errors) const {}

  // Whether a deleted object waits for more than metadata.finalizers
  // (a namespace's spec.finalizers).
  virtual bool WaitsForFinalize(const api::ObjectBuilder& object) const {
    return false;
  }

  // Marks an object that now waits for its finalizers as terminating.
  virtual void PrepareForDelete(const rapidjson::Value& live,
                                api::ObjectBuilder* object,
                                const std::string& now) const {}
};

// The strategy of the kinds that need nothing of their own.
const Strategy& DefaultStrategy();

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_STRATEGY_H_
