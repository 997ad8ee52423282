// ConvKernel::Sparse, internal to the runtime's kernels (kernels.cpp dispatches here).
#pragma once
#include "libplan/runtime/kernels.h"

namespace zp::runtime {

// The name recorded in weight caches; change it whenever the packed layout changes.
inline constexpr const char* kSparseConvTransform = "csr_phase";

// Appends the sparse arrays to `pw` (which already holds "bias"). Per output channel,
// its nonzero weights "vals" ordered by input channel, with for each the phase plane it
// reads, "plane" = input channel (within the group) * phases + phase slot, and its shift
// in that plane, "shift" = di << 16 | dj (see kernels_sparse.cpp). "segptr" [M, S + 1]
// holds where each output channel's nonzeros of input channels 8s.. start (S = ceil(Cg / 8)).
void sparseConvWeights(const ConvAttrs& a, const float* w, PackedWeights* pw);

// x: [N, C, H, W] -> y: [N, M, OH, OW]; any stride, dilation, padding and groups.
void convSparse(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H, int64_t W,
                float* y, const Epilogue& e, Scratch& scratch, int threads);

// The kernel runs AVX-512 where the CPU has it, AVX2 otherwise; tests switch
// AVX-512 off to check the AVX2 path on AVX-512 hosts.
void sparseConvAllowAvx512(bool allow);

}  // namespace zp::runtime
