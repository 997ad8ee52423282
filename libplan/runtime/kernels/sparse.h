// ConvKernel::Sparse, internal to the runtime's kernels (kernels.cpp dispatches here).
#pragma once
#include "libplan/runtime/kernels/kernels.h"

namespace zp::runtime {

// The name recorded in weight caches; change it whenever the packed layout changes.
inline constexpr const char* kSparseConvTransform = "csr_phase";

// Appends the sparse arrays to `pw` (which already holds "bias"): per output channel its
// nonzero weights "vals", ordered by input channel, with "code" packing the phase plane
// each one reads and its shift in that plane; "segptr" [M, ceil(Cg / 8) + 1] holds where
// each output channel's nonzeros of input channels 8s, 8s + 8, ... start. The layout is
// described at the top of sparse.cpp.
void sparseConvWeights(const ConvAttrs& a, const float* w, PackedWeights* pw);

// x: [N, C, H, W] -> y: [N, M, OH, OW]; any stride, dilation, padding and groups.
void convSparse(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H, int64_t W,
                float* y, const Epilogue& e, Scratch& scratch, int threads);

}  // namespace zp::runtime
