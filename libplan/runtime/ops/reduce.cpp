// Reductions over an axis set: Sum, Mean, Max, Min and SumSquare, accumulated in double.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/broadcast.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"

namespace zp::runtime::detail {
namespace {

// kind: 0 sum, 1 mean, 2 max, 3 min, 4 sum of squares. The axes are an attribute
// before opset 18, an input for ReduceSum from opset 13 and for all from 18.
Expected<std::unique_ptr<Op>> reduceOp(const BuildContext& bc, int kind) {
  const bool keep = attrInt(*bc.node, "keepdims", 1) != 0;
  const bool noopEmpty = attrInt(*bc.node, "noop_with_empty_axes", 0) != 0;
  const bool axesInput = (bc.node->op_type() == "ReduceSum" && bc.opset >= 13) || bc.opset >= 18;
  std::vector<int64_t> aAxes = attrInts(*bc.node, "axes");
  return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.dtype != DType::F32) return makeError("reductions support float32 only");
    std::vector<int64_t> axes = axesInput ? ((in.size() > 1 && in[1]) ? in[1]->toI64() : std::vector<int64_t>{}) : aAxes;
    const int64_t r = x.rank();
    std::vector<bool> red(static_cast<size_t>(r), false);
    if (axes.empty()) {
      if (noopEmpty) { Tensor& y = ctx.alloc(0, x.dtype, x.shape); std::memcpy(y.data, x.data, x.bytes()); return {}; }
      red.assign(static_cast<size_t>(r), true);
    }
    for (auto a : axes) {
      a = normAxis(a, r);
      if (a < 0 || a >= r) return makeError("axis out of range");
      red[static_cast<size_t>(a)] = true;
    }
    Shape s;
    for (int64_t d = 0; d < r; ++d) {
      if (!red[static_cast<size_t>(d)]) s.push_back(x.shape[static_cast<size_t>(d)]);
      else if (keep) s.push_back(1);
    }
    Tensor& y = ctx.alloc(0, DType::F32, s);
    // Reduced axes that are the innermost ones: each output reduces one contiguous block.
    int64_t firstRed = r;
    while (firstRed > 0 && red[static_cast<size_t>(firstRed - 1)]) --firstRed;
    if (std::count(red.begin(), red.end(), true) == r - firstRed && firstRed < r) {
      const int64_t inner = y.size() ? x.size() / y.size() : 0;
      const float* px = x.ptr<float>();
      float* py = y.ptr<float>();
      parallelForEach(x.size() > 65536 ? ctx.threads : 1, y.size(), [&](int64_t o, int) {
        const float* p = px + o * inner;
        double a = kind == 2 ? -INFINITY : (kind == 3 ? INFINITY : 0.0);
        for (int64_t i = 0; i < inner; ++i) {
          const double v = p[i];
          switch (kind) {
            case 0: case 1: a += v; break;
            case 2: a = std::max(a, v); break;
            case 3: a = std::min(a, v); break;
            case 4: a += v * v; break;
          }
        }
        py[o] = static_cast<float>(kind == 1 ? a / static_cast<double>(inner) : a);
      });
      return {};
    }
    // Accumulate in double over a broadcast view of y onto x.
    Shape kept;
    for (int64_t d = 0; d < r; ++d) kept.push_back(red[static_cast<size_t>(d)] ? 1 : x.shape[static_cast<size_t>(d)]);
    std::vector<double> acc(static_cast<size_t>(y.size()), kind == 2 ? -INFINITY : (kind == 3 ? INFINITY : 0.0));
    Broadcast br = makeBroadcast(x.shape, {x.shape, kept});
    const float* px = x.ptr<float>();
    forEachRow(br, [&](int64_t, const int64_t* offs, int64_t len, const int64_t* st) {
      for (int64_t i = 0; i < len; ++i) {
        double v = px[offs[0] + i * st[0]];
        double& a = acc[static_cast<size_t>(offs[1] + i * st[1])];
        switch (kind) {
          case 0: case 1: a += v; break;
          case 2: a = std::max(a, v); break;
          case 3: a = std::min(a, v); break;
          case 4: a += v * v; break;
        }
      }
    });
    const double count = y.size() ? static_cast<double>(x.size()) / static_cast<double>(y.size()) : 1.0;
    for (int64_t i = 0; i < y.size(); ++i) {
      double a = acc[static_cast<size_t>(i)];
      y.ptr<float>()[i] = static_cast<float>(kind == 1 ? a / count : a);
    }
    return {};
  });
}

}  // namespace

Expected<std::unique_ptr<Op>> makeReduceSum(const BuildContext& bc) { return reduceOp(bc, 0); }
Expected<std::unique_ptr<Op>> makeReduceMean(const BuildContext& bc) { return reduceOp(bc, 1); }
Expected<std::unique_ptr<Op>> makeReduceMax(const BuildContext& bc) { return reduceOp(bc, 2); }
Expected<std::unique_ptr<Op>> makeReduceMin(const BuildContext& bc) { return reduceOp(bc, 3); }
Expected<std::unique_ptr<Op>> makeReduceSumSquare(const BuildContext& bc) { return reduceOp(bc, 4); }

}  // namespace zp::runtime::detail
