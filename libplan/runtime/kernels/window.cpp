#include "libplan/runtime/kernels/kernels.h"

#include "libplan/runtime/kernels/internal.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "libplan/runtime/kernels/parallel.h"

namespace zp::runtime {

// Window kernels (depthwise conv; pooling the row kernels of pool_rows.cpp do not
// take: column strides above 2). Each channel plane is copied once
// into padded buffers split by row and column phase (input row
// sh*r + pr goes to row phase pr, slot r; likewise columns), so every tap of every
// stride and dilation reads at a constant offset from the output position and no
// tap needs a bounds check. Output (oh, ow) lives at flat position oh*Wq + ow, so
// whole planes run as one long row in blocks of four vectors: four independent
// accumulators per tap keep the vector units busy even on 7x7 maps. The Wq - OW
// padding columns per row are computed and dropped when copying out.
namespace {

struct WindowGeom {
  int64_t OH = 0, OW = 0, R = 0, Wq = 0, phaseStride = 0, phases = 0;
  std::vector<int64_t> tapOffset;  // per tap (i, j): offset of output (0, 0)'s input
  static constexpr int64_t kSlack = kFlatBlockMax;  // the flat rows run whole blocks
  int64_t flatLen() const { return OH * Wq; }
  int64_t planeFloats() const { return phases * phaseStride + kSlack; }
};

WindowGeom windowGeom(const ConvAttrs& a, int64_t H, int64_t W) {
  WindowGeom g;
  g.OH = a.outH(H);
  g.OW = a.outW(W);
  g.R = g.OH + (a.dh * (a.kh - 1)) / a.sh;
  g.Wq = g.OW + (a.dw * (a.kw - 1)) / a.sw;
  g.phaseStride = g.R * g.Wq;
  g.phases = a.sh * a.sw;
  for (int64_t i = 0; i < a.kh; ++i)
    for (int64_t j = 0; j < a.kw; ++j) {
      const int64_t row = i * a.dh, col = j * a.dw;
      const int64_t phase = (row % a.sh) * a.sw + col % a.sw;
      g.tapOffset.push_back(phase * g.phaseStride + (row / a.sh) * g.Wq + col / a.sw);
    }
  return g;
}

void windowPadPlane(const ConvAttrs& a, const WindowGeom& g, const float* src, int64_t H, int64_t W, float pad,
                    float* q) {
  for (int64_t pr = 0; pr < a.sh; ++pr)
    for (int64_t pc = 0; pc < a.sw; ++pc) {
      float* plane = q + (pr * a.sw + pc) * g.phaseStride;
      // Slots k whose input column k*sw + pc - padL lies inside [0, W): [kLo, kHi).
      const int64_t sw = a.sw, first = pc - a.padL;
      const int64_t kLo = std::min(g.Wq, first >= 0 ? 0 : (-first + sw - 1) / sw);
      const int64_t kHi = std::max(kLo, std::min(g.Wq, (W - first + sw - 1) / sw));
      for (int64_t r = 0; r < g.R; ++r) {
        float* dst = plane + r * g.Wq;
        const int64_t ih = r * a.sh + pr - a.padT;
        if (ih < 0 || ih >= H) { std::fill(dst, dst + g.Wq, pad); continue; }
        const float* sp = src + ih * W + first;
        std::fill(dst, dst + kLo, pad);
        if (sw == 1) std::memcpy(dst + kLo, sp + kLo, static_cast<size_t>(kHi - kLo) * 4);
        else if (sw == 2) copyEven(sp, kLo, kHi, dst);
        else
          for (int64_t k = kLo; k < kHi; ++k) dst[k] = sp[k * sw];
        std::fill(dst + kHi, dst + g.Wq, pad);
      }
    }
  // The last block may read up to kSlack floats past the last phase plane.
  std::fill(q + g.phases * g.phaseStride, q + g.planeFloats(), pad);
}

}  // namespace

void convDepthwise(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H,
                   int64_t W, float* y, const Epilogue& epilogue, Scratch& scratch, int threads) {
  if (depthwiseBlockedPays(a)) return convDepthwiseBlocked(a, pw, x, N, H, W, y, epilogue, scratch, threads);
  if (depthwiseRowsPay(a, H, W)) return convDepthwiseRows(a, pw, x, N, H, W, y, epilogue, threads);
  convDepthwiseWindow(a, pw, x, N, H, W, y, epilogue, scratch, threads);
}

void convDepthwiseWindow(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H,
                         int64_t W, float* y, const Epilogue& epilogue, Scratch& scratch, int threads) {
  // The flat loops clamp; an activation function runs over each finished flat row.
  const Epilogue e = epilogue.clampOnly() ? epilogue : Epilogue{};
  const int64_t mult = a.M / a.group, C = a.C(), taps = a.kh * a.kw;
  const float* w = pw.get("w").as<float>();
  const float* bias = pw.get("bias").as<float>();
  const WindowGeom g = windowGeom(a, H, W);
  const int64_t plane = g.planeFloats(), flatLen = g.flatLen() + WindowGeom::kSlack;
  const std::vector<float*> planes = scratch.workerFloats(threads, static_cast<size_t>(plane), 0);
  const std::vector<float*> flats = scratch.workerFloats(threads, static_cast<size_t>(flatLen), 1);
  parallelForEach(threads, N * C, [&](int64_t nc, int tid) {
    const int64_t n = nc / C, c = nc % C;
    float* q = planes[static_cast<size_t>(tid)];
    float* flat = flats[static_cast<size_t>(tid)];
    windowPadPlane(a, g, x + (n * C + c) * H * W, H, W, 0.0f, q);
    for (int64_t k = 0; k < mult; ++k) {
      const int64_t m = c * mult + k;
      depthwiseFlatRow(q, g.tapOffset.data(), taps, g.flatLen(), w + m * taps, bias[m], e, flat);
      if (!epilogue.clampOnly()) applyActivation(epilogue.fn, epilogue.params, flat, flat, g.flatLen());
      float* dst = y + (n * a.M + m) * g.OH * g.OW;
      for (int64_t oh = 0; oh < g.OH; ++oh)
        std::memcpy(dst + oh * g.OW, flat + oh * g.Wq, static_cast<size_t>(g.OW) * 4);
    }
  });
}

namespace {

// Pools each of the `planes` planes of x: the plane padded with `pad`, its taps folded
// into one flat row by combine(acc, tap) (the first tap copied), and emit(flat, dst)
// writing the OH x OW outputs from the row (output (oh, ow) at flat[oh * Wq + ow]).
template <typename Combine, typename Emit>
void poolPlanes(const ConvAttrs& a, const float* x, int64_t planes, int64_t H, int64_t W, float pad, float* y,
                Scratch& scratch, int threads, Combine combine, Emit emit) {
  threads = std::max(1, threads);
  const WindowGeom g = windowGeom(a, H, W);
  const int64_t plane = g.planeFloats(), flatLen = g.flatLen() + WindowGeom::kSlack;
  const int64_t taps = static_cast<int64_t>(g.tapOffset.size());
  const int64_t* off = g.tapOffset.data();
  const std::vector<float*> padded = scratch.workerFloats(threads, static_cast<size_t>(plane), 0);
  const std::vector<float*> flats = scratch.workerFloats(threads, static_cast<size_t>(flatLen), 1);
  parallelForEach(threads, planes, [&](int64_t nc, int tid) {
    float* q = padded[static_cast<size_t>(tid)];
    float* flat = flats[static_cast<size_t>(tid)];
    windowPadPlane(a, g, x + nc * H * W, H, W, pad, q);
    const int64_t L = g.flatLen();
    std::copy(q + off[0], q + off[0] + L, flat);
    for (int64_t t = 1; t < taps; ++t) {
      const float* s = q + off[t];
      for (int64_t f = 0; f < L; ++f) flat[f] = combine(flat[f], s[f]);
    }
    emit(g, flat, y + nc * g.OH * g.OW);
  });
}

}  // namespace

void runMaxPool(const ConvAttrs& a, const float* x, int64_t N, int64_t C, int64_t H, int64_t W, float* y,
                Scratch& scratch, int threads) {
  if (poolBlockedPays(a, H, W)) return maxPoolBlocked(a, x, N * C, H, W, y, scratch, threads);
  if (poolRowsApply(a)) return maxPoolRows(a, x, N * C, H, W, y, scratch, threads);
  poolPlanes(
      a, x, N * C, H, W, -INFINITY, y, scratch, threads, [](float acc, float v) { return std::max(acc, v); },
      [](const WindowGeom& g, const float* flat, float* dst) {
        for (int64_t oh = 0; oh < g.OH; ++oh)
          std::memcpy(dst + oh * g.OW, flat + oh * g.Wq, static_cast<size_t>(g.OW) * 4);
      });
}

void runAvgPool(const ConvAttrs& a, const float* rowCount, const float* colCount, const float* x, int64_t N,
                int64_t C, int64_t H, int64_t W, float* y, Scratch& scratch, int threads) {
  if (poolBlockedPays(a, H, W)) return avgPoolBlocked(a, rowCount, colCount, x, N * C, H, W, y, scratch, threads);
  if (poolRowsApply(a)) return avgPoolRows(a, rowCount, colCount, x, N * C, H, W, y, scratch, threads);
  poolPlanes(
      a, x, N * C, H, W, 0.0f, y, scratch, threads, [](float acc, float v) { return acc + v; },
      [&](const WindowGeom& g, const float* flat, float* dst) {
        for (int64_t oh = 0; oh < g.OH; ++oh)
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            const float count = rowCount[oh] * colCount[ow];
            dst[oh * g.OW + ow] = count > 0 ? flat[oh * g.Wq + ow] / count : 0.0f;
          }
      });
}

}  // namespace zp::runtime
