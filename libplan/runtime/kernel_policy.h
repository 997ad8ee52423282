// Which kernel a heavy node runs: the decision of each kernel policy, apart from
// the ops that carry it out, so that it can be checked on shapes and sparsity alone.
//  default  - the measured heuristic (depthwise, sparse above a zero fraction, 1x1
//             on packed weights up to 8x8 outputs, oneDNN's primitive for kxk convs
//             where it runs its AVX-512 kernels, 1x1 GEMM, Winograd for wide 3x3
//             stride-1 convs, else direct or im2col)
//  tune     - times every applicable kernel on the node's static shape at load
//  naive|im2col|gemm1x1|winograd|depthwise|sparse|blas|packed1x1|direct|onednn - forced wherever it applies,
//             default elsewhere
// plus per-node overrides, where a kernel that does not apply is an error.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "libplan/runtime/kernels/kernels.h"
#include "libplan/util/error.h"

namespace zp::runtime {

struct KernelPolicy {
  std::string policy = "default";
  std::map<std::string, std::string> perNode;  // node name -> kernel name
  double sparseThreshold = 0.8;                // default policy: zero fraction for "sparse"
};
bool isKnownPolicy(const std::string& name);
const std::vector<std::string>& policyNames();

// What a Conv node's choice depends on.
struct ConvNode {
  std::string name;
  ConvAttrs attrs;               // pads as written (auto_pad is resolved per input size)
  std::optional<Shape> input;    // the static input shape, when known
  double zeroFraction = 0;       // of the ONNX weights
  bool tunable = false;          // a static input shape and no auto_pad: tune can time it
  GemmLibrary gemm = GemmLibrary::OneDnn;  // the session's
  bool feedsDepthwise = false, fedByDepthwise = false;  // BuildContext's: values may pass channel-blocked
};

// Times the applicable kernels on the node's input and returns the fastest.
using ConvTuner = std::function<ConvKernel()>;

// The node's override, else the forced kernel where it applies, else (tune) the
// tuner's measurement, else the default heuristic.
Expected<ConvKernel> chooseConvKernel(const KernelPolicy& policy, const ConvNode& node, const ConvTuner& tune);
ConvKernel defaultConvKernel(const ConvAttrs& a, const std::optional<Shape>& input, double zeroFraction,
                             double sparseThreshold, GemmLibrary gemm = GemmLibrary::OneDnn,
                             bool feedsDepthwise = false, bool fedByDepthwise = false);

// Gemm/MatMul with a constant matrix: the node's override, else the forced kernel,
// else sparse from the policy's zero fraction on, BLAS below it.
Expected<GemmKernel> chooseGemmKernel(const KernelPolicy& policy, const std::string& node, double zeroFraction);

// The tune policy's measurement: every applicable kernel but the naive one, timed
// on random input (median of 3 runs after one), weights w [M, Cg, kh, kw] and bias [M].
ConvKernel tuneConvKernel(const ConvAttrs& a, int64_t N, int64_t H, int64_t W, const float* w, const float* bias,
                          const Epilogue& e, int threads, GemmLibrary gemm);

}  // namespace zp::runtime
