// What the kernel files share (kernels.cpp, window.cpp, winograd.cpp);
// the ops see kernels.h only.
#pragma once
#include <algorithm>
#include <vector>

#include "libplan/runtime/kernels/kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>  // AVX2 code under __AVX2__; AVX-512 code in target("avx512f") functions
#endif

namespace zp::runtime {

inline float actOne(float v, const Epilogue& e) {
  if (e.kind == Epilogue::Relu) return v > 0 ? v : 0;
  if (e.kind == Epilogue::Clip) return std::min(std::max(v, e.lo), e.hi);
  if (e.kind == Epilogue::Function) return activationReference(e.fn, e.params, v);
  return v;
}

// One output row of a product: bias[n] added to y[n], then the epilogue.
inline void biasAndActivate(float* y, const float* bias, int64_t n, const Epilogue& e) {
  if (e.clampOnly()) {
    for (int64_t i = 0; i < n; ++i) y[i] = actOne(y[i] + bias[i], e);
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] += bias[i];
  applyActivation(e.fn, e.params, y, y, n);
}

// applyEpilogue over channels split across threads.
void applyEpilogueParallel(float* y, int64_t channels, int64_t perChannel, const float* bias, const Epilogue& e,
                           int threads);

#if defined(__AVX2__)
// The 16 floats at s as their 8 even-indexed and 8 odd-indexed ones, in order.
inline void deinterleave16(const float* s, __m256* even, __m256* odd) {
  const __m256 a = _mm256_loadu_ps(s), b = _mm256_loadu_ps(s + 8);
  // shuffle picks within 128-bit lanes; the permute puts the lanes' halves in order.
  *even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))), 0xD8));
  *odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1))), 0xD8));
}
#endif

// d[k] = s[2k] for k in [lo, hi): stride-2 columns. The vector loop stops while a full
// 16-float load still ends before s[2 * (hi - 1)], so it never reads past the row.
void copyEven(const float* s, int64_t lo, int64_t hi, float* d);

// Winograd F(2x2, 3x3) weights U = G g G^T, stored [16][M][C] (winograd.cpp).
std::vector<float> winogradWeights(const ConvAttrs& a, const float* w);
void convWinograd(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H, int64_t W,
                  float* y, const Epilogue& e, Scratch& scratch, int threads, GemmLibrary gemm);

// Depthwise conv (window.cpp): the blocked kernel where it pays, else the rows kernel
// where that pays, else the window layout shared with max pooling.
void convDepthwise(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H, int64_t W,
                   float* y, const Epilogue& e, Scratch& scratch, int threads);
void convDepthwiseWindow(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H,
                         int64_t W, float* y, const Epilogue& e, Scratch& scratch, int threads);

// Depthwise conv from the input rows with masked 16-lane loads (depthwise_rows.cpp):
// AVX-512 CPUs, column strides 1 and 2, kernels at most 16 wide. Pays (is faster than
// the window kernel) on small maps, where that kernel's padded copy and its rounding
// of short rows to whole blocks cost most.
bool depthwiseRowsApplies(const ConvAttrs& a);
bool depthwiseRowsPay(const ConvAttrs& a, int64_t H, int64_t W);
void convDepthwiseRows(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H, int64_t W,
                       float* y, const Epilogue& e, int threads);

// Depthwise conv on blocks of 16 channels gathered into a padded tile, vectorised over
// the channels (depthwise_blocked.cpp): AVX-512 CPUs, multiplier 1, at most 64 taps.
// Pays wherever it applies: a block's tile is cut into bands of rows that stay in L2.
bool depthwiseBlockedApplies(const ConvAttrs& a);
bool depthwiseBlockedPays(const ConvAttrs& a);
void convDepthwiseBlocked(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H,
                          int64_t W, float* y, const Epilogue& e, Scratch& scratch, int threads);

// Direct conv vectorised over blocks of 16 (or 8) output channels (direct.cpp): AVX-512
// CPUs, 8k output channels per group, at most 1152 weights per output channel, not a
// plain pointwise conv. Weights as directConvWeights keeps them: per block of output
// channels, [Cg*kh*kw][16] (or [..][8] where a group's channels do not divide by 16).
bool directConvApplies(const ConvAttrs& a);
std::vector<float> directConvWeights(const ConvAttrs& a, const float* w);
void convDirect(const ConvAttrs& a, const float* wt, const float* bias, const float* x, int64_t N, int64_t H, int64_t W,
                float* y, const Epilogue& e, Scratch& scratch, int threads);

// Max pooling from the input rows (pool_rows.cpp): AVX-512 CPUs, column strides 1 and
// 2, windows of at most 32 rows; planes = N * C planes of H*W.
bool maxPoolRowsApplies(const ConvAttrs& a);
void maxPoolRows(const ConvAttrs& a, const float* x, int64_t planes, int64_t H, int64_t W, float* y, Scratch& scratch,
                 int threads);

// Pointwise conv on weights packed at load (packed1x1.cpp): [M/32][K][32], zero-padded.
std::vector<float> packPointwiseWeights(const ConvAttrs& a, const float* w);
void convPointwisePacked(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H,
                         int64_t W, float* y, const Epilogue& e, Scratch& scratch, int threads);

}  // namespace zp::runtime
