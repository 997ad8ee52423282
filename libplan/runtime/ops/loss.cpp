// The two classification losses of the standard domain, computed in double:
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (log-softmax over the class
// axis, then the same loss; optionally the log-probabilities too). Input [N, C, d...],
// targets [N, d...], optional class weights [C], reduction none / sum / mean
// (mean divides by the summed weights of the targets that count), ignore_index.
#include <cmath>
#include <optional>

#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/dispatch.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"

namespace zp::runtime::detail {
namespace {

enum class Reduction { None, Sum, Mean };

struct LossAttrs {
  Reduction reduction = Reduction::Mean;
  std::optional<int64_t> ignoreIndex;
};

Expected<LossAttrs> lossAttrs(const onnx::NodeProto& n) {
  LossAttrs a;
  const std::string r = attrString(n, "reduction", "mean");
  if (r == "none") a.reduction = Reduction::None;
  else if (r == "sum") a.reduction = Reduction::Sum;
  else if (r != "mean") return makeError("reduction '{}' is not none, sum or mean", r);
  for (const auto& at : n.attribute())
    if (at.name() == "ignore_index") a.ignoreIndex = at.i();
  return a;
}

// logp [N, C, D] (D = product of the trailing dims) as doubles -> the loss, written
// into output 0 with x's element type.
Status nllFromLogProbs(ExecContext& ctx, const LossAttrs& a, const std::vector<double>& logp, DType type,
                       const Shape& xShape, const Tensor& target, const Tensor* weight) {
  const int64_t N = xShape[0], C = xShape[1], D = numel(xShape) / std::max<int64_t>(1, N * C);
  if (target.dtype != DType::I64 && target.dtype != DType::I32) return makeError("target must be int32 or int64");
  Shape tShape = xShape;
  tShape.erase(tShape.begin() + 1);
  if (target.shape != tShape) return makeError("target {} does not fit input {}", shapeString(target.shape), shapeString(xShape));
  if (weight && weight->size() != C) return makeError("weight has {} values for {} classes", weight->size(), C);
  const std::vector<int64_t> t = target.toI64();
  std::vector<double> w;
  if (weight) w = weight->toF64();
  std::vector<double> loss(static_cast<size_t>(N * D), 0.0);
  double weightSum = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t d = 0; d < D; ++d) {
      const int64_t cls = t[static_cast<size_t>(n * D + d)];
      if (a.ignoreIndex && cls == *a.ignoreIndex) continue;
      if (cls < 0 || cls >= C) return makeError("target {} is not a class in [0, {})", cls, C);
      const double wc = weight ? w[static_cast<size_t>(cls)] : 1.0;
      loss[static_cast<size_t>(n * D + d)] = -logp[static_cast<size_t>((n * C + cls) * D + d)] * wc;
      weightSum += wc;
    }
  double total = 0;
  for (double v : loss) total += v;
  const bool none = a.reduction == Reduction::None;
  Tensor& y = ctx.alloc(0, type, none ? tShape : Shape{});
  return visitDType(type, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      if (none) {
        for (size_t i = 0; i < loss.size(); ++i) y.ptr<T>()[i] = static_cast<T>(loss[i]);
      } else {
        y.ptr<T>()[0] = static_cast<T>(a.reduction == Reduction::Sum ? total : total / weightSum);
      }
      return {};
    } else {
      return makeError("the loss takes float32 or float64, not {}", dtypeName(type));
    }
  });
}

}  // namespace

Expected<std::unique_ptr<Op>> makeNegativeLogLikelihoodLoss(const BuildContext& bc) {
  ZP_ASSIGN_OR_RETURN(LossAttrs a, lossAttrs(*bc.node));
  return fnOp([a](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.dtype != DType::F32 && x.dtype != DType::F64) return makeError("input must be float32 or float64");
    if (x.rank() < 2) return makeError("input {} has no class axis", shapeString(x.shape));
    return nllFromLogProbs(ctx, a, x.toF64(), x.dtype, x.shape, *in[1], in.size() > 2 ? in[2] : nullptr);
  });
}

Expected<std::unique_ptr<Op>> makeSoftmaxCrossEntropyLoss(const BuildContext& bc) {
  ZP_ASSIGN_OR_RETURN(LossAttrs a, lossAttrs(*bc.node));
  const bool wantLogProb = bc.node->output_size() > 1 && !bc.node->output(1).empty();
  return fnOp([a, wantLogProb](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.dtype != DType::F32 && x.dtype != DType::F64) return makeError("scores must be float32 or float64");
    if (x.rank() < 2) return makeError("scores {} have no class axis", shapeString(x.shape));
    const int64_t N = x.shape[0], C = x.shape[1], D = x.size() / std::max<int64_t>(1, N * C);
    std::vector<double> logp = x.toF64();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t d = 0; d < D; ++d) {
        double mx = -INFINITY, sum = 0;
        for (int64_t c = 0; c < C; ++c) mx = std::max(mx, logp[static_cast<size_t>((n * C + c) * D + d)]);
        for (int64_t c = 0; c < C; ++c) sum += std::exp(logp[static_cast<size_t>((n * C + c) * D + d)] - mx);
        const double lse = mx + std::log(sum);
        for (int64_t c = 0; c < C; ++c) logp[static_cast<size_t>((n * C + c) * D + d)] -= lse;
      }
    ZP_TRY(nllFromLogProbs(ctx, a, logp, x.dtype, x.shape, *in[1], in.size() > 2 ? in[2] : nullptr));
    if (wantLogProb) {
      Tensor& lp = ctx.alloc(1, x.dtype, x.shape);
      for (int64_t i = 0; i < x.size(); ++i) {
        if (x.dtype == DType::F32) lp.ptr<float>()[i] = static_cast<float>(logp[static_cast<size_t>(i)]);
        else lp.ptr<double>()[i] = logp[static_cast<size_t>(i)];
      }
    }
    return {};
  });
}

}  // namespace zp::runtime::detail
