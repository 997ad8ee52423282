#include "libplan/runtime/kernel_policy.h"

#include "libplan/runtime/kernels/conv_primitives.h"
#include "libplan/runtime/kernels/simd_target.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

namespace zp::runtime {

const std::vector<std::string>& policyNames() {
  static const std::vector<std::string> names = {"default", "tune", "naive", "im2col", "gemm1x1",
                                                 "winograd", "depthwise", "sparse", "blas",
                                                 "packed1x1", "direct", "onednn", "direct_rows"};
  return names;
}

bool isKnownPolicy(const std::string& name) {
  const auto& n = policyNames();
  return std::find(n.begin(), n.end(), name) != n.end();
}

Expected<ConvKernel> chooseConvKernel(const KernelPolicy& p, const ConvNode& node, const ConvTuner& tune) {
  ConvKernel k;
  if (auto it = p.perNode.find(node.name); it != p.perNode.end()) {
    if (!parseConvKernel(it->second, &k)) return makeError("kernel '{}' is not a Conv kernel", it->second);
    if (!convKernelApplies(k, node.attrs)) return makeError("kernel '{}' does not apply to this Conv", it->second);
    return k;
  }
  if (parseConvKernel(p.policy, &k) && convKernelApplies(k, node.attrs)) return k;
  if (p.policy == "tune" && node.tunable) return tune();
  return defaultConvKernel(node.attrs, node.input, node.zeroFraction, p.sparseThreshold, node.gemm, node.feedsDepthwise,
                           node.fedByDepthwise);
}

// Winograd F(2x2,3x3) against im2col and the direct kernel (one thread, per conv, an
// AVX-512 host): 0.5-0.85x im2col's time from 16 input and output channels on maps of
// 27x27 and more (SqueezeNet's, DenseNet's 56x56 and 28x28 to 32 channels, Inception's
// and EfficientNet-V2's stems), and from 64 channels on maps down to 8x8; below those
// the direct kernel wins (DenseNet's 14x14 and 7x7: 0.56 and 0.37x against 0.66 and 0.75x),
// and on 16 -> 16 convs (the small zoos' 64x64 and 32x32 maps: 0.65-0.75x Winograd's
// time on AVX-512, 0.93-0.97x on AVX2).
static bool winogradPays(const ConvAttrs& a, bool known, int64_t H, int64_t W) {
  if (!known) return a.Cg >= 64 && a.M >= 64;
  const int64_t side = std::min(H, W);
  return (a.Cg >= 16 && a.M >= 16 && std::max(a.Cg, a.M) >= 32 && side >= 27) ||
         (a.Cg >= 64 && a.M >= 64 && side >= 8);
}

// Thresholds measured with bench/runtime on an AVX-512 host (GEMM in oneDNN). The
// sparse kernel (one thread, against the best of im2col/gemm1x1/winograd) breaks even at 70-80% zeros on kxk convs of any
// stride and map size (ResNet-18's: 1.0-2.1x at 80%, the lowest on 28x28x128 against
// Winograd, 1.9-3.2x at 90%; the digits nets' 8x8 and 4x4 maps: 1.4-3x at 80%), but 1x1
// convs are a plain GEMM for dense: there sparse needs ~90% zeros (1.1-2.3x at 90% on
// ResNet-50's 1x1s and ResNet-18's strided ones from 7x7 up, 0.9x with 96 input
// channels) and still loses on maps smaller than 7x7 (its fixed cost).
// oneDNN's convolution primitive against the kernel picked below, per conv at one
// thread on an AVX-512 host, on torchvision's models. Its AVX-512 kernels (brgconv):
// 0.5-0.8x the direct kernel's time (Inception's 1x7 and 7x1 convs, GoogLeNet's 3x3s
// at 7x7), 0.75-0.85x im2col's (ResNet's strided and 7x7-map 3x3s), 0.65-0.8x
// Winograd's with 32 input or output channels (Inception's stem, DenseNet's growth
// convs) or on 8x8 maps. Winograd stays ahead on maps of 14x14 and up where the
// harmonic mean of the input and output channels is 64 or more (VGG: 0.55-0.85x
// oneDNN's time, EfficientNet-V2's 48 -> 192 convs 0.62-0.74x); on grouped convs of 16
// and more channels per group (RegNet's, ResNeXt's last stages) 0.8-0.97x the direct
// kernel's. Its AVX2 kernels against the runtime's AVX2 path (plan-run --simd avx2):
// 0.44-0.8x the direct kernel's time (Inception's, DenseNet's, GoogLeNet's), 0.7-0.94x
// im2col's (ResNet-50's), but 1.2-2x Winograd's wherever that pays and 1.0-1.1x the
// grouped direct kernel's (RegNet-X). Both lose on 1x1s (the transposes to and from
// NHWC cost more than the GEMM's packing), on stems of 3 input channels to 16-64
// channels with 3x3 windows at stride 2 (1.1-1.5x; against direct_rows on AVX-512 the
// wider and stride-1 stems of 64 channels pay, below; GoogLeNet's 7x7 stem on AVX2
// 0.71x), on groups of 4 and 8 channels
// (up to 1.1x) and on the small zoos' 16 -> 16 convs (1.05-1.6x the direct kernel's
// time on 64x64 to 32x32 maps).
static bool oneDnnConvPays(const ConvAttrs& a, bool known, int64_t H, int64_t W) {
  const ConvPrimitivesIsa isa = convPrimitivesIsa();
  if (!known || isa == ConvPrimitivesIsa::None || !convKernelApplies(ConvKernel::OneDnn, a)) return false;
  // Stems of 64 or more outputs with wide windows or at stride 1 (AVX-512, in the
  // models, one thread, against direct_rows): ResNet-18's, ResNet-50's and GoogLeNet's
  // 7x7/2 0.92-0.93x its time, AlexNet's 11x11/4 0.89x, VGG's 3x3/1 0.70x, DenseNet's
  // 7x7/2 a tie; SqueezeNet's 3x3/2 to 64 1.5x and the mobile stems' 3x3/2 to 16-32
  // 1.4x stay on it.
  const bool wideStem = isa == ConvPrimitivesIsa::Avx512 && a.C() <= 4 && a.group == 1 && a.M >= 64 &&
                        (a.kh * a.kw >= 49 || (a.sh == 1 && a.sw == 1 && a.kh * a.kw > 1));
  if (wideStem) return true;
  if ((a.kh == 1 && a.kw == 1) || a.Cg < 16 || (a.group == 1 && a.M < 32)) return false;
  if (isa == ConvPrimitivesIsa::Avx2)
    return a.group == 1 && !(convKernelApplies(ConvKernel::Winograd, a) && winogradPays(a, known, H, W));
  // Winograd ahead from 28x28 maps; on 14x14 ones oneDNN took 0.77-0.99x its time in
  // all 17 convs measured (ResNet-18's and ResNet-50's layer 3, Wide ResNet-50's, VGG's
  // 512 -> 512, GoogLeNet's inception 4a-4e), where on 28x28 and 35x35 Winograd stayed
  // ahead (ResNet-18's layer 2, VGG's, GoogLeNet's inception 3, Inception's 96 -> 96).
  const bool winogradAhead = convKernelApplies(ConvKernel::Winograd, a) && 2 * a.Cg * a.M >= 64 * (a.Cg + a.M) &&
                             std::min(H, W) >= 28;
  // From at most 32 channels on maps up to 64x64 at stride 1, Winograd where it pays
  // and the direct kernel elsewhere took 0.66-0.92x its time (in the models, one thread:
  // SqueezeNet's 16 -> 64 on 55x55 and 32 -> 128 on 27x27, GoogLeNet's 16-32 -> 32-128
  // on 28x28 and 14x14; 7x7 a tie); on larger maps it stays ahead (Inception's 32 -> 64
  // on 147x147: 0.85x the direct kernel's time).
  const bool fewChannels = a.group == 1 && a.Cg <= 32 && a.sh == 1 && a.sw == 1 && std::max(H, W) <= 64;
  return !winogradAhead && !fewChannels;
}

ConvKernel defaultConvKernel(const ConvAttrs& a, const std::optional<Shape>& in, double zf, double sparseThreshold,
                             GemmLibrary gemm, bool feedsDepthwise, bool fedByDepthwise) {
  if (convKernelApplies(ConvKernel::Depthwise, a)) return ConvKernel::Depthwise;
  const bool known = in && in->size() == 4;
  const int64_t H = known ? (*in)[2] : 0, W = known ? (*in)[3] : 0;
  const bool pointwise = a.kh == 1 && a.kw == 1;
  if (!pointwise && zf >= sparseThreshold) return ConvKernel::Sparse;
  if (pointwise && zf >= std::max(sparseThreshold, 0.9) && (!known || H * W >= 49 * a.sh * a.sw))
    return ConvKernel::Sparse;
  // Pointwise on weights packed at load against the GEMM library (one thread, AVX-512
  // host): 7x7 outputs 0.74-0.85x its time (K 192-1152, M 160-2048), 14x14 0.9-1.1x,
  // 28x28 and larger 1.3-3x (small K: the per-pixel scatter of each tile's outputs).
  if (convKernelApplies(ConvKernel::Packed1x1, a) && known && pointwisePackedFast() &&
      a.outH(H) * a.outW(W) <= 64)
    return ConvKernel::Packed1x1;
  // Beside a depthwise conv the same kernel passes values channel-blocked (kernels.h
  // BlockedLayouts), and the depthwise conv then neither gathers its input into blocks
  // nor scatters its output. Per node, one thread, AVX-512, against the GEMM with
  // planes (bench/runtime/compare_kernels.py, default+planes against default, on
  // MobileNetV2/V3-Large, MnasNet and EfficientNet-B0): expansions into a depthwise conv
  // 0.84-0.89x its time on 14x14 maps and 0.8-0.94x from 16 input channels on 112x112
  // maps; from 24-40 channels on 28x28 and 56x56 maps 1.16-1.36x with tiles of 8 pixels,
  // 0.95x with tiles of 12 (MobileNetV2's 24 -> 144, whose depthwise conv then took
  // 0.87x its time: no gather); their depthwise convs 0.53-0.81x with blocks on both
  // sides. Projections from a depthwise conv, reading blocks but scattering their
  // outputs, 0.83-0.9x on 7x7 and 14x14 maps (but
  // MnasNet's 480 -> 80 1.17x, before a panel's last 16 channels ran as one vector), even
  // on 28x28 into whole panels of 32 channels (EfficientNet-B0's 240 -> 40 1.65x),
  // 1.18-1.42x on 56x56 and up (still 1.17-1.42x with tiles of 12 pixels).
  // With 8 lanes (AVX2: tiles of 16 channels by 6 pixels) the GEMM stays: expansions
  // into a depthwise conv took 0.83-0.94x its time on 7x7 maps and from 16-24 channels,
  // 1.08-1.12x on 14x14, projections 1.06-1.89x everywhere (no scatter instruction), and
  // packing the expansions alone left MobileNetV2's, MnasNet's, MobileNetV3-Large's and
  // EfficientNet-B0's summed Conv times within -2% and +3% of the GEMM's with planes.
  const int64_t outputs = known ? a.outH(H) * a.outW(W) : 0;
  if (convKernelApplies(ConvKernel::Packed1x1, a) && known && pointwisePackedFast() &&
      ((feedsDepthwise && convTakesBlockedOutput(ConvKernel::Packed1x1, a)) ||
       (fedByDepthwise && convTakesBlockedInput(ConvKernel::Packed1x1, a) &&
        (outputs <= 196 || (outputs <= 784 && a.M % 32 == 0)))))
    return ConvKernel::Packed1x1;
  // A stem feeding a depthwise conv writes channel blocks for it on the direct kernel
  // (its tiles hold a position's channels in a vector), which the depthwise conv reads
  // where they lie. Against direct_rows writing planes (one thread, AVX-512, alternating
  // binaries): the stem and depthwise conv together 0.87-0.93x their time in
  // MobileNetV2, MnasNet, EfficientNet-B0 and MobileNetV3-Small. On AVX2 (against
  // im2col) a wash: the stem 1.05-1.1x, the depthwise conv 0.98x.
  if (feedsDepthwise && a.C() <= 4 && directRowsFast() && convKernelApplies(ConvKernel::Direct, a) &&
      convTakesBlockedOutput(ConvKernel::Direct, a))
    return ConvKernel::Direct;
  // Stems (at most 4 input channels) along output rows, against im2col (one thread,
  // AVX-512, per node): 0.85-0.9x its time on MnasNet's, SqueezeNet's, RegNet-X's and
  // EfficientNet-B0's 3x3/2 to 32-64 channels and on ResNet-50's and GoogLeNet's 7x7/2,
  // 0.8-0.95x the direct kernel's. With 16 registers (AVX2: one vector of positions a
  // tile) 1.0-1.4x im2col's time.
  // Beside BLIS (a session that starts cold) oneDNN would generate its kernels on the first run.
  const bool oneDnn = gemm == GemmLibrary::OneDnn && oneDnnConvPays(a, known, H, W);
  if (a.C() <= 4 && !oneDnn && convKernelApplies(ConvKernel::DirectRows, a) && directRowsFast())
    return ConvKernel::DirectRows;
  if (oneDnn) return ConvKernel::OneDnn;
  if (a.group > 1 && convKernelApplies(ConvKernel::Direct, a)) return ConvKernel::Direct;
  if (convKernelApplies(ConvKernel::Gemm1x1, a)) return ConvKernel::Gemm1x1;
  // From at most 16 channels the direct kernel ahead of Winograd where 32 registers
  // hold its pairs of blocks (AVX-512, in the models, one thread: SqueezeNet's 16 -> 64
  // on 55x55 0.82-0.85x Winograd's time, GoogLeNet's 16 -> 32 on 28x28 0.68x).
  if (a.Cg <= 16 && a.group == 1 && a.sh == 1 && a.sw == 1 && simdFloatLanes() >= 16 &&
      convKernelApplies(ConvKernel::Direct, a))
    return ConvKernel::Direct;
  if (convKernelApplies(ConvKernel::Winograd, a) && winogradPays(a, known, H, W)) return ConvKernel::Winograd;
  // Direct against im2col (one thread, per conv): stride 1 0.4-0.9x its time but for
  // 7x1 kernels (1.0-1.07x); at stride 2 3x3s are a wash (0.93-1.08x, the stems
  // 1.16-1.23x at two threads), larger kernels pay (7x7 0.9x, 11x11 0.7x).
  if (convKernelApplies(ConvKernel::Direct, a) && (a.sh == 1 || a.kh * a.kw >= 25)) return ConvKernel::Direct;
  return ConvKernel::Im2col;
}

Expected<GemmKernel> chooseGemmKernel(const KernelPolicy& p, const std::string& node, double zeroFraction) {
  GemmKernel k = zeroFraction >= p.sparseThreshold ? GemmKernel::Sparse : GemmKernel::Blas;
  if (auto it = p.perNode.find(node); it != p.perNode.end()) {
    if (!parseGemmKernel(it->second, &k)) return makeError("kernel '{}' is not a Gemm/MatMul kernel", it->second);
  } else {
    GemmKernel forced;
    if (parseGemmKernel(p.policy, &forced)) k = forced;
  }
  return k;
}

ConvKernel tuneConvKernel(const ConvAttrs& a, int64_t N, int64_t H, int64_t W, const float* w, const float* bias,
                          const Epilogue& e, int threads, GemmLibrary gemm) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> x(static_cast<size_t>(N * a.C() * H * W)), y(static_cast<size_t>(N * a.M * a.outH(H) * a.outW(W)));
  for (auto& v : x) v = dist(rng);
  Scratch scratch;
  ConvKernel best = ConvKernel::Im2col;
  double bestMs = INFINITY;
  for (ConvKernel k : kAllConvKernels) {
    if (k == ConvKernel::Naive || !convKernelApplies(k, a)) continue;
    PackedWeights pw = transformConvWeights(k, a, w, bias);
    if (!prepareConvKernel(k, a, N, H, W, &pw)) continue;
    std::vector<double> times;
    for (int rep = 0; rep < 4; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      runConv(k, a, pw, x.data(), N, H, W, y.data(), e, scratch, threads, gemm);
      const auto t1 = std::chrono::steady_clock::now();
      if (rep > 0) times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::sort(times.begin(), times.end());
    const double ms = times[times.size() / 2];
    if (ms < bestMs) { bestMs = ms; best = k; }
  }
  return best;
}

}  // namespace zp::runtime
