// The list framer's block scan with AVX2 (two 32-byte compares per mask
// instead of four) and PCLMULQDQ (the in-string mask in one carry-less
// multiply). This file alone is compiled with -mavx2 -mpclmul -mbmi
// -mbmi2 -mpopcnt (BUILD.bazel: list_framer_avx2); ListFramer runs it only
// when Avx2BlockScanAvailable() (list_decoder.cc, compiled for the
// baseline: nothing here runs before the check), and the SSE2 scan
// otherwise.

#include "runtime/client/list_decoder.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__PCLMUL__)
#include <immintrin.h>

namespace kcr::client {
namespace {

struct Avx2Block {
  explicit Avx2Block(const char* p)
      : lo(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))),
        hi(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32))) {}
  static uint64_t Bits(__m256i a, __m256i b, __m256i needle) {
    const uint32_t l = static_cast<uint32_t>(
        _mm256_movemask_epi8(_mm256_cmpeq_epi8(a, needle)));
    const uint32_t h = static_cast<uint32_t>(
        _mm256_movemask_epi8(_mm256_cmpeq_epi8(b, needle)));
    return static_cast<uint64_t>(l) | (static_cast<uint64_t>(h) << 32);
  }
  bool High() const {
    return _mm256_movemask_epi8(_mm256_or_si256(lo, hi)) != 0;
  }
  uint64_t Eq(char c) const { return Bits(lo, hi, _mm256_set1_epi8(c)); }
  // '{' and '[' (0x7b, 0x5b) are the only bytes that are 0x7b with bit
  // 0x20 set; '}' and ']' likewise 0x7d.
  void Brackets(uint64_t* opens, uint64_t* closes) const {
    const __m256i k20 = _mm256_set1_epi8(0x20);
    const __m256i f0 = _mm256_or_si256(lo, k20);
    const __m256i f1 = _mm256_or_si256(hi, k20);
    *opens = Bits(f0, f1, _mm256_set1_epi8(0x7b));
    *closes = Bits(f0, f1, _mm256_set1_epi8(0x7d));
  }
  // Carry-less multiplication by all ones: bit k is the xor of bits 0..k.
  static uint64_t PrefixXor(uint64_t m) {
    return static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_clmulepi64_si128(
        _mm_set_epi64x(0, static_cast<int64_t>(m)), _mm_set1_epi8(-1), 0)));
  }
  static int PopCount(uint64_t m) {
    return static_cast<int>(_mm_popcnt_u64(m));
  }

  __m256i lo, hi;
};

}  // namespace

#include "runtime/client/list_framer_block.inc"

size_t ListFramer::ScanBlockAvx2(const char* p, bool* item_end,
                                 bool* too_deep) {
  return ScanBlockWith<Avx2Block>(p, item_end, too_deep);
}

}  // namespace kcr::client

#else  // no AVX2 build: the portable scan only

namespace kcr::client {

size_t ListFramer::ScanBlockAvx2(const char* p, bool* item_end,
                                 bool* too_deep) {
  return ScanBlock(p, item_end, too_deep);
}

}  // namespace kcr::client

#endif
