// ConvTranspose kernels (1 to 3 spatial dims, groups, strides, dilations, pads,
// output padding): a naive reference, and the fast path as one GEMM per group
// (columns = W^T x X) scattered into the output by col2im.
#pragma once
#include <array>
#include <cstdint>

#include "libplan/runtime/kernels/gemm.h"
#include "libplan/runtime/kernels/kernels.h"

namespace zp::runtime {

// Shapes of a ConvTranspose with its spatial dims padded to 3 (leading 1s):
// x [N, C, in], w [C, M / group, kernel], y [N, M, out], where
// out[d] = stride[d] * (in[d] - 1) + outputPadding[d] + dil[d] * (kernel[d] - 1) + 1 - padBegin[d] - padEnd[d].
struct ConvTransposeGeom {
  int64_t N = 1, C = 1, M = 1, group = 1;
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1}, dil{1, 1, 1}, padBegin{0, 0, 0};
  int64_t inSize() const { return in[0] * in[1] * in[2]; }
  int64_t outSize() const { return out[0] * out[1] * out[2]; }
  int64_t kernelSize() const { return kernel[0] * kernel[1] * kernel[2]; }
};

enum class ConvTransposeKernel { Naive, Col2im };
const char* convTransposeKernelName(ConvTransposeKernel k);

// y = ConvTranspose(x, w) + bias (bias [M] or null).
void runConvTranspose(ConvTransposeKernel k, const ConvTransposeGeom& g, const float* x, const float* w,
                      const float* bias, float* y, Scratch& scratch, int threads, GemmLibrary gemm = GemmLibrary::OneDnn);

}  // namespace zp::runtime
