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

}  // namespace zp::testing
