// Continue tokens of chunked lists, as kube-apiserver encodes them
// (k8s.io/apiserver/pkg/storage/continue.go): base64url of
// {"v":"meta.k8s.io/v1","rv":N,"start":"<key>"}, where N is the revision
// the first chunk was read at and <key> the first key of the next chunk.
#ifndef KCR_APISERVER_STORAGE_CONTINUE_TOKEN_H_
#define KCR_APISERVER_STORAGE_CONTINUE_TOKEN_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace kcr {
namespace apiserver {

std::string EncodeContinue(int64_t rv, std::string_view start);

// 400 BadRequest ("invalid continue token: ...") for a token this server
// did not make. The rv -1 of the token an expired one's 410 carries
// (EncodeContinue(-1, key)) is read as 0: the latest revision.
absl::Status DecodeContinue(std::string_view token, int64_t* rv,
                            std::string* start);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_STORAGE_CONTINUE_TOKEN_H_
