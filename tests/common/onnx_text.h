// Pieces of ONNX text (onnx/defs/parser.h syntax) shared by the tests that build
// models with OnnxParser. Header only: tests/common has no CMakeLists.txt.
#pragma once
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

}  // namespace zp::testing
