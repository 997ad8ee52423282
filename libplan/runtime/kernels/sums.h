// Sums of float arrays in 16 interleaved partial sums: vectorizable without
// reassociating (the compiler keeps the order it is given), and ~10x faster than one
// running sum. The result depends only on the array, not on where it lies.
#pragma once
#include <cstdint>

namespace zp::runtime {

inline float sum16(const float* p, int64_t n) {
  float acc[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 16; ++k) acc[k] += p[i + k];
  for (; i < n; ++i) acc[i % 16] += p[i];
  float s = 0;
  for (float a : acc) s += a;
  return s;
}

// Sum of (p[i] - mean)^2.
inline float sumSquaredDiff16(const float* p, int64_t n, float mean) {
  float acc[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 16; ++k) {
      const float d = p[i + k] - mean;
      acc[k] += d * d;
    }
  for (; i < n; ++i) acc[i % 16] += (p[i] - mean) * (p[i] - mean);
  float s = 0;
  for (float a : acc) s += a;
  return s;
}

}  // namespace zp::runtime
