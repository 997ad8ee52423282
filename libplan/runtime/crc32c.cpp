// CRC-32C (Castagnoli): hardware instruction where the CPU has SSE4.2, a table otherwise.
#include <array>
#include <cstring>

#include "libplan/runtime/ops.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace zp::runtime {
namespace {

std::array<uint32_t, 256> makeTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[i] = c;
  }
  return t;
}

uint32_t crcTable(const uint8_t* p, size_t n, uint32_t crc) {
  static const auto table = makeTable();
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t crcHw(const uint8_t* p, size_t n, uint32_t crc) {
  uint64_t c = crc;
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n--) c32 = _mm_crc32_u8(c32, *p++);
  return c32;
}
#endif

}  // namespace

uint32_t crc32c(const void* data, size_t bytes, uint32_t seed) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t crc = ~seed;
#if defined(__x86_64__)
  static const bool hw = __builtin_cpu_supports("sse4.2");
  crc = hw ? crcHw(p, bytes, crc) : crcTable(p, bytes, crc);
#else
  crc = crcTable(p, bytes, crc);
#endif
  return ~crc;
}

}  // namespace zp::runtime
