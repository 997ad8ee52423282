// ConvTranspose with 1 to 3 spatial dims: groups, strides, dilations, pads,
// output_padding, output_shape and auto_pad. Weights and bias may be constants or
// activations (the kernels read the ONNX layout as it is). The col2im GEMM kernel
// runs unless the policy is `naive`.
#include <algorithm>

#include "libplan/runtime/kernels/conv_transpose.h"
#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"

namespace zp::runtime::detail {
namespace {

struct ConvTransposeAttrs {
  std::vector<int64_t> kernel, strides, dil, pads, outputPadding, outputShape;
  int64_t group = 1;
  std::string autoPad = "NOTSET";
};

// A per-spatial-dim attribute: its values, or `dflt` for each dim when absent.
Expected<std::vector<int64_t>> perDim(const std::vector<int64_t>& v, size_t sd, int64_t dflt, const char* name) {
  if (v.empty()) return std::vector<int64_t>(sd, dflt);
  if (v.size() != sd) return makeError("{} has {} entries for {} spatial dims", name, v.size(), sd);
  return v;
}

// The geometry for input x [N, C, spatial...] and weight w [C, M/group, kernel...].
Expected<ConvTransposeGeom> geometry(const ConvTransposeAttrs& a, const Tensor& x, const Tensor& w) {
  const size_t sd = x.shape.size() - 2;
  if (sd < 1 || sd > 3) return makeError("input {} has {} spatial dims (1 to 3 are supported)", shapeString(x.shape), sd);
  if (w.rank() != x.rank()) return makeError("weight {} does not fit input {}", shapeString(w.shape), shapeString(x.shape));
  ConvTransposeGeom g;
  g.N = x.shape[0];
  g.C = x.shape[1];
  g.group = a.group;
  if (w.shape[0] != g.C) return makeError("weight {} is for {} input channels, the input has {}", shapeString(w.shape), w.shape[0], g.C);
  if (g.group <= 0 || g.C % g.group != 0) return makeError("group {} does not divide {} input channels", g.group, g.C);
  g.M = w.shape[1] * g.group;
  ZP_ASSIGN_OR_RETURN(auto strides, perDim(a.strides, sd, 1, "strides"));
  ZP_ASSIGN_OR_RETURN(auto dil, perDim(a.dil, sd, 1, "dilations"));
  ZP_ASSIGN_OR_RETURN(auto outPad, perDim(a.outputPadding, sd, 0, "output_padding"));
  std::vector<int64_t> pads = a.pads.empty() ? std::vector<int64_t>(2 * sd, 0) : a.pads;
  if (pads.size() != 2 * sd) return makeError("pads has {} entries for {} spatial dims", pads.size(), sd);
  std::vector<int64_t> outShape = a.outputShape;
  if (outShape.size() == sd + 2) outShape.erase(outShape.begin(), outShape.begin() + 2);
  if (!outShape.empty() && outShape.size() != sd) return makeError("output_shape has {} entries", a.outputShape.size());
  const size_t off = 3 - sd;
  for (size_t d = 0; d < sd; ++d) {
    const int64_t in = x.shape[d + 2], k = w.shape[d + 2];
    if (!a.kernel.empty() && a.kernel.size() == sd && a.kernel[d] != k)
      return makeError("kernel_shape {} does not match weight {}", shapeString(a.kernel), shapeString(w.shape));
    const int64_t full = strides[d] * (in - 1) + outPad[d] + dil[d] * (k - 1) + 1;
    int64_t target = -1;
    if (!outShape.empty()) target = outShape[d];
    else if (a.autoPad == "SAME_UPPER" || a.autoPad == "SAME_LOWER") target = in * strides[d];
    int64_t out = full - pads[d] - pads[d + sd];
    if (target >= 0) {
      // An output larger than the full one is zero (bias) at the end.
      const int64_t total = std::max<int64_t>(0, full - target);
      pads[d] = a.autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[d + sd] = total - pads[d];
      out = target;
    }
    g.in[off + d] = in;
    g.kernel[off + d] = k;
    g.stride[off + d] = strides[d];
    g.dil[off + d] = dil[d];
    g.padBegin[off + d] = pads[d];
    g.out[off + d] = out;
    if (g.out[off + d] <= 0) return makeError("output would be empty along spatial dim {}", d);
  }
  return g;
}

}  // namespace

Expected<std::unique_ptr<Op>> makeConvTranspose(const BuildContext& bc) {
  const auto& n = *bc.node;
  ConvTransposeAttrs a;
  a.kernel = attrInts(n, "kernel_shape");
  a.strides = attrInts(n, "strides");
  a.dil = attrInts(n, "dilations");
  a.pads = attrInts(n, "pads");
  a.outputPadding = attrInts(n, "output_padding");
  a.outputShape = attrInts(n, "output_shape");
  a.group = attrInt(n, "group", 1);
  a.autoPad = attrString(n, "auto_pad", "NOTSET");
  if (a.autoPad != "NOTSET" && a.autoPad != "SAME_UPPER" && a.autoPad != "SAME_LOWER" && a.autoPad != "VALID")
    return makeError("auto_pad '{}' is not supported", a.autoPad);
  const ConvTransposeKernel kernel = bc.policy && bc.policy->policy == "naive" ? ConvTransposeKernel::Naive
                                                                               : ConvTransposeKernel::Col2im;
  return fnOp([a, kernel](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    const Tensor& w = *in[1];
    const Tensor* b = in.size() > 2 ? in[2] : nullptr;
    if (x.dtype != DType::F32 || w.dtype != DType::F32 || (b && b->dtype != DType::F32))
      return makeError("ConvTranspose supports float32 only");
    if (x.rank() < 3) return makeError("input {} has no spatial dims", shapeString(x.shape));
    ZP_ASSIGN_OR_RETURN(ConvTransposeGeom g, geometry(a, x, w));
    if (b && b->size() != g.M) return makeError("bias has {} values for {} output channels", b->size(), g.M);
    Shape os = {g.N, g.M};
    for (size_t d = 3 - (x.shape.size() - 2); d < 3; ++d) os.push_back(g.out[d]);
    Tensor& y = ctx.alloc(0, DType::F32, os);
    runConvTranspose(kernel, g, x.ptr<float>(), w.ptr<float>(), b ? b->ptr<float>() : nullptr, y.ptr<float>(),
                     *ctx.scratch, ctx.threads, ctx.gemm);
    return {};
  });
}

}  // namespace zp::runtime::detail
