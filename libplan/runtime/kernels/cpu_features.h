// What the host's CPU can run, read once: the kernels' AVX-512 paths check it.
#pragma once
#include <cstdint>

namespace zp::runtime {

#if defined(__x86_64__)
inline const bool kHaveAvx512 = __builtin_cpu_supports("avx512f");
inline const bool kHaveAvx512Vl = kHaveAvx512 && __builtin_cpu_supports("avx512vl");
#else
inline const bool kHaveAvx512 = false;
inline const bool kHaveAvx512Vl = false;
#endif

inline constexpr int64_t kAvx512Lanes = 16;  // floats in one AVX-512 register

}  // namespace zp::runtime
