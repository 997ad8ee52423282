// The heavy kernels, free of ONNX: Conv and constant-weight matrix products.
// Each kernel has its own weight transform, producing PackedWeights (named
// arrays) that are either computed at load or mapped in place from a weight
// cache. Every kernel is checked against the naive one in tests/runtime.
// kernels.cpp: names, transforms, naive, im2col/1x1 and Gemm kernels;
// winograd.cpp; window.cpp (depthwise conv, max pooling);
// sparse.cpp; their products go through gemm.h.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "libplan/runtime/kernels/activation.h"
#include "libplan/runtime/kernels/gemm.h"
#include "libplan/runtime/tensor.h"
#include "libplan/util/error.h"

namespace zp::runtime {

// A growable 64-byte aligned scratch buffer shared by the kernels of one session
// (kernels run one after another, so one buffer is enough).
class Scratch {
 public:
  static constexpr size_t kSharedSlots = 16;  // slots of floats(); workerFloats' come after
  static constexpr size_t kWorkerSlots = 4;   // per worker
  float* floats(size_t count, size_t slot = 0);
  // Per worker of a parallel loop (parallel.h), `count` floats of its own: one block
  // per (worker, slot) that no other worker's buffer of any kernel ever overlaps, so
  // the lines a thread writes there are not ones another core last read or wrote.
  // Carved from one shared buffer, a thread's tile lay where another thread's had
  // been in an earlier kernel of other sizes, and on a 2-core EPYC writing lines both
  // cores hold took 6-8x the time of lines only the writer holds
  // (bench-shared-lines). Taken before the loop (not thread-safe); index by worker.
  std::vector<float*> workerFloats(int workers, size_t count, size_t slot = 0);
  size_t bytes() const;
  // Per slot, the bytes held (what a run needed at most).
  std::vector<size_t> sizes() const;
  // Allocates each slot's block of at least `bytes[slot]` now (not touching it), so
  // that a run needing no more allocates nothing; `blocks` lists them.
  void reserve(const std::vector<size_t>& bytes);
  std::vector<std::pair<void*, size_t>> blocks() const;

