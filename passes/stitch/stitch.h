// The stitch pass: partition every task's variants at common cut points,
// extract each (position, variant) subgraph, check which combinations chain
// (boundary shapes and types agree), and materialize stitched variants.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "libplan/util/error.h"
#include "libplan/zoo/stitch_manifest.h"
#include "libplan/zoo/zoo.h"

namespace zp::stitch {

struct StitchParams {
  int subgraphs = 0;                 // S per task; 0: the number of processors in the zoo
  std::vector<std::string> cuts;     // explicit cut tensors (reference variant names); overrides S
  std::string materialize = "none";  // none | all | comma-separated ids ("combo" or "task/combo")
  std::string tool = "zoo-stitch";   // recorded in the manifest
};

// Runs the pass and writes subgraphs/ and stitched/ under `outDir` (normally a
// staging directory). `zooPathFromOut` is how stitch.json names zoo.json.
Expected<zoo::StitchManifest> stitchZoo(const zoo::Zoo& zoo, const StitchParams& params,
                                        const std::filesystem::path& outDir, const std::string& zooPathFromOut);

// The stitched variant of `task` made of `combination` (one variant per
// position) as one ONNX model, from the subgraph files under `stitchDir`.
Expected<onnx::ModelProto> materializeCombination(const zoo::TaskStitch& task, const zoo::Combination& combination,
                                                  const std::filesystem::path& stitchDir);

}  // namespace zp::stitch
