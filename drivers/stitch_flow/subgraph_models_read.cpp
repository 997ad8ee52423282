#include "drivers/stitch_flow/subgraph_models_read.h"

namespace zp::drivers {

Expected<profile::SubgraphModels> readSubgraphModels(const std::vector<std::string>& files,
                                                     const std::filesystem::path& stitchDir,
                                                     const graph::LoadOptions& options) {
  profile::SubgraphModels models;
  for (const std::string& f : files) {
    if (models.count(f)) continue;
    ZP_ASSIGN_OR_RETURN(onnx::ModelProto m, graph::loadModel(stitchDir / f, options));
    models.emplace(f, std::move(m));
  }
  return models;
}

}  // namespace zp::drivers
