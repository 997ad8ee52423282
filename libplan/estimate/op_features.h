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
  // Cache context, static once the execution order is: the bytes the model's other
  // nodes move between the write of this node's activation inputs and this read
  // (max over its inputs; a graph input waits a whole run), and the bytes every
  // node moves in one run (what passes between two reads of a weight). One
  // 1024x1000 Gemm took 0.08 ms in a 5.5 MB model and 0.28 ms in a 32 MB one.
  double inputReuseBytes = 0, modelBytes = 0;
  bool operator==(const OpFeatures&) const = default;
};

}  // namespace zp::estimate
