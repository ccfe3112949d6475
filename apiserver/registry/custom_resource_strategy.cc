#include "apiserver/registry/custom_resource_strategy.h"

#include <vector>

#include "api/object_builder.h"

namespace kcr {
namespace apiserver {
namespace {

class CustomResourceStrategyImpl : public Strategy {
 public:
  void PrepareForCreate(const ResourceInfo& r, api::ObjectBuilder* b,
                        const std::string&) const override {
    if (r.has_status()) b->Remove("/status");
  }
  void Validate(const ResourceInfo& r, api::ObjectBuilder* b,
                std::vector<api::FieldError>* errors) const override {
    Admit(r, b, errors);
  }
  void ValidateUpdate(const ResourceInfo& r, const rapidjson::Value&,
                      api::ObjectBuilder* b, const std::string&,
                      std::vector<api::FieldError>* errors) const override {
    Admit(r, b, errors);
  }

 private:
  static void Admit(const ResourceInfo& r, api::ObjectBuilder* b,
                    std::vector<api::FieldError>* errors) {
    if (r.schema == nullptr) return;
    std::vector<api::FieldError> schema_errors =
        r.schema->Admit(&b->json(), b->allocator());
    errors->insert(errors->end(), schema_errors.begin(), schema_errors.end());
  }
};

}  // namespace

const Strategy& CustomResourceStrategy() {
  static const Strategy* const s = new CustomResourceStrategyImpl();
  return *s;
}

}  // namespace apiserver
}  // namespace kcr
