// Pieces of ONNX text (onnx/defs/parser.h syntax) shared by the tests that build
// models with OnnxParser. Header only: tests/common has no CMakeLists.txt.
#pragma once
#include <fmt/format.h>

#include <random>
#include <string>
#include <vector>

namespace zp::testing {

// "float[d0,d1,...] name = {v, v, ...}" with deterministic values: scale times integers in [-5, 5].
inline std::string floatInitializer(const std::string& name, const std::vector<int>& dims, float scale = 0.1f) {
  int n = 1;
  std::string d;
  for (size_t i = 0; i < dims.size(); ++i) {
    n *= dims[i];
    if (i) d += ',';
    d += std::to_string(dims[i]);
  }
  std::string v;
  for (int i = 0; i < n; ++i) {
    if (i) v += ',';
    v += std::to_string(scale * static_cast<float>((i * 7) % 11 - 5));
  }
  return "float[" + d + "] " + name + " = {" + v + "}";
}

// "v, v, ..." for an initializer: n values drawn uniformly from [lo, hi) with `seed`.
inline std::string randomValues(size_t n, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::string s;
  for (size_t i = 0; i < n; ++i) s += fmt::format("{}{:.6f}", i ? ", " : "", d(rng));
  return s;
}

// MobileNetV2's inverted residual block on an 8x8 map of 16 channels: a pointwise
// expansion to 32 (Clip 0..6), a 3x3 depthwise conv (Clip), a pointwise projection
// back to 16 and the residual Add; `depthwiseOut` also makes the depthwise conv's
// output a graph output. Nodes expand, depthwise, project, add.
inline std::string invertedResidualText(bool depthwiseOut = false) {
  return fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    block (float[1,16,8,8] x) => (float[1,16,8,8] y{})
    <float[32,16,1,1] we = {{{}}}, float[32] be = {{{}}}, float[32,1,3,3] wd = {{{}}}, float[32] bd = {{{}}},
     float[16,32,1,1] wp = {{{}}}, float[16] bp = {{{}}}, float lo = {{0.0}}, float hi = {{6.0}}>
    {{
      e = Conv <kernel_shape = [1, 1]> (x, we, be)
      er = Clip (e, lo, hi)
      d = Conv <group = 32, pads = [1, 1, 1, 1]> (er, wd, bd)
      dr = Clip (d, lo, hi)
      p = Conv (dr, wp, bp)
      y = Add (p, x)
    }}
  )",
                     depthwiseOut ? ", float[1,32,8,8] dr" : "", randomValues(512, 1, -0.5f, 0.5f),
                     randomValues(32, 2), randomValues(288, 3, -0.5f, 0.5f), randomValues(32, 4),
                     randomValues(512, 5, -0.3f, 0.3f), randomValues(16, 6));
}

// EfficientNet's block with squeeze-and-excite on an 8x8 map of 16 channels: a
// pointwise expansion to 32, a 3x3 depthwise conv, the pooled squeeze (32 -> 8, Relu)
// and excite (8 -> 32, Sigmoid) convs, the Mul scaling the depthwise output, and a
// pointwise projection back to 16. Nodes expand, d, pool, fc1, fc2, scale, p.
inline std::string squeezeExciteText() {
  return fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    block (float[1,16,8,8] x) => (float[1,16,8,8] y)
    <float[32,16,1,1] we = {{{}}}, float[32,1,3,3] wd = {{{}}}, float[8,32,1,1] w1 = {{{}}}, float[8] b1 = {{{}}},
     float[32,8,1,1] w2 = {{{}}}, float[32] b2 = {{{}}}, float[16,32,1,1] wp = {{{}}}>
    {{
      e = Conv (x, we)
      d = Conv <group = 32, pads = [1, 1, 1, 1]> (e, wd)
      g = GlobalAveragePool (d)
      f1 = Conv (g, w1, b1)
      r1 = Relu (f1)
      f2 = Conv (r1, w2, b2)
      s = Sigmoid (f2)
      m = Mul (s, d)
      y = Conv (m, wp)
    }}
  )",
                     randomValues(512, 11, -0.5f, 0.5f), randomValues(288, 12, -0.5f, 0.5f),
                     randomValues(256, 13, -0.5f, 0.5f), randomValues(8, 14), randomValues(256, 15, -0.5f, 0.5f),
                     randomValues(32, 16), randomValues(512, 17, -0.3f, 0.3f));
}

}  // namespace zp::testing
