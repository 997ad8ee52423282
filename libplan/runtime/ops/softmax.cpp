// Softmax and LogSoftmax along one axis (opset 13) or over the flattened tail (before).
#include <algorithm>
#include <cmath>

#include "libplan/runtime/kernels/activation.h"
#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/kernels/sums.h"
#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"

namespace zp::runtime::detail {
namespace {

// Softmax of one contiguous row (the last axis): max in 16 partial maxima, the
// exponentials vectorized (activation.h), their sum in 16 partial sums.
void softmaxRow(const float* s, float* d, int64_t len, bool logSoftmax) {
  float part[16];
  std::fill(part, part + 16, -INFINITY);
  int64_t k = 0;
  for (; k + 16 <= len; k += 16)
    for (int j = 0; j < 16; ++j) part[j] = std::max(part[j], s[k + j]);
  for (; k < len; ++k) part[k % 16] = std::max(part[k % 16], s[k]);
  const float m = *std::max_element(part, part + 16);
  applyActivation(ActFn::Exp, ActParams{}, s, d, len, -m);
  const float sum = sum16(d, len);
  if (logSoftmax) {
    const float ls = std::log(sum);
    for (int64_t i = 0; i < len; ++i) d[i] = s[i] - m - ls;
  } else {
    const float inv = 1.0f / sum;
    for (int64_t i = 0; i < len; ++i) d[i] *= inv;
  }
}

Expected<std::unique_ptr<Op>> softmaxOp(const BuildContext& bc, bool logSoftmax) {
  const int opset = bc.opset;
  const int64_t axis = attrInt(*bc.node, "axis", opset >= 13 ? -1 : 1);
  return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.dtype != DType::F32) return makeError("input must be float32");
    const int64_t a = normAxis(axis, x.rank());
    if (a < 0 || a >= std::max<int64_t>(x.rank(), 1)) return makeError("axis {} out of range", axis);
    int64_t outer = 1, len = 1, inner = 1;
    for (int64_t d = 0; d < a; ++d) outer *= x.shape[static_cast<size_t>(d)];
    if (opset >= 13) {
      len = x.rank() ? x.shape[static_cast<size_t>(a)] : 1;
      for (int64_t d = a + 1; d < x.rank(); ++d) inner *= x.shape[static_cast<size_t>(d)];
    } else {
      for (int64_t d = a; d < x.rank(); ++d) len *= x.shape[static_cast<size_t>(d)];
    }
    Tensor& y = ctx.alloc(0, DType::F32, x.shape);
    const float* px = x.ptr<float>();
    float* py = y.ptr<float>();
    if (inner == 1) {
      parallelForEach(outer * len > 16384 ? ctx.threads : 1, outer, [&](int64_t o, int) {
        softmaxRow(px + o * len, py + o * len, len, logSoftmax);
      });
      return {};
    }
    parallelForEach(outer * inner > 64 ? ctx.threads : 1, outer * inner, [&](int64_t oi, int) {
      const int64_t o = oi / inner, i = oi % inner;
      const float* s = px + o * len * inner + i;
      float* d = py + o * len * inner + i;
      float m = -INFINITY;
      for (int64_t k = 0; k < len; ++k) m = std::max(m, s[k * inner]);
      double sum = 0;
      for (int64_t k = 0; k < len; ++k) {
        float e = std::exp(s[k * inner] - m);
        d[k * inner] = e;
        sum += e;
      }
      if (logSoftmax) {
        const float ls = static_cast<float>(std::log(sum));
        for (int64_t k = 0; k < len; ++k) d[k * inner] = s[k * inner] - m - ls;
      } else {
        const float inv = static_cast<float>(1.0 / sum);
        for (int64_t k = 0; k < len; ++k) d[k * inner] *= inv;
      }
    });
    return {};
  });
}

}  // namespace

Expected<std::unique_ptr<Op>> makeSoftmax(const BuildContext& bc) { return softmaxOp(bc, false); }
Expected<std::unique_ptr<Op>> makeLogSoftmax(const BuildContext& bc) { return softmaxOp(bc, true); }

}  // namespace zp::runtime::detail
