// zoo-stitch's driver (the stitch flow's first tool): reads zoo.json, runs
// partitioning and stitching, writes the stitch directory atomically.
#pragma once
#include <filesystem>
#include <string>

#include "libplan/util/error.h"
#include "libplan/zoo/stitch_manifest.h"
#include "passes/stitch/stitch.h"

namespace zp::drivers {

struct ZooStitchOptions {
  std::filesystem::path zoo;
  std::filesystem::path out;
  stitch::StitchParams params;
};

// zoo.json -> partition -> stitch -> OUT/{stitch.json, subgraphs/, stitched/};
// the zoo's multitask groups stitched as zoo-mts does -> OUT/groups/{mts.json, GROUP.onnx}.
// OUT is replaced only when everything succeeded, and only when it is absent,
// empty or an earlier zoo-stitch output (OutputDir); never over the zoo's files.
Expected<zoo::StitchManifest> runZooStitch(const ZooStitchOptions& options);

// A short table: per task its variants, cut points, positions, subgraphs and combinations.
std::string stitchSummary(const zoo::StitchManifest& manifest);

}  // namespace zp::drivers
