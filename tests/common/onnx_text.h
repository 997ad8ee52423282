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
    d += (i ? "," : "") + std::to_string(dims[i]);
  }
  std::string v;
  for (int i = 0; i < n; ++i) v += (i ? "," : "") + std::to_string(scale * static_cast<float>((i * 7) % 11 - 5));
  return "float[" + d + "] " + name + " = {" + v + "}";
}

// "float[rows,cols] name = {...}": values never exactly zero (the name salts them,
// so layers differ) except every `zeroEvery`-th, which is zero (unstructured pruning).
inline std::string prunableInitializer(const std::string& name, int rows, int cols, int zeroEvery = 0) {
  std::string v;
  for (int i = 0; i < rows * cols; ++i) {
    float x = zeroEvery && i % zeroEvery == 0 ? 0.0f
                                              : 0.05f * static_cast<float>((i * 5 + static_cast<int>(name[1])) % 9) + 0.01f;
    v += (i ? "," : "") + std::to_string(x);
  }
  return "float[" + std::to_string(rows) + "," + std::to_string(cols) + "] " + name + " = {" + v + "}";
}

// A 3-layer MLP, input float[1,4], output float[1,3]; `hidden` is the width after
// the first layer (structured pruning changes it), `zeroEvery` zeroes weights.
inline std::string prunableMlp(int hidden, int zeroEvery) {
  return R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4] input) => (float[1,3] logits)
    <)" + prunableInitializer("w1", 4, hidden, zeroEvery) + ", " + prunableInitializer("w2", hidden, 4, zeroEvery) +
         ", " + prunableInitializer("w3", 4, 3) + R"(>
    {
      m1 = MatMul (input, w1)
      r1 = Relu (m1)
      m2 = MatMul (r1, w2)
      r2 = Relu (m2)
      logits = MatMul (r2, w3)
    })";
}

}  // namespace zp::testing
