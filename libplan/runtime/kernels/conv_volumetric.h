// Conv over 3 spatial dims (video models' Conv3d): a naive reference, and the fast
// path as vol2col over a chunk of output positions plus one GEMM per group and chunk.
// 1-D and 2-D Conv have their own kernels (kernels.h).
#pragma once
#include <array>
#include <cstdint>

#include "libplan/runtime/kernels/gemm.h"
#include "libplan/runtime/kernels/kernels.h"

namespace zp::runtime {

// x [N, C, in], w [M, C / group, kernel], y [N, M, out] with
// out[d] = (in[d] + padBegin[d] + padEnd[d] - dil[d] * (kernel[d] - 1) - 1) / stride[d] + 1.
struct ConvVolumetricGeom {
  int64_t N = 1, C = 1, M = 1, group = 1;
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1}, dil{1, 1, 1}, padBegin{0, 0, 0};
  int64_t inSize() const { return in[0] * in[1] * in[2]; }
  int64_t outSize() const { return out[0] * out[1] * out[2]; }
  int64_t kernelSize() const { return kernel[0] * kernel[1] * kernel[2]; }
};

enum class ConvVolumetricKernel { Naive, Vol2col };
const char* convVolumetricKernelName(ConvVolumetricKernel k);

// y = epilogue(Conv(x, w) + bias) (bias [M] or null).
void runConvVolumetric(ConvVolumetricKernel k, const ConvVolumetricGeom& g, const float* x, const float* w,
                       const float* bias, const Epilogue& e, float* y, Scratch& scratch, int threads,
                       GemmLibrary gemm = GemmLibrary::OneDnn);

}  // namespace zp::runtime
