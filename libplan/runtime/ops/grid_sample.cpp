// GridSample on 4-D inputs: X [N, C, H, W] sampled at grid [N, Hout, Wout, 2] of
// normalized (x, y) in [-1, 1]; nearest, bilinear and bicubic (a = -0.75) sampling;
// zeros, border and reflection padding; align_corners. Coordinates outside the
// input are first moved inside for reflection padding, and for border padding unless
// sampling is bicubic (as ONNX Runtime does), then each tap reads the input through
// the padding.
#include <algorithm>
#include <cmath>

#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"

namespace zp::runtime::detail {
namespace {

enum class Sampling { Nearest, Linear, Cubic };
enum class Padding { Zeros, Border, Reflection };

// x reflected into [lo, hi] (again and again when it lies several ranges away).
float reflectInto(float x, float lo, float hi) {
  const float range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const float d = lo - x;
    const int n = static_cast<int>(d / range);
    const float r = d - static_cast<float>(n) * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const float d = x - hi;
    const int n = static_cast<int>(d / range);
    const float r = d - static_cast<float>(n) * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

void cubicCoeffs(float t, float c[4]) {
  const float a = -0.75f;
  t = std::fabs(t);
  c[0] = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;
  c[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  c[2] = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1;
  c[3] = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a;
}

struct Sampler {
  Sampling mode;
  Padding padding;
  bool alignCorners;
  int64_t H, W;
  float xlo, xhi, ylo, yhi;  // the input's extent in pixel coordinates

  Sampler(Sampling m, Padding p, bool ac, int64_t h, int64_t w) : mode(m), padding(p), alignCorners(ac), H(h), W(w) {
    xlo = ac ? 0.0f : -0.5f;
    ylo = xlo;
    xhi = ac ? static_cast<float>(W - 1) : static_cast<float>(W) - 0.5f;
    yhi = ac ? static_cast<float>(H - 1) : static_cast<float>(H) - 0.5f;
  }

  float pixelCoord(float n, int64_t len) const {
    return alignCorners ? (n + 1) / 2 * static_cast<float>(len - 1) : ((n + 1) * static_cast<float>(len) - 1) / 2;
  }

  float at(const float* img, int64_t r, int64_t c) const {
    switch (padding) {
      case Padding::Zeros: return r >= 0 && r < H && c >= 0 && c < W ? img[r * W + c] : 0.0f;
      case Padding::Border: return img[std::clamp<int64_t>(r, 0, H - 1) * W + std::clamp<int64_t>(c, 0, W - 1)];
      case Padding::Reflection: {
        const auto rr = static_cast<int64_t>(reflectInto(static_cast<float>(r), ylo, yhi));
        const auto cc = static_cast<int64_t>(reflectInto(static_cast<float>(c), xlo, xhi));
        return img[std::clamp<int64_t>(rr, 0, H - 1) * W + std::clamp<int64_t>(cc, 0, W - 1)];
      }
    }
    return 0.0f;
  }

  float sample(const float* img, float gx, float gy) const {
    float x = pixelCoord(gx, W), y = pixelCoord(gy, H);
    if (mode == Sampling::Nearest) { x = std::nearbyint(x); y = std::nearbyint(y); }
    if (x < xlo || x > xhi || y < ylo || y > yhi) {
      if (padding == Padding::Border && mode != Sampling::Cubic) {
        x = std::clamp(x, 0.0f, static_cast<float>(W - 1));
        y = std::clamp(y, 0.0f, static_cast<float>(H - 1));
      } else if (padding == Padding::Reflection) {
        x = reflectInto(x, xlo, xhi);
        y = reflectInto(y, ylo, yhi);
      }
    }
    if (mode == Sampling::Nearest) return at(img, static_cast<int64_t>(y), static_cast<int64_t>(x));
    if (mode == Sampling::Linear) {
      const float x1 = std::floor(x), y1 = std::floor(y);
      const float dx = x - x1, dy = y - y1;
      const auto c = static_cast<int64_t>(x1), r = static_cast<int64_t>(y1);
      return (1 - dy) * ((1 - dx) * at(img, r, c) + dx * at(img, r, c + 1)) +
             dy * ((1 - dx) * at(img, r + 1, c) + dx * at(img, r + 1, c + 1));
    }
    const float x0 = std::floor(x) - 1, y0 = std::floor(y) - 1;
    const auto c0 = static_cast<int64_t>(x0), r0 = static_cast<int64_t>(y0);
    float cx[4], cy[4], rows[4];
    cubicCoeffs(x - x0 - 1, cx);
    cubicCoeffs(y - y0 - 1, cy);
    for (int64_t i = 0; i < 4; ++i) {
      rows[i] = 0;
      for (int64_t j = 0; j < 4; ++j) rows[i] += cx[j] * at(img, r0 + i, c0 + j);
    }
    return cy[0] * rows[0] + cy[1] * rows[1] + cy[2] * rows[2] + cy[3] * rows[3];
  }
};

}  // namespace

Expected<std::unique_ptr<Op>> makeGridSample(const BuildContext& bc) {
  const std::string modeName = attrString(*bc.node, "mode", bc.opset >= 20 ? "linear" : "bilinear");
  const std::string padName = attrString(*bc.node, "padding_mode", "zeros");
  Sampling mode;
  if (modeName == "nearest") mode = Sampling::Nearest;
  else if (modeName == "bilinear" || modeName == "linear") mode = Sampling::Linear;
  else if (modeName == "bicubic" || modeName == "cubic") mode = Sampling::Cubic;
  else return makeError("GridSample mode '{}' is not supported", modeName);
  Padding padding;
  if (padName == "zeros") padding = Padding::Zeros;
  else if (padName == "border") padding = Padding::Border;
  else if (padName == "reflection") padding = Padding::Reflection;
  else return makeError("GridSample padding_mode '{}' is not supported", padName);
  const bool alignCorners = attrInt(*bc.node, "align_corners", 0) != 0;
  return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    const Tensor& grid = *in[1];
    if (x.dtype != DType::F32 || grid.dtype != DType::F32) return makeError("GridSample supports float32 only");
    if (x.rank() != 4 || grid.rank() != 4 || grid.shape[0] != x.shape[0] || grid.shape[3] != 2)
      return makeError("input {} and grid {} are not [N,C,H,W] and [N,Hout,Wout,2] (only 2-D sampling is supported)",
                       shapeString(x.shape), shapeString(grid.shape));
    const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
    const int64_t Ho = grid.shape[1], Wo = grid.shape[2];
    if (H == 0 || W == 0) return makeError("input {} is empty", shapeString(x.shape));
    Tensor& y = ctx.alloc(0, DType::F32, {N, C, Ho, Wo});
    const Sampler s(mode, padding, alignCorners, H, W);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c) {
        const float* img = x.ptr<float>() + (n * C + c) * H * W;
        const float* g = grid.ptr<float>() + n * Ho * Wo * 2;
        float* out = y.ptr<float>() + (n * C + c) * Ho * Wo;
        for (int64_t p = 0; p < Ho * Wo; ++p) out[p] = s.sample(img, g[2 * p], g[2 * p + 1]);
      }
    return {};
  });
}

}  // namespace zp::runtime::detail
