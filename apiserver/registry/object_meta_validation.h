// ObjectMeta validation as kube-apiserver does it for names and labels
// (k8s.io/apimachinery/pkg/api/validation and util/validation): the name
// rules kinds choose from, and the label checks every object gets.
#ifndef KCR_APISERVER_REGISTRY_OBJECT_META_VALIDATION_H_
#define KCR_APISERVER_REGISTRY_OBJECT_META_VALIDATION_H_

#include <string_view>
#include <vector>

#include "api/errors/errors.h"
#include "api/object.h"
#include "api/object_builder.h"

namespace kcr {
namespace apiserver {

// metadata.name as a lowercase RFC 1123 subdomain (most kinds).
void ValidateSubdomainName(std::string_view name,
                           std::vector<api::FieldError>* errors);
// metadata.name as a lowercase RFC 1123 label (namespaces).
void ValidateDns1123LabelName(std::string_view name,
                              std::vector<api::FieldError>* errors);
// metadata.name as a DNS-1035 label (services).
void ValidateDns1035LabelName(std::string_view name,
                              std::vector<api::FieldError>* errors);

// metadata.labels: every key a qualified name, every value a label value.
void ValidateLabels(const api::ObjectBuilder& object,
                    std::vector<api::FieldError>* errors);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_OBJECT_META_VALIDATION_H_