 private:
  struct Block { std::shared_ptr<void> mem; size_t bytes = 0; };
  std::vector<Block> blocks_;
};

// One named array of transformed weights. `data` points into `owner` (a heap
// block) or into a mapped cache file kept alive by `owner`.
struct WeightArray {
  std::string name;
  DType dtype = DType::F32;
  int64_t count = 0;
  const void* data = nullptr;
  std::shared_ptr<void> owner;
  size_t bytes() const { return static_cast<size_t>(count) * dtypeSize(dtype); }
  template <typename T> const T* as() const { return static_cast<const T*>(data); }
};

class ConvPrimitives;

struct PackedWeights {
  std::vector<WeightArray> arrays;
  // The onednn conv kernel's primitives for one input shape, made from "w" at build
  // (prepareConvKernel); not part of a weight cache.
  std::shared_ptr<const ConvPrimitives> onednn;
  const WeightArray* find(const std::string& name) const;
  const WeightArray& get(const std::string& name) const;  // asserts presence
  size_t bytes() const;
  template <typename T> static WeightArray make(std::string name, const std::vector<T>& values, DType dtype);
};

// Fused elementwise tail of a Conv/Gemm: none, Relu, Clip(lo, hi), or an activation
// function (activation.h: Sigmoid, SiLU, HardSigmoid, HardSwish, GELU, Tanh). Kernels
// clamp in their own loops; a function runs over each output plane once written.
struct Epilogue {
  enum Kind : uint8_t { None, Relu, Clip, Function } kind = None;
  float lo = 0, hi = 0;
  ActFn fn = ActFn::Sigmoid;
  ActParams params;
  bool clampOnly() const { return kind != Function; }
};
// y = epilogue(y + bias [+ residual]): `residual` (y's layout) with a clamp epilogue only.
void applyEpilogue(float* y, int64_t channels, int64_t perChannel, const float* bias, const Epilogue& e,
                   const float* residual = nullptr);

// ---- Conv ---------------------------------------------------------------

struct ConvAttrs {
  int64_t M = 0, Cg = 0, kh = 1, kw = 1;  // weight [M, Cg, kh, kw]
  int64_t group = 1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t padT = 0, padL = 0, padB = 0, padR = 0;
  int64_t outH(int64_t H) const { return (H + padT + padB - dh * (kh - 1) - 1) / sh + 1; }
  int64_t outW(int64_t W) const { return (W + padL + padR - dw * (kw - 1) - 1) / sw + 1; }
  int64_t C() const { return Cg * group; }
};

// Packed1x1: a pointwise conv on weights packed at load in panels of 32 output channels.
// Direct: FMAs over blocks of 16 output channels, weights transposed per block at load.
// OneDnn: oneDNN's convolution primitive for the node's input shape (conv_primitives.h).
// DirectRows: FMAs over vectors of output positions of a row, 8 output channels at a
// time, for few input channels (the stems).
enum class ConvKernel { Naive, Im2col, Gemm1x1, Winograd, Depthwise, Sparse, Packed1x1, Direct, OneDnn, DirectRows };
inline constexpr ConvKernel kAllConvKernels[] = {
    ConvKernel::Naive,     ConvKernel::Im2col, ConvKernel::Gemm1x1, ConvKernel::Winograd, ConvKernel::Depthwise,
    ConvKernel::Sparse,    ConvKernel::Packed1x1, ConvKernel::Direct, ConvKernel::OneDnn, ConvKernel::DirectRows};
const char* convKernelName(ConvKernel k);
// Packed1x1 keeps a whole tile in registers on the SIMD target in use (16 lanes: AVX-512);
// with narrower vectors the default policy takes the GEMM library's product instead.
bool pointwisePackedFast();
// DirectRows keeps three vectors of positions by 8 channels in registers where there are
// 32 (AVX-512); with 16, one, and the default policy leaves stems to im2col.
bool directRowsFast();
bool parseConvKernel(const std::string& name, ConvKernel* out);
bool convKernelApplies(ConvKernel k, const ConvAttrs& a);
// The name of the weight transform each kernel performs (recorded in caches).
const char* convTransformName(ConvKernel k);

// w: [M, Cg, kh, kw], bias: [M] or null.
PackedWeights transformConvWeights(ConvKernel k, const ConvAttrs& a, const float* w, const float* bias);
// What a kernel makes for one input shape beyond its weights (onednn: its primitives,
// from pw's "w"); false when it cannot run that shape (runConv then runs im2col on
// the same weights). Every other kernel needs nothing: true.
bool prepareConvKernel(ConvKernel k, const ConvAttrs& a, int64_t N, int64_t H, int64_t W, PackedWeights* pw);
// Channel-blocked activations: [N][C/b][H][W][b], b = simdFloatLanes(), for C a
// multiple of b (ORT's NCHWc): whether an op reads its blockable input and writes its
// output that way (ops/op.h; the session sets both ends of a value,
// Session::Builder::blockChannels). The depthwise kernel, which computes on channel
// blocks, then neither gathers its input into blocks nor scatters its output back, and
// the pointwise one stores whole vectors instead of scattering. Of the conv kernels
// only Packed1x1 (input at stride 1) and Depthwise (multiplier 1) take it.
struct BlockedLayouts {
  bool blockedInput = false, blockedOutput = false;
  bool any() const { return blockedInput || blockedOutput; }
};
bool convTakesBlockedInput(ConvKernel k, const ConvAttrs& a);
bool convTakesBlockedOutput(ConvKernel k, const ConvAttrs& a);

// x: [N, C, H, W] -> y: [N, M, OH, OW] (either channel-blocked as `layouts` says).
// `residual` (planes, y's shape, never y itself): added to the conv's output with its
// bias, before the epilogue's clamp (a Relu or Clip epilogue only), as the unfused Add
// would: y = clamp((conv + bias) + residual).
void runConv(ConvKernel k, const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H,
             int64_t W, float* y, const Epilogue& e, Scratch& scratch, int threads,
             GemmLibrary gemm = GemmLibrary::OneDnn, BlockedLayouts layouts = {}, const float* residual = nullptr);

// Max pooling over the window `a` describes (kh, kw, strides, dilations, pads; M,
// Cg and group unused): x [N, C, H, W] -> y [N, C, a.outH(H), a.outW(W)]. Padding
// never wins (it is -inf); a window entirely in the padding gives -inf.
void runMaxPool(const ConvAttrs& a, const float* x, int64_t N, int64_t C, int64_t H, int64_t W, float* y,
                Scratch& scratch, int threads);

// Average pooling on the same window layout: the sum over the window (padding adds
// zeros) divided by rowCount[oh] * colCount[ow] (what the caller counts: with or
// without the padding); 0 where that is 0.
void runAvgPool(const ConvAttrs& a, const float* rowCount, const float* colCount, const float* x, int64_t N,
                int64_t C, int64_t H, int64_t W, float* y, Scratch& scratch, int threads);

// ---- Matrix product with a constant right-hand side ----------------------
// Y[rows, N] = X[rows, K] * B[K, N] + bias[N]

enum class GemmKernel { Naive, Blas, Sparse };
inline constexpr GemmKernel kAllGemmKernels[] = {GemmKernel::Naive, GemmKernel::Blas, GemmKernel::Sparse};
const char* gemmKernelName(GemmKernel k);
bool parseGemmKernel(const std::string& name, GemmKernel* out);
const char* gemmTransformName(GemmKernel k);

// b is [K, N] row-major when !bTransposed, else [N, K]; alpha scales B, beta the bias.
PackedWeights transformGemmWeights(GemmKernel k, int64_t K, int64_t N, const float* b, bool bTransposed,
                                   const float* bias, float alpha, float beta);
void runGemm(GemmKernel k, int64_t K, int64_t N, const PackedWeights& pw, const float* x, int64_t rows, float* y,
             const Epilogue& e, int threads, GemmLibrary gemm = GemmLibrary::OneDnn);

// Fraction of exact zeros.
double zeroFraction(const float* w, int64_t n);

}  // namespace zp::runtime
