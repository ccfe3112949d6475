// FieldError: one validation failure at one field, rendered the way
// apimachinery's field.Error is (`spec.replicas: Required value`,
// `spec.port: Invalid value: 0: spec.port in body should be greater than or
// equal to 1`), so messages read exactly like kube-apiserver's.
#ifndef KCR_API_SCHEMA_FIELD_ERROR_H_
#define KCR_API_SCHEMA_FIELD_ERROR_H_

#include <string>
#include <vector>

namespace kcr {
namespace api {

struct FieldError {
  enum class Type {
    kRequired,      // "Required value"
    kInvalid,       // "Invalid value: <value>: <detail>"
    kNotSupported,  // "Unsupported value: <value>: supported values: ..."
    kTooMany,       // "Too many: <value>: <detail>"
    kForbidden,     // "Forbidden: <detail>"
    kTooLong,       // "Too long: <detail>"
    kDuplicate,     // "Duplicate value: <value>"
  };

  Type type = Type::kInvalid;
  // Dotted path with [i] for list items: "spec.test.servicePort",
  // "status.children[2]". Empty for the object root.
  std::string field;
  // The offending value as Go's %#v would print it: JSON text for strings
  // and numbers ("\"x\"", -1), or a type name in quotes for type errors.
  std::string value;
  std::string detail;

  // "<field>: <body>" as field.Error.Error() renders it.
  std::string ToString() const;

  friend bool operator==(const FieldError& a, const FieldError& b) {
    return a.type == b.type && a.field == b.field && a.value == b.value &&
           a.detail == b.detail;
  }
};

// ToString of each error, in order.
std::vector<std::string> ToStrings(const std::vector<FieldError>& errors);

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_SCHEMA_FIELD_ERROR_H_
