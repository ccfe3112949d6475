// The hashes kube's controllers name their objects by: a pod template's
// pod-template-hash (Deployments' ReplicaSets, DaemonSets' revisions) and a
// ControllerRevision's hash, each a 32-bit FNV-1a of a canonical JSON text
// written as rand.SafeEncodeString writes it (digits mapped to consonants
// and digits, so that a hash never spells a word).
//
// Stateless functions; thread-safe.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_TEMPLATE_HASH_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_TEMPLATE_HASH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

// Appends `v` as compact JSON with every object's keys sorted, so that two
// equal values hash alike whatever order their members came in.
void AppendCanonicalJson(const rapidjson::Value& v, std::string* out);

// The FNV-1a 32-bit hash of `text` followed by the decimal
// `collision_count` when given, safe-encoded.
std::string SafeEncodedHash(std::string_view text,
                            std::optional<int64_t> collision_count);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_TEMPLATE_HASH_H_
