#include "libplan/runtime/kernels/conv_primitives.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstring>

#include "libplan/runtime/kernels/dnnl_context.h"
#include "libplan/runtime/kernels/gemm.h"
#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/kernels/simd_target.h"
#include "libplan/runtime/kernels/transpose.h"

namespace zp::runtime {

namespace {

// Output positions per band of rows at most (a band's NHWC input and output stay in
// L2) and at least (a primitive's call and its halo rows stay small against its work).
constexpr int64_t kBandPositions = 2048;
constexpr int64_t kMinBandPositions = 256;
// Pieces a conv is cut into at least, where the bands allow: on Inception's 17x17 maps
// three panels alone kept one of two threads idle a third of the time.
constexpr int64_t kMinPieces = 4;
// Pieces a grouped conv of one band is cut into (panels of whole groups): each piece
// is a primitive call of its own, about 3 us; on RegNet-X's 7x7 and 14x14 maps (60-80 us
// at one thread) four pieces cost one thread 8-19% on those convs, two nothing measurable,
// and two save two threads 0.55 ms of those convs' 2.2.
constexpr int64_t kMinGroupedPieces = 2;
// Output channels per panel at most (a multiple of 16: the primitives' channel block).
constexpr int64_t kPanelChannels = 64;

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

float* threadOutput(size_t count) {
  thread_local std::vector<float> out;
  if (out.size() < count) out.resize(count);
  return out.data();
}

}  // namespace

// One panel's output channels: its weights, and a primitive per band shape. A grouped
// conv's panel is whole groups and reads only their input channels c0..c0+channels-1;
// an ungrouped one's reads them all.
struct ConvPrimitives::Panel {
  int64_t m0 = 0, width = 0, c0 = 0, channels = 0;
  dnnl::memory weights;  // in the primitives' layout
  std::vector<dnnl::convolution_forward> primitives;  // per entry of shapes_
  std::vector<dnnl::memory::desc> scratchpads;  // theirs
};

ConvPrimitives::~ConvPrimitives() = default;

ConvPrimitivesIsa convPrimitivesIsa() {
#if defined(__x86_64__)
  const int64_t lanes = simdFloatLanes();
  return lanes >= 16 ? ConvPrimitivesIsa::Avx512 : lanes == 8 ? ConvPrimitivesIsa::Avx2 : ConvPrimitivesIsa::None;
#else
  return ConvPrimitivesIsa::None;
#endif
}

std::unique_ptr<ConvPrimitives> ConvPrimitives::make(const ConvAttrs& a, int64_t N, int64_t H, int64_t W,
                                                     const float* w) {
  if (N <= 0 || H <= 0 || W <= 0 || a.outH(H) <= 0 || a.outW(W) <= 0) return nullptr;
  useSingleThreadedGemm();
  std::unique_ptr<ConvPrimitives> cp(new ConvPrimitives());
  cp->a_ = a;
  cp->N_ = N;
  cp->H_ = H;
  cp->W_ = W;
  cp->OH_ = a.outH(H);
  cp->OW_ = a.outW(W);
  // Equal panels (a multiple of 16 wide) rather than a narrow last one. A grouped conv
  // is one panel of all groups where its bands are pieces enough, else panels of whole
  // groups (RegNet's 14x14 and 7x7 maps: one band each), each with its input channels
  // in NHWC of their own: oneDNN's kernels take no strided part of a pixel's channels.
  int64_t width = a.M;
  if (a.group == 1) {
    const int64_t count = (a.M + kPanelChannels - 1) / kPanelChannels;
    width = ((a.M + count - 1) / count + 15) / 16 * 16;
  } else if (const int64_t bands = cp->bandCount(1); bands < kMinPieces) {
    const int64_t wanted = std::min<int64_t>(a.group, (kMinGroupedPieces + bands - 1) / bands);
    width = (a.group + wanted - 1) / wanted * (a.M / a.group);
  }
  cp->cutBands((a.M + width - 1) / width);
  try {
    for (int64_t m0 = 0; m0 < a.M; m0 += width)
      if (!cp->addPanel(w, m0, std::min(width, a.M - m0))) return nullptr;
    dnnlThreadStream().wait();
  } catch (const dnnl::error&) {
    return nullptr;  // out of memory, or no implementation: the conv stays on the runtime's kernels
  }
  return cp;
}

int64_t ConvPrimitives::bandCount(int64_t panels) const {
  const int64_t wanted = (kMinPieces + panels - 1) / panels;
  const int64_t positions = std::clamp((OH_ * OW_ + wanted - 1) / wanted, kMinBandPositions, kBandPositions);
  const int64_t perBand = std::max<int64_t>(1, (positions + OW_ - 1) / OW_);
  return (OH_ + perBand - 1) / perBand;
}

// Bands of output rows as equal as whole rows allow, each with the input rows it
// reads: the rows beyond the map are the band's own padding.
void ConvPrimitives::cutBands(int64_t panels) {
  const int64_t count = bandCount(panels);
  const int64_t base = OH_ / count, taller = OH_ % count;
  for (int64_t b = 0, oh0 = 0; b < count; ++b) {
    const int64_t rows = base + (b < taller ? 1 : 0);
    const int64_t start = oh0 * a_.sh - a_.padT;
    const int64_t end = (oh0 + rows - 1) * a_.sh - a_.padT + (a_.kh - 1) * a_.dh + 1;
    const int64_t ih0 = std::clamp<int64_t>(start, 0, H_), ih1 = std::clamp<int64_t>(end, ih0, H_);
    const BandShape s{ih1 - ih0, ih0 - start, end - ih1, rows};
    const auto it = std::find(shapes_.begin(), shapes_.end(), s);
    bands_.push_back({oh0, rows, ih0, static_cast<int>(it - shapes_.begin())});
    if (it == shapes_.end()) shapes_.push_back(s);
    oh0 += rows;
  }
}

bool ConvPrimitives::addPanel(const float* w, int64_t m0, int64_t width) {
  auto p = std::make_unique<Panel>();
  p->m0 = m0;
  p->width = width;
  const int64_t G = a_.group > 1 ? width / (a_.M / a_.group) : 1;  // this panel's groups
  p->c0 = a_.group > 1 ? m0 / (a_.M / a_.group) * a_.Cg : 0;
  p->channels = a_.group > 1 ? G * a_.Cg : a_.C();
  const int64_t C = p->channels;
  const dnnl::memory::dims weightDims =
      G > 1 ? dnnl::memory::dims{G, width / G, a_.Cg, a_.kh, a_.kw} : dnnl::memory::dims{width, C, a_.kh, a_.kw};
  const dnnl::memory::desc anyWeights(weightDims, dt::f32, tag::any);
  const dnnl::memory::desc bias({width}, dt::f32, tag::a);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  for (const BandShape& s : shapes_) {
    if (s.inRows <= 0) return false;
    const dnnl::memory::desc src({1, C, s.inRows, W_}, dt::f32, tag::nhwc);
    const dnnl::memory::desc dst({1, width, s.outRows, OW_}, dt::f32, tag::nhwc);
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
                                      anyWeights, bias, dst, {a_.sh, a_.sw}, {a_.dh - 1, a_.dw - 1},
                                      {s.padT, a_.padL}, {s.padB, a_.padR});
    dnnl::convolution_forward::primitive_desc pd(d, attr, dnnlEngine());
    // The reference implementation and oneDNN's own im2col are no faster than ours.
    const std::string impl = pd.impl_info_str();
    if (impl.rfind("ref", 0) == 0 || impl.find("gemm") != std::string::npos) return false;
    // w's rows m0.. are this panel's output channels, [width, C, kh, kw] as ONNX has them.
    const dnnl::memory::desc given(weightDims, dt::f32, G > 1 ? tag::goihw : tag::oihw);
    if (!reorderWeightsOnce(given, w + m0 * a_.Cg * a_.kh * a_.kw, pd.weights_desc(), &p->weights))
      return false;  // the bands would want the weights in two layouts
    p->primitives.push_back(dnnl::convolution_forward(pd));
    p->scratchpads.push_back(pd.scratchpad_desc());
  }
  panels_.push_back(std::move(p));
  return true;
}

