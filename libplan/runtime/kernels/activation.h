// Elementwise activation functions on float arrays, vectorized on the SIMD target
// the kernels dispatch to (simd_target.h): the fused epilogues of the heavy kernels
// (Epilogue, kernels.h) and the bodies of the unary ops. Every element goes through
// the same instruction sequence whatever its position (a tail is computed on a
// padded copy), so results do not depend on how an array is split into chunks.
// exp is a degree-6 polynomial after range reduction (relative error ~2e-7); erf is
// a Taylor series below 0.5 and Abramowitz-Stegun 7.1.26 above (absolute error
// ~1.5e-7). Checked against the std:: functions in tests/runtime/kernels_test.cpp.
#pragma once
#include <cstdint>

namespace zp::runtime {

struct Epilogue;

// The elementwise functions apply() computes.
enum class ActFn : uint8_t { Sigmoid, Silu, HardSigmoid, HardSwish, Gelu, Tanh, Erf, Exp };

struct ActParams {
  float alpha = 0.2f, beta = 0.5f;  // HardSigmoid / HardSwish: min(max(alpha * x + beta, 0), 1)
};

// y[i] = f(x[i] + bias) for i in [0, n); y may equal x.
void applyActivation(ActFn f, const ActParams& p, const float* x, float* y, int64_t n, float bias = 0.0f);

// The same one element at a time with the std:: functions: the reference.
float activationReference(ActFn f, const ActParams& p, float v);

}  // namespace zp::runtime
