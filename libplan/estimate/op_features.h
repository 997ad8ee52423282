// The per-operator features of SparOA §3.1 and §4.1 that the operator latency
// predictor reads: activation and weight sparsity, computational intensity
// (Eq. 2: Kh * Kw * Cin * Cout * H * W for a convolution, FLOPs for other
// operators), the input shape B/C/H/W, output channels, kernel, stride,
// groups, plus the kernel the processor's policy picks for the node and the
// activation fusion folded into it (static decisions, known before anything
// runs; one convolution costs 1.6x more with SiLU than with ReLU6 fused).
#pragma once
#include <cstdint>
#include <string>

namespace zp::estimate {

struct OpFeatures {
  std::string opType, kernel;
  std::string activation;  // the activation fused into the node ("": none), a static decision of fusion
  int64_t batch = 0, inChannels = 0, inH = 0, inW = 0;  // first non-constant input, NCHW (rank < 4: trailing 1s)
  int64_t outChannels = 0, kernelH = 0, kernelW = 0, stride = 0, groups = 0;  // 0: not applicable
  double flops = 0;       // multiply-accumulate = 2
  double intensity = 0;   // SparOA Eq. 2
  double bytes = 0;       // inputs + outputs + weights moved
  double weightSparsity = 0;
  double inputSparsity = 0, outputSparsity = 0;  // zero fraction of the first input and of the output (Eq. 1)
  bool operator==(const OpFeatures&) const = default;
};

}  // namespace zp::estimate
