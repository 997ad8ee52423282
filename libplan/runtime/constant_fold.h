// Constant folding at load: Constant nodes, weight DequantizeLinear (INT8 weights
// dequantized once), Shape of statically shaped tensors and the arithmetic after it.
// It stays in the runtime, not libplan/graph, because it evaluates nodes with the
// runtime's own ops and keeps the results as runtime tensors (no copy into protos).
#pragma once
#include <string>
#include <vector>

#include "libplan/graph/analysis.h"
#include "libplan/runtime/kernels/gemm.h"
#include "libplan/runtime/kernels/kernels.h"
#include "libplan/runtime/values.h"
#include "libplan/util/error.h"

namespace zp::runtime {

struct FoldEnvironment {
  int opset = 13;
  GemmLibrary gemm = GemmLibrary::OneDnn;
  Scratch* scratch = nullptr;
  std::string label;  // names the model in errors
};

// Runs, in topological order, every node whose inputs are all constant (or a Shape
// of a tensor with a static shape) and none of whose outputs is a graph output;
// their outputs become constants in `values`. Returns the nodes left to run, in
// topological order. Folding an initializer a weight cache's skeleton left out is
// an error (the session cannot be built from the cache alone).
Expected<std::vector<int>> foldConstants(const graph::GraphView& view, const StaticShapes& shapes,
                                         const FoldEnvironment& env, ValueTable& values);

}  // namespace zp::runtime
