// Loads stitched subgraph models by their stitch.json file names from the
// stitch directory: those a profile import maps node times onto
// (profile::subgraphFilesFor says which), or all of a task's.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/graph/model_io.h"
#include "libplan/profile/subgraph_map.h"
#include "libplan/util/error.h"

namespace zp::drivers {

Expected<profile::SubgraphModels> readSubgraphModels(const std::vector<std::string>& files,
                                                     const std::filesystem::path& stitchDir,
                                                     const graph::LoadOptions& options);

}  // namespace zp::drivers
