// The 16-bit float conversions against the CPU's own (x86's F16C, ARM's FCVT) and against exhaustive
// round trips; the element types' sizes and ONNX codes.
#include <gtest/gtest.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include <cmath>
#include <cstring>
#include <random>

#include "libplan/runtime/tensor.h"

namespace zp::runtime {
namespace {

#if defined(__x86_64__)
__attribute__((target("f16c"))) uint16_t cpuFloatToHalf(float f) {
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}
__attribute__((target("f16c"))) float cpuHalfToFloat(uint16_t h) { return _cvtsh_ss(h); }

// From CPUID rather than __builtin_cpu_supports("f16c"), which clang 14 does not
// know. F16C instructions are VEX-encoded, so the OS must also save the AVX state
// (OSXSAVE set, XCR0 bits 1 and 2).
bool cpuHasF16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  if (!(ecx & bit_F16C) || !(ecx & bit_AVX) || !(ecx & bit_OSXSAVE)) return false;
  unsigned xcr0_low = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  return (xcr0_low & 0x6) == 0x6;
}
#elif defined(__aarch64__)
// ARMv8's own conversions (FCVT), through the compiler's __fp16.
uint16_t cpuFloatToHalf(float f) {
  const __fp16 h = static_cast<__fp16>(f);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}
float cpuHalfToFloat(uint16_t bits) {
  __fp16 h;
  std::memcpy(&h, &bits, 2);
  return h;
}
bool cpuHasF16c() { return true; }
#else
uint16_t cpuFloatToHalf(float) { return 0; }
float cpuHalfToFloat(uint16_t) { return 0; }
bool cpuHasF16c() { return false; }
#endif

TEST(HalfFloat, EveryHalfWidensLikeTheCpuAndRoundTrips) {
  if (!cpuHasF16c()) GTEST_SKIP() << "no F16C on this CPU";
  for (uint32_t h = 0; h < 65536; ++h) {
    const float ours = halfToFloat(static_cast<uint16_t>(h)), cpu = cpuHalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(cpu)) {
      EXPECT_TRUE(std::isnan(ours)) << h;
      continue;
    }
    ASSERT_EQ(std::memcmp(&ours, &cpu, 4), 0) << "half " << h;
    ASSERT_EQ(floatToHalf(ours), h) << "half " << h;
  }
}

TEST(HalfFloat, FloatsNarrowLikeTheCpuRoundingToNearestEven) {
  if (!cpuHasF16c()) GTEST_SKIP() << "no F16C on this CPU";
  std::mt19937 rng(7);
  for (int i = 0; i < 2000000; ++i) {
    // Random bit patterns cover subnormals, overflow, ties and NaN alike.
    uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f)) continue;
    ASSERT_EQ(floatToHalf(f), cpuFloatToHalf(f)) << "float bits " << bits;
  }
  for (float f : {65504.0f, 65519.99f, 65520.0f, 1e-8f, 2.98e-8f, 2.99e-8f, 6.1e-5f, -0.0f})
    EXPECT_EQ(floatToHalf(f), cpuFloatToHalf(f)) << f;
}

TEST(BFloat16, RoundsToNearestEvenAndWidensExactly) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even is 1.
  EXPECT_EQ(floatToBf16(1.00390625f), 0x3f80);
  // 1 + 3 * 2^-8 is a tie between 1 + 2^-7 (odd) and 1 + 2^-6: even is up.
  EXPECT_EQ(floatToBf16(1.01171875f), 0x3f82);
  EXPECT_EQ(floatToBf16(1.0050001f), 0x3f81);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(NAN))));
  for (uint32_t b = 0; b < 65536; ++b) {
    const float f = bf16ToFloat(static_cast<uint16_t>(b));
    if (!std::isnan(f)) ASSERT_EQ(floatToBf16(f), b);
  }
}

TEST(DTypes, SizesNamesAndOnnxCodesRoundTrip) {
  for (DType t : {DType::F32, DType::I64, DType::I32, DType::I8, DType::U8, DType::Bool, DType::F64, DType::F16,
                  DType::BF16, DType::I16, DType::U16, DType::U32, DType::U64}) {
    auto back = dtypeFromOnnx(dtypeToOnnx(t));
    ASSERT_TRUE(back.ok()) << dtypeName(t);
    EXPECT_EQ(*back, t);
    EXPECT_GT(dtypeSize(t), 0u);
  }
  EXPECT_EQ(dtypeSize(DType::F16), 2u);
  EXPECT_EQ(dtypeSize(DType::U64), 8u);
  EXPECT_FALSE(dtypeFromOnnx(8).ok());  // string
}

TEST(DTypes, ValuesConvertFromEveryType) {
  Tensor h = Tensor::empty(DType::F16, {2});
  h.ptr<uint16_t>()[0] = floatToHalf(-2.5f);
  h.ptr<uint16_t>()[1] = floatToHalf(3.0f);
  EXPECT_EQ(h.toF64(), (std::vector<double>{-2.5, 3.0}));
  EXPECT_EQ(h.toI64(), (std::vector<int64_t>{-2, 3}));
  Tensor u = Tensor::empty(DType::U32, {1});
  u.ptr<uint32_t>()[0] = 4000000000u;
  EXPECT_EQ(u.toF64()[0], 4e9);
}

}  // namespace
}  // namespace zp::runtime
