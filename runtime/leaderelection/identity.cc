#include "runtime/leaderelection/identity.h"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace kcr::leaderelection {

std::string NewUuid() {
  absl::BitGen gen;
  const uint64_t hi = absl::Uniform<uint64_t>(gen);
  const uint64_t lo = absl::Uniform<uint64_t>(gen);
  // Version 4 in the high nibble of the third group, variant 10xx in the
  // fourth (RFC 4122, section 4.4).
  const uint64_t time_hi = ((hi & 0xfff) | 0x4000);
  const uint64_t clock_seq = (((lo >> 48) & 0x3fff) | 0x8000);
  return absl::StrFormat("%08x-%04x-%04x-%04x-%012x", hi >> 32,
                         (hi >> 16) & 0xffff, time_hi, clock_seq,
                         lo & 0xffffffffffffULL);
}

absl::StatusOr<std::string> NewIdentity() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) {
    return absl::InternalError(
        absl::StrCat("reading the host name: ", std::strerror(errno)));
  }
  return absl::StrCat(host, "_", NewUuid());
}

}  // namespace kcr::leaderelection
