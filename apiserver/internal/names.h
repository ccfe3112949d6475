// Names the server makes up: object uids and generateName suffixes
// (k8s.io/apiserver/pkg/storage/names).
#ifndef KCR_APISERVER_INTERNAL_NAMES_H_
#define KCR_APISERVER_INTERNAL_NAMES_H_

#include <string>
#include <string_view>

namespace kcr {
namespace apiserver {

// A random UUID v4, "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx".
std::string NewUid();

// `prefix` (cut to 58 characters) + 5 random characters.
std::string GenerateName(std::string_view prefix);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_INTERNAL_NAMES_H_
