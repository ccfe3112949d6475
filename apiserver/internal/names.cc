#include "apiserver/internal/names.h"

#include <cstdint>
#include <string>

#include "absl/random/random.h"

namespace kcr {
namespace apiserver {

std::string NewUid() {
  thread_local absl::BitGen gen;
  uint64_t hi = absl::Uniform<uint64_t>(gen);
  uint64_t lo = absl::Uniform<uint64_t>(gen);
  hi = (hi & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  // "%08x-%04x-%04x-%04x-%012x" of hi and lo, without StrFormat's parse of
  // the format on every create.
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(36, '-');
  size_t at = 0;
  auto put = [&](uint64_t v, int digits) {
    for (int i = digits - 1; i >= 0; --i) {
      out[at++] = kHex[(v >> (4 * i)) & 0xf];
    }
  };
  put(hi >> 32, 8);
  ++at;
  put((hi >> 16) & 0xffff, 4);
  ++at;
  put(hi & 0xffff, 4);
  ++at;
  put(lo >> 48, 4);
  ++at;
  put(lo & 0xffffffffffffULL, 12);
  return out;
}

std::string GenerateName(std::string_view prefix) {
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  thread_local absl::BitGen gen;
  std::string out(prefix.substr(0, 58));
  for (int i = 0; i < 5; ++i) {
    out += kAlphabet[absl::Uniform<size_t>(gen, 0, sizeof(kAlphabet) - 1)];
  }
  return out;
}

}  // namespace apiserver
}  // namespace kcr
