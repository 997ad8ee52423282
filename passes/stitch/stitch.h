// The stitch pass: partition every task's variants at common cut points,
// extract each (position, variant) subgraph, check which combinations chain
// (boundary shapes and types agree), and build stitched variants. No file I/O:
// the caller reads the variant models and writes what the pass returns.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "libplan/graph/dims.h"
#include "libplan/util/error.h"
#include "libplan/zoo/stitch_manifest.h"
#include "libplan/zoo/zoo.h"

namespace zp::stitch {

struct StitchParams {
  int subgraphs = 0;                 // S per task; 0: the number of processors in the zoo
  std::vector<std::string> cuts;     // explicit cut tensors (reference variant names); overrides S
  std::string materialize = "none";  // none | all | comma-separated ids ("combo" or "task/combo")
  std::string tool = "zoo-stitch";   // recorded in the manifest
  // Symbolic dims (a dynamic batch, named dims) are bound to these numbers for
  // the analysis: FLOPs, the partition and the boundary signatures. The
  // subgraph files keep them symbolic, so they run at any batch.
  graph::DimBinding dims;
};

// One variant of a task as the caller read it: the checked, shape-inferred
// model and the sha256 of its file's bytes.
struct VariantModel {
  onnx::ModelProto model;
  std::string sha256;
};

// Subgraph models by their file in the stitch directory (SubgraphInfo::file).
using SubgraphModels = std::map<std::string, onnx::ModelProto>;

struct StitchResult {
  zoo::StitchManifest manifest;  // combination files left empty (see materializedCombinations)
  // Each distinct subgraph once, by file: the deterministic bytes to write and the model.
  std::map<std::string, std::string> subgraphBytes;
  SubgraphModels subgraphModels;
};

// `variants[t][v]` is variant v of zoo.tasks[t]. `zooPathFromOut` is how
// stitch.json names zoo.json. Errors name zoo.file, the task and the variant.
Expected<StitchResult> stitchZoo(const zoo::Zoo& zoo, const std::vector<std::vector<VariantModel>>& variants,
                                 const StitchParams& params, const std::string& zooPathFromOut);

// The (task, combination) indices --materialize asks for (manifest.materialize:
// none, all, or a list of ids), each valid, and their files set in the manifest
// ("stitched/<task>/<combination>.onnx").
Expected<std::vector<std::pair<size_t, size_t>>> materializedCombinations(zoo::StitchManifest& manifest);

// The stitched variant of `task` made of `combination` (one variant per
// position) as one checked ONNX model, from its subgraph models.
Expected<onnx::ModelProto> materializeCombination(const zoo::TaskStitch& task, const zoo::Combination& combination,
                                                  const SubgraphModels& subgraphs);

}  // namespace zp::stitch
