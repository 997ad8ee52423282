// Pooling: MaxPool (on the window kernel shared with depthwise conv), AveragePool,
// and their global forms; 3-D, integer and Indices pooling in pool_general.cpp.
#include <algorithm>
#include <cassert>
#include <cmath>

#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/kernels/simd_target.h"
#include "libplan/runtime/kernels/sums.h"
#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"
#include "libplan/runtime/ops/pool_general.h"
#include "libplan/runtime/ops/sliding_window.h"

namespace zp::runtime::detail {
namespace {

struct PoolGeom {
  std::vector<int64_t> kernel, strides, pads, dil;
  bool ceil = false;
  std::string autoPad = "NOTSET";
};

Expected<std::unique_ptr<Op>> poolOp(const BuildContext& bc, bool isMax) {
  const auto& n = *bc.node;
  // 3-D pooling, MaxPool's Indices output and other element types than float32: the general path.
  auto general = makeGeneralPool(bc, isMax);
  const bool indices = n.output_size() > 1 && !n.output(1).empty();
  const size_t spatial = attrInts(n, "kernel_shape").size();
  if (indices || (spatial != 1 && spatial != 2)) return general;
  std::shared_ptr<Op> other = general.ok() ? std::shared_ptr<Op>(std::move(*general)) : nullptr;
  PoolGeom g;
  g.kernel = attrInts(n, "kernel_shape");
  g.strides = attrInts(n, "strides");
  g.pads = attrInts(n, "pads");
  g.dil = attrInts(n, "dilations");
  g.ceil = attrInt(n, "ceil_mode", 0) != 0;
  g.autoPad = attrString(n, "auto_pad", "NOTSET");
  const bool includePad = attrInt(n, "count_include_pad", 0) != 0;
  const size_t sd = g.kernel.size();
  if (g.strides.empty()) g.strides.assign(sd, 1);
  if (g.dil.empty()) g.dil.assign(sd, 1);
  if (g.pads.empty()) g.pads.assign(2 * sd, 0);
  if (sd == 1) {  // treat as 2-D with a unit height
    g.kernel.insert(g.kernel.begin(), 1);
    g.strides.insert(g.strides.begin(), 1);
    g.dil.insert(g.dil.begin(), 1);
    g.pads = {0, g.pads[0], 0, g.pads[1]};
  }
  const bool oneD = sd == 1;
  return fnOp([g, isMax, includePad, oneD, other](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.dtype != DType::F32 && other) return other->run(ctx, in);
    if (x.dtype != DType::F32 || x.rank() != (oneD ? 3 : 4)) return makeError("input {} does not fit the pooling", shapeString(x.shape));
    const int64_t N = x.shape[0], C = x.shape[1], H = oneD ? 1 : x.shape[2], W = x.shape.back();
    int64_t pt = g.pads[0], pl = g.pads[1], pb = g.pads[2], pr = g.pads[3];
    const int64_t OH = slidingWindowOut(H, g.kernel[0], g.strides[0], g.dil[0], pt, pb, g.ceil, g.autoPad);
    const int64_t OW = slidingWindowOut(W, g.kernel[1], g.strides[1], g.dil[1], pl, pr, g.ceil, g.autoPad);
    if (OH <= 0 || OW <= 0) return makeError("pooling output would be empty");
    Tensor& y = ctx.alloc(0, DType::F32, oneD ? Shape{N, C, OW} : Shape{N, C, OH, OW});
    const float* px = x.ptr<float>();
    float* py = y.ptr<float>();
    const int64_t kh = g.kernel[0], kw = g.kernel[1], sh = g.strides[0], sw = g.strides[1], dh = g.dil[0], dw = g.dil[1];
    ConvAttrs a;
    a.kh = kh; a.kw = kw; a.sh = sh; a.sw = sw; a.padT = pt; a.padL = pl;
    if (isMax) { a.dh = dh; a.dw = dw; }
    // ceil_mode windows may reach past the end padding: pad the end as far as they reach.
    a.padB = (OH - 1) * sh + a.dh * (kh - 1) + 1 - H - pt;
    a.padR = (OW - 1) * sw + a.dw * (kw - 1) + 1 - W - pl;
    if (isMax) {
      runMaxPool(a, px, N, C, H, W, py, *ctx.scratch, ctx.threads);
      return {};
    }
    // Per output row and column: how many window positions count (windows are clipped
    // to the padded input; without count_include_pad to the input itself).
    std::vector<float> rowCount(static_cast<size_t>(OH)), colCount(static_cast<size_t>(OW));
    auto count = [&](int64_t o, int64_t s, int64_t p, int64_t k, int64_t len, int64_t padEnd) {
      const int64_t b = o * s - p, e = std::min(b + k, len + padEnd);
      return includePad ? static_cast<float>(e - b) : static_cast<float>(std::min(e, len) - std::max<int64_t>(b, 0));
    };
    for (int64_t oh = 0; oh < OH; ++oh) rowCount[static_cast<size_t>(oh)] = count(oh, sh, pt, kh, H, pb);
    for (int64_t ow = 0; ow < OW; ++ow) colCount[static_cast<size_t>(ow)] = count(ow, sw, pl, kw, W, pr);
    runAvgPool(a, rowCount.data(), colCount.data(), px, N, C, H, W, py, *ctx.scratch, ctx.threads);
    return {};
  });
}

Expected<std::unique_ptr<Op>> globalPoolOp(bool isMax) {
  return fnOp([isMax](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.dtype != DType::F32 || x.rank() < 3) return makeError("input {} does not fit global pooling", shapeString(x.shape));
    Shape s = {x.shape[0], x.shape[1]};
    int64_t sp = 1;
    for (int64_t d = 2; d < x.rank(); ++d) { s.push_back(1); sp *= x.shape[static_cast<size_t>(d)]; }
    Tensor& y = ctx.alloc(0, DType::F32, s);
    const int64_t nc = x.shape[0] * x.shape[1];
    parallelForEach(nc * sp > 65536 ? ctx.threads : 1, nc, [&](int64_t i, int) {
      const float* p = x.ptr<float>() + i * sp;
      if (isMax) {
        float acc = -INFINITY;
        for (int64_t j = 0; j < sp; ++j) acc = std::max(acc, p[j]);
        y.ptr<float>()[i] = acc;
      } else {
        y.ptr<float>()[i] = sum16(p, sp) / static_cast<float>(sp);
      }
    });
    return {};
  });
}

