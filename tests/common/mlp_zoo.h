// A small zoo for the stitch and measure tests: one task of 3-layer MLPs
// [1,4] -> [1,3] in ONNX text, and that task in memory as the passes take it.
// Header only: tests/common has no CMakeLists.txt.
#pragma once
#include <string>
#include <vector>

#include "libplan/graph/model_io.h"
#include "libplan/util/error.h"
#include "passes/stitch/stitch.h"

namespace zp::testing {

// MatMul, Relu, MatMul, Relu, MatMul over the initializers w1, w2, w3, each
// given as ONNX text ("float[rows,cols] wN = {...}").
inline std::string mlpText(const std::string& w1, const std::string& w2, const std::string& w3) {
  return R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4] input) => (float[1,3] logits)
    <)" + w1 + ", " + w2 + ", " + w3 + R"(>
    {
      m1 = MatMul (input, w1)
      r1 = Relu (m1)
      m2 = MatMul (r1, w2)
      r2 = Relu (m2)
      logits = MatMul (r2, w3)
    })";
}

// "float[rows,cols] name = {...}": never exactly zero unless pruned (every
// `zeroEvery`-th value, 0 = none); the name salts the values so layers differ.
inline std::string saltedInitializer(const std::string& name, int rows, int cols, int zeroEvery = 0) {
  std::string v;
  for (int i = 0; i < rows * cols; ++i) {
    float x = zeroEvery && i % zeroEvery == 0 ? 0.0f
                                              : 0.05f * static_cast<float>((i * 5 + static_cast<int>(name[1])) % 9) + 0.01f;
    v += (i ? "," : "") + std::to_string(x);
  }
  return "float[" + std::to_string(rows) + "," + std::to_string(cols) + "] " + name + " = {" + v + "}";
}

// A pruned variant of one MLP: `hidden` is the width after the first layer
// (structured pruning changes it), `zeroEvery` zeroes weights (unstructured pruning).
inline std::string prunedMlp(int hidden, int zeroEvery) {
  return mlpText(saltedInitializer("w1", 4, hidden, zeroEvery), saltedInitializer("w2", hidden, 4, zeroEvery),
                 saltedInitializer("w3", 4, 3));
}

struct VariantText {
  std::string id;
  std::string kind;  // "dense", "unstructured", "structured"
  std::string onnxText;
  std::string sha256;  // what the zoo records for the model file
};

// The zoo and models stitch::stitchZoo takes: one task "t" over processors cpu
// and gpu (S = 2) with these variants (model files m/ID.onnx, never read).
struct MemoryZoo {
  zoo::Zoo zoo;
  std::vector<stitch::VariantModel> models;
};

inline Expected<MemoryZoo> oneTaskZoo(const std::vector<VariantText>& variants) {
  MemoryZoo out;
  out.zoo.file = "/nonexistent/zoo.json";  // named in errors only
  out.zoo.sha256 = "0";
  for (const char* p : {"cpu", "gpu"}) out.zoo.processors.push_back(Processor{p, p});
  zoo::TaskSpec task;
  task.name = "t";
  for (const auto& v : variants) {
    task.variants.push_back({v.id, "m/" + v.id + ".onnx", v.kind, std::nullopt, std::nullopt, std::nullopt});
    ZP_ASSIGN_OR_RETURN(auto model, graph::parseModelText(v.onnxText));
    out.models.push_back({std::move(model), v.sha256});
  }
  out.zoo.tasks.push_back(std::move(task));
  return out;
}

}  // namespace zp::testing
