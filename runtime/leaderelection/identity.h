// The identity a candidate writes into the lock: unique per process, and
// telling an operator which host holds the lease (client-go's examples and
// controller-runtime use "<hostname>_<uuid>").
#ifndef KCR_RUNTIME_LEADERELECTION_IDENTITY_H_
#define KCR_RUNTIME_LEADERELECTION_IDENTITY_H_

#include <string>

#include "absl/status/statusor.h"

namespace kcr::leaderelection {

// "<hostname>_<random UUID v4>". Internal when the host name cannot be
// read.
absl::StatusOr<std::string> NewIdentity();

// A random UUID v4, "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx" in lower-case
// hex, y one of 8, 9, a, b.
std::string NewUuid();

}  // namespace kcr::leaderelection

#endif  // KCR_RUNTIME_LEADERELECTION_IDENTITY_H_
