// The default pipelines, one entry point per tool, as plain code: each reads
// its inputs, runs its passes in order and writes its output directory
// atomically. Tools in tools/ only parse options and call these.
#pragma once
#include <filesystem>
#include <string>

#include "libplan/util/error.h"
#include "libplan/zoo/stitch_manifest.h"
#include "passes/stitch/stitch.h"

namespace zp::pipeline {

struct ZooStitchOptions {
  std::filesystem::path zoo;
  std::filesystem::path out;
  stitch::StitchParams params;
};

// zoo.json -> partition -> stitch -> OUT/{stitch.json, subgraphs/, stitched/}.
// OUT is replaced only when everything succeeded, and only when it is absent,
// empty or an earlier zoo-stitch output (OutputDir); never over the zoo's files.
Expected<zoo::StitchManifest> runZooStitch(const ZooStitchOptions& options);

// A short table: per task its variants, cut points, positions, subgraphs and combinations.
std::string stitchSummary(const zoo::StitchManifest& manifest);

}  // namespace zp::pipeline
