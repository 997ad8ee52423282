// CRC-32C (Castagnoli): hardware instruction where the CPU has SSE4.2, a table otherwise.
#include <array>
#include <cstring>

#include "libplan/runtime/cache/crc32c.h"

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
// Polynomial arithmetic modulo the (reflected) CRC-32C polynomial, to combine the
// CRCs of consecutive pieces: crc(A || B) = crc(A) * x^(8|B|) + crc(B) on the raw
// register (no pre/post inversion).
constexpr uint32_t kPoly = 0x82F63B78u;

uint32_t multModP(uint32_t a, uint32_t b) {
  uint32_t m = 1u << 31, p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = (b & 1) ? (b >> 1) ^ kPoly : b >> 1;
  }
  return p;
}

// x^(8 * bytes) modulo the polynomial.
uint32_t shiftFor(size_t bytes) {
  static const auto x2n = [] {
    std::array<uint32_t, 64> t{};
    uint32_t p = 1u << 30;  // x^1
    for (auto& v : t) {
      v = p;
      p = multModP(p, p);
    }
    return t;
  }();
  uint32_t p = 1u << 31;  // x^0
  unsigned k = 3;         // bytes -> bits
  for (size_t n = bytes; n; n >>= 1, ++k)
    if (n & 1) p = multModP(x2n[k & 63], p);
  return p;
}

__attribute__((target("sse4.2"))) uint32_t crcHw1(const uint8_t* p, size_t n, uint32_t crc) {
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

// Three independent streams hide the instruction's 3-cycle latency (about 3x the
// throughput of one stream on large payloads); their CRCs are then combined.
__attribute__((target("sse4.2"))) uint32_t crcHw(const uint8_t* p, size_t n, uint32_t crc) {
  if (n < 4096) return crcHw1(p, n, crc);
  const size_t len = n / 24 * 8;  // bytes per stream, a multiple of 8
  const uint8_t* p1 = p + len;
  const uint8_t* p2 = p + 2 * len;
  uint64_t c0 = crc, c1 = 0, c2 = 0;
  for (size_t i = 0; i < len; i += 8) {
    uint64_t v0, v1, v2;
    std::memcpy(&v0, p + i, 8);
    std::memcpy(&v1, p1 + i, 8);
    std::memcpy(&v2, p2 + i, 8);
    c0 = _mm_crc32_u64(c0, v0);
    c1 = _mm_crc32_u64(c1, v1);
    c2 = _mm_crc32_u64(c2, v2);
  }
  const uint32_t shift = shiftFor(len);
  uint32_t c = multModP(shift, static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1);
  c = multModP(shift, c) ^ static_cast<uint32_t>(c2);
  return crcHw1(p + 3 * len, n - 3 * len, c);
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