// GlobalAveragePool that also reads a channel-blocked input (kernels.h BlockedLayouts; a
// squeeze-and-excite block's pooling of a depthwise conv's output): per channel the
// sums in the order sum16 takes over a plane, so the bits are those of planes. Its
// output, one value per channel, is the same in either layout.
class GlobalAveragePoolOp : public Op {
  static constexpr int64_t kMaxLanes = 16;  // the widest target's floats per vector (AVX-512)

 public:
  explicit GlobalAveragePoolOp(std::unique_ptr<Op> planes) : planes_(std::move(planes)) {}
  Status run(ExecContext& ctx, const std::vector<const Tensor*>& in) override {
    if (!layouts_.blockedInput) return planes_->run(ctx, in);
    const Tensor& x = *in[0];
    const int64_t b = simdFloatLanes();
    assert(x.dtype == DType::F32 && x.rank() == 4 && x.shape[1] % b == 0 && b <= kMaxLanes);
    const int64_t N = x.shape[0], blocks = x.shape[1] / b, P = x.shape[2] * x.shape[3];
    Tensor& y = ctx.alloc(0, DType::F32, {N, x.shape[1], 1, 1});
    parallelForEach(N * blocks * P * b > 65536 ? ctx.threads : 1, N * blocks, [&](int64_t nb, int) {
      const float* p = x.ptr<float>() + nb * P * b;
      float acc[16 * kMaxLanes] = {};  // [position % 16][lane], as sum16
      for (int64_t i = 0; i < P; ++i) {
        float* a = acc + (i % 16) * b;
        for (int64_t l = 0; l < b; ++l) a[l] += p[i * b + l];
      }
      for (int64_t l = 0; l < b; ++l) {
        float sum = 0;
        for (int64_t k = 0; k < 16; ++k) sum += acc[k * b + l];
        y.ptr<float>()[nb * b + l] = sum / static_cast<float>(P);
      }
    });
    return {};
  }
  std::optional<size_t> blockableInput() const override { return 0; }
  BlockedLayouts layouts() const override { return layouts_; }
  void setLayouts(BlockedLayouts layouts) override {
    assert(!layouts.blockedOutput);
    layouts_ = layouts;
  }

 private:
  std::unique_ptr<Op> planes_;
  BlockedLayouts layouts_;
};

}  // namespace

Expected<std::unique_ptr<Op>> makeMaxPool(const BuildContext& bc) { return poolOp(bc, true); }
Expected<std::unique_ptr<Op>> makeAveragePool(const BuildContext& bc) { return poolOp(bc, false); }
Expected<std::unique_ptr<Op>> makeGlobalAveragePool(const BuildContext& bc) {
  ZP_ASSIGN_OR_RETURN(std::unique_ptr<Op> planes, globalPoolOp(false));
  return std::unique_ptr<Op>(std::make_unique<GlobalAveragePoolOp>(std::move(planes)));
}
Expected<std::unique_ptr<Op>> makeGlobalMaxPool(const BuildContext& bc) { return globalPoolOp(true); }

}  // namespace zp::runtime::detail
