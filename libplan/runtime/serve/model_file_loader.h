// A SubgraphLoader over files: each slot's ONNX model, with an optional weight
// cache to map (a bundle's post-transformed weights), loaded with the options of
// the slot's processor.
#pragma once
#include <filesystem>
#include <vector>

#include "libplan/runtime/serve/subgraph_loader.h"

namespace zp::runtime::serve {

struct SubgraphFiles {
  std::filesystem::path model;
  std::filesystem::path cache;  // empty: none
};

class ModelFileLoader : public SubgraphLoader {
 public:
  explicit ModelFileLoader(std::vector<SubgraphFiles> files) : files_(std::move(files)) {}
  Expected<LoadedSubgraph> load(int slot, const ServeSlot& info, const SessionOptions& options) override;

 private:
  std::vector<SubgraphFiles> files_;  // per slot
};

}  // namespace zp::runtime::serve
