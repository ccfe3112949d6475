#include "apiserver/registry/strategy.h"

#include "apiserver/registry/object_meta_validation.h"

namespace kcr {
namespace apiserver {

void Strategy::ValidateName(std::string_view name,
                            std::vector<api::FieldError>* errors) const {
  ValidateSubdomainName(name, errors);
}

const Strategy& DefaultStrategy() {
  static const Strategy* const strategy = new Strategy();
  return *strategy;
}

}  // namespace apiserver
}  // namespace kcr
