// A Conv through oneDNN's convolution primitive, for one input shape: its weights
// reordered once into the primitive's own blocked layout, the input transposed to
// NHWC per run and each piece's NHWC output transposed back into the NCHW output.
// oneDNN's direct convolutions (brgconv on AVX-512, jit on AVX2) run 3x3 and larger
// kernels near the FMA units' peak, where im2col pays for its column copy and the
// GEMM's packing. The work is cut into pieces (panels of output channels, a grouped
// conv's of whole groups, by bands of output rows), each its own primitive run on one
// of the runtime's threads: the
// pieces are fixed by the shape alone, so the result does not depend on the thread
// count.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "libplan/runtime/kernels/kernels.h"

namespace zp::runtime {

// Which of oneDNN's convolution kernels the SIMD target in use runs: AVX-512's brgconv,
// AVX2's jit kernels, or none faster than the runtime's own (elsewhere: oneDNN has
// no NEON convolutions of its own).
enum class ConvPrimitivesIsa { None, Avx2, Avx512 };
ConvPrimitivesIsa convPrimitivesIsa();

class ConvPrimitives {
 public:
  // For x [N, C, H, W] and w [M, Cg, kh, kw] (ungrouped); null when oneDNN has no
  // optimised implementation of it on this CPU (only its reference or im2col ones).
  // w is read only here.
  static std::unique_ptr<ConvPrimitives> make(const ConvAttrs& a, int64_t N, int64_t H, int64_t W, const float* w);
  ~ConvPrimitives();

  bool fits(int64_t N, int64_t H, int64_t W) const { return N == N_ && H == H_ && W == W_; }
  size_t bytes() const;  // the reordered weights
  // y [N, M, OH, OW] = conv(x) + bias (+ residual, y's shape), then the epilogue.
  void run(const float* x, const float* bias, const Epilogue& e, float* y, Scratch& scratch, int threads,
           const float* residual = nullptr) const;

 private:
  struct Panel;
  struct Band {
    int64_t oh0 = 0, rows = 0, ih0 = 0;
    int shape = 0;  // into shapes_
  };
  struct BandShape {
    int64_t inRows = 0, padT = 0, padB = 0, outRows = 0;
    bool operator==(const BandShape&) const = default;
  };
  ConvPrimitives() = default;
  int64_t bandCount(int64_t panels) const;  // bands of output rows beside `panels` panels
  void cutBands(int64_t panels);
  bool addPanel(const float* w, int64_t m0, int64_t width);

  ConvAttrs a_;
  int64_t N_ = 0, H_ = 0, W_ = 0, OH_ = 0, OW_ = 0;
  std::vector<BandShape> shapes_;
  std::vector<Band> bands_;
  std::vector<std::unique_ptr<Panel>> panels_;
};

}  // namespace zp::runtime