size_t ConvPrimitives::bytes() const {
  size_t b = 0;
  for (const auto& p : panels_) b += p->weights.get_desc().get_size();
  return b;
}

void ConvPrimitives::run(const float* x, const float* bias, const Epilogue& e, float* y, Scratch& scratch,
                         int threads, const float* residual) const {
  const int64_t C = a_.C(), HW = H_ * W_, OHW = OH_ * OW_;
  // The input in NHWC: per panel's input channels (all of them but in a grouped conv's
  // panels), every image one after another: a panel's image n at N * HW * c0 + n * HW * channels.
  float* xt = scratch.floats(static_cast<size_t>(N_ * HW * C));
  // An ungrouped conv's panels share one input (its first panel's: all channels).
  const size_t inputs = a_.group > 1 ? panels_.size() : 1;
  for (size_t i = 0; i < inputs; ++i) {
    const Panel* p = panels_[i].get();
    std::vector<int64_t> planes;
    for (int64_t n = 0; n < N_; ++n) planes.push_back(n * C * HW + p->c0 * HW);
    transposePlanes(reinterpret_cast<const uint32_t*>(x), planes, HW, p->channels, HW,
                    reinterpret_cast<uint32_t*>(xt + N_ * HW * p->c0), threads);
  }
  const int64_t nb = static_cast<int64_t>(bands_.size()), np = static_cast<int64_t>(panels_.size());
  const int64_t tasks = N_ * np * nb;
  parallelForEach(std::min<int64_t>(threads, tasks), tasks, [&](int64_t t, int) {
    const int64_t n = t / (np * nb);
    const Panel& p = *panels_[static_cast<size_t>(t / nb % np)];
    const Band& band = bands_[static_cast<size_t>(t % nb)];
    const BandShape& s = shapes_[static_cast<size_t>(band.shape)];
    const int64_t positions = band.rows * OW_;
    float* out = threadOutput(static_cast<size_t>(positions * p.width));
    const dnnl::memory::desc srcDesc({1, p.channels, s.inRows, W_}, dt::f32, tag::nhwc);
    const dnnl::memory::desc dstDesc({1, p.width, s.outRows, OW_}, dt::f32, tag::nhwc);
    const dnnl::memory::desc biasDesc({p.width}, dt::f32, tag::a);
    dnnl::memory src(srcDesc, dnnlEngine(), xt + N_ * HW * p.c0 + (n * HW + band.ih0 * W_) * p.channels);
    dnnl::memory dst(dstDesc, dnnlEngine(), out);
    dnnl::memory b(biasDesc, dnnlEngine(), const_cast<float*>(bias + p.m0));
    const auto shape = static_cast<size_t>(band.shape);
    executeOnThisThread(p.primitives[shape], {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, p.weights}, {DNNL_ARG_BIAS, b},
                                              {DNNL_ARG_DST, dst}}, p.scratchpads[shape]);
    const int64_t at = (n * a_.M + p.m0) * OHW + band.oh0 * OW_;
    float* yp = y + at;
    transposeInto(reinterpret_cast<const uint32_t*>(out), p.width, positions, p.width,
                  reinterpret_cast<uint32_t*>(yp), OHW);
    // The band's planes are still in cache: the residual is added here.
    if (e.kind != Epilogue::None || residual)
      for (int64_t m = 0; m < p.width; ++m)
        applyEpilogue(yp + m * OHW, 1, positions, nullptr, e, residual ? residual + at + m * OHW : nullptr);
  }, 1);
}

}  // namespace zp::runtime
