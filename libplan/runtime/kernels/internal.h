// What the kernel files share (kernels.cpp, window.cpp, winograd.cpp);
// the ops see kernels.h only.
#pragma once
#include <algorithm>
#include <vector>

#include "libplan/runtime/kernels/kernels.h"

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
                           int threads, const float* residual = nullptr);

// The widest vector of any SIMD target, in floats (AVX-512's): the slack a buffer
// leaves for loads of whole vectors past its data.
inline constexpr int64_t kSimdMaxLanes = 16;
// A flat row's block: four vectors (flat_loops.cpp).
inline constexpr int64_t kFlatBlockMax = 4 * kSimdMaxLanes;

// flat[f] = clamp(bias + sum over taps t of wm[t] * q[off[t] + f]) (e clamps only) for f in
// [0, L) rounded up to a whole block of four vectors; reads likewise past q's taps.
void depthwiseFlatRow(const float* q, const int64_t* off, int64_t taps, int64_t L, const float* wm, float bias,
                      const Epilogue& e, float* flat);

// even[k] = s[2k], odd[k] = s[2k + 1] for k in [lo, hi).
void splitEvenOdd(const float* s, int64_t lo, int64_t hi, float* even, float* odd);

// The sparse conv's row kernel (sparse_rows.cpp) on the SIMD target in use:
// out[0, len) = clamp((in ? in : b) + sum over z in [z0, z1) of vals[z] * rb[off[z] + (0 .. len)], lo, hi)
// (the clamp keeps NaNs; lo = -inf, hi = inf for none). Works in whole vectors: may
// read up to a register block past rb[off + len] and writes up to the next multiple
// of the vector width.
struct SparseRowKernel {
  using Fn = void (*)(const float* rb, const int32_t* off, const float* vals, int32_t z0, int32_t z1,
                      const float* in, float b, float* out, int64_t len, float lo, float hi);
  Fn fn = nullptr;
  int64_t block = 0;  // outputs per full register block (tiles are multiples of it)
  int64_t lanes = 0;  // outputs per vector
};
SparseRowKernel sparseRowKernel();

// Winograd's input transform of TH x TW tiles from a channel's even and odd padded
// rows (Wq slots each; a row is read up to a vector of slots past TW + 1) into
// V[xi][tile] (xi = 4i + j, xiStride apart), and the output transform of channel
// m's products Mx[xi][tile] (read up to a vector of tiles past the last) plus bias
// and the clamp e into its OH x OW plane (with the residual plane res, if any, added
// before the clamp).
void winogradInputTiles(const float* even, const float* odd, int64_t Wq, int64_t TH, int64_t TW, float* V,
                        int64_t xiStride);
void winogradOutputTiles(const float* Mx, int64_t xiStride, int64_t TH, int64_t TW, int64_t OH, int64_t OW, float bias,
                         const Epilogue& e, const float* res, float* dst);

// d[k] = s[2k] for k in [lo, hi): stride-2 columns. Never reads past s[2 * (hi - 1)].
void copyEven(const float* s, int64_t lo, int64_t hi, float* d);

// Winograd F(2x2, 3x3) weights U = G g G^T, stored [16][M][C] (winograd.cpp).
std::vector<float> winogradWeights(const ConvAttrs& a, const float* w);
void convWinograd(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H, int64_t W,
                  float* y, const Epilogue& e, Scratch& scratch, int threads, GemmLibrary gemm,
                  const float* residual = nullptr);

// Depthwise conv (window.cpp): the blocked kernel where it pays, else the rows kernel
// where that pays, else the window layout shared with max pooling.
void convDepthwise(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H, int64_t W,
                   float* y, const Epilogue& e, Scratch& scratch, int threads);
void convDepthwiseWindow(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H,
                         int64_t W, float* y, const Epilogue& e, Scratch& scratch, int threads);

// Depthwise conv from the input rows with masked vector loads (depthwise_rows.cpp):
// column strides 1 and 2, kernels at most 16 wide. Pays (is faster than
// the window kernel) on small maps, where that kernel's padded copy and its rounding
// of short rows to whole blocks cost most.
bool depthwiseRowsApplies(const ConvAttrs& a);
bool depthwiseRowsPay(const ConvAttrs& a, int64_t H, int64_t W);
void convDepthwiseRows(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H, int64_t W,
                       float* y, const Epilogue& e, int threads);

// Depthwise conv on blocks of a vector's width of channels gathered into a padded tile,
// vectorised over the channels (depthwise_blocked.cpp): multiplier 1, at most 64 taps.
// Pays wherever it applies: a block's tile is cut into bands of rows that stay in L2.
bool depthwiseBlockedApplies(const ConvAttrs& a);
bool depthwiseBlockedPays(const ConvAttrs& a);
void convDepthwiseBlocked(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H,
                          int64_t W, float* y, const Epilogue& e, Scratch& scratch, int threads,
                          BlockedLayouts layouts = {});

// Direct conv vectorised over blocks of 16 (or 8) output channels (direct.cpp): 8k
// output channels per group, at most 1152 weights per output channel, not a
// plain pointwise conv. Weights as directConvWeights keeps them: per block of output
// channels, [Cg*kh*kw][16] (or [..][8] where a group's channels do not divide by 16).
bool directConvApplies(const ConvAttrs& a);
std::vector<float> directConvWeights(const ConvAttrs& a, const float* w);
// yBlocked: y channel-blocked (kernels.h BlockedLayouts), where directConvWritesBlocks.
bool directConvWritesBlocks(const ConvAttrs& a);
void convDirect(const ConvAttrs& a, const float* wt, const float* bias, const float* x, int64_t N, int64_t H, int64_t W,
                float* y, const Epilogue& e, Scratch& scratch, int threads, bool yBlocked = false);

// Direct conv vectorised along output rows (direct_rows.cpp): one group, not a plain
// pointwise conv. Weights as directRowsWeights keeps them:
// per chunk of 8 output channels, [Cg*kh*kw][8], zero past M.
bool directRowsApplies(const ConvAttrs& a);
std::vector<float> directRowsWeights(const ConvAttrs& a, const float* w);
void convDirectRows(const ConvAttrs& a, const float* wr, const float* bias, const float* x, int64_t N, int64_t H,
                    int64_t W, float* y, const Epilogue& e, Scratch& scratch, int threads);

// Max and average pooling of small maps on blocks of channels as wide as a vector
// (pool_blocked.cpp); planes = N * C planes of H*W, averages divided as avgPoolRows does;
// windows of at most kPoolBlockedMaxTaps taps.
constexpr int64_t kPoolBlockedMaxTaps = 64;
bool poolBlockedPays(const ConvAttrs& a, int64_t H, int64_t W);
void maxPoolBlocked(const ConvAttrs& a, const float* x, int64_t planes, int64_t H, int64_t W, float* y,
                    Scratch& scratch, int threads);
void avgPoolBlocked(const ConvAttrs& a, const float* rowCount, const float* colCount, const float* x, int64_t planes,
                    int64_t H, int64_t W, float* y, Scratch& scratch, int threads);

// Max and average pooling from the input rows (pool_rows.cpp): column strides 1 and
// 2, windows of at most 32 rows; planes = N * C planes of H*W. An average divides
// output (oh, ow)'s sum by rowCount[oh] * colCount[ow] (0 where that is 0).
bool poolRowsApply(const ConvAttrs& a);
void maxPoolRows(const ConvAttrs& a, const float* x, int64_t planes, int64_t H, int64_t W, float* y, Scratch& scratch,
                 int threads);
void avgPoolRows(const ConvAttrs& a, const float* rowCount, const float* colCount, const float* x, int64_t planes,
                 int64_t H, int64_t W, float* y, Scratch& scratch, int threads);

// Pointwise conv on weights packed at load (packed1x1.cpp): [M/32][K][32], zero-padded.
std::vector<float> packPointwiseWeights(const ConvAttrs& a, const float* w);
void convPointwisePacked(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H,
                         int64_t W, float* y, const Epilogue& e, Scratch& scratch, int threads,
                         BlockedLayouts layouts = {}, const float* residual = nullptr);

}  // namespace zp::runtime
