// A SubgraphLoader over files: each slot's ONNX model, with an optional weight
// cache to map (a bundle's post-transformed weights), loaded with the options of
// the slot's processor; a unit with a cold-start plan loaded following it; an
// operator-placed unit loaded once per processor it places operators on and run
// by its own pinned workers.
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "libplan/runtime/cold_schedule.h"
#include "libplan/runtime/serve/subgraph_loader.h"

namespace zp::runtime::serve {

// Where an operator-placed unit's operators run.
struct OperatorPlacement {
  std::vector<Processor> processors;              // the program's processors, in its order
  std::vector<std::filesystem::path> caches;      // per processor: its weight cache (empty: none)
  std::map<std::string, int> nodeProcessor;       // node name -> index into `processors`
  std::string source;                             // what errors about it name (the plan); empty: the model
  // Parts of the unit (its nodes named "PART/...") that follow others, an order
  // no tensor carries: (A, B) starts A's steps on every processor after B's last
  // steps everywhere (a frame's DNN that follows another, HaX-CoNN's pipelines).
  std::vector<std::pair<std::string, std::string>> partAfter = {};
  // Every node of the model is placed, also those the runtime folds or fuses away
  // (a placement made from the graph, not from a profiled run of it).
  bool placesGraphNodes = false;
};

struct SubgraphFiles {
  std::filesystem::path model;
  std::filesystem::path cache;  // empty: none
  // Loaded following this cold-start plan (NNV12): `cache` is the cold cache
  // plan-emit wrote for it; the first run is the pipelined cold run.
  std::shared_ptr<const ColdSchedule> coldSchedule = {};
  std::optional<OperatorPlacement> placement = {};  // an operator-placed unit
};

class ModelFileLoader : public SubgraphLoader {
 public:
  explicit ModelFileLoader(std::vector<SubgraphFiles> files) : files_(std::move(files)) {}
  Expected<LoadedSubgraph> load(int slot, const ServeSlot& info, const SessionOptions& options) override;

 private:
  std::vector<SubgraphFiles> files_;  // per slot
};

// The unit of `files` loaded with `options` (its processor's): warm from its
// weight cache, following its cold section, or operator-placed (then each of its
// processors' own options).
Expected<LoadedSubgraph> loadUnit(const SubgraphFiles& files, const SessionOptions& options);

// Per executed step of `session`, the processor its node is placed on; an error
// (naming `label`) when the runtime runs a node the placement does not place, or
// (unless it places the graph's nodes) places one the runtime does not run.
Expected<std::vector<int>> stepPlacement(const Session& session, const OperatorPlacement& placement,
                                         const std::string& label);

// An operator-placed model: one session per processor (its kernel policy, GEMM
// library, threads and cache), the program over them, its workers started.
// `warnings` collects the sessions' (cache fallbacks), each once.
Expected<std::unique_ptr<PlacedExecutor>> loadPlaced(const std::filesystem::path& model,
                                                     const OperatorPlacement& placement,
                                                     std::vector<std::string>* warnings = nullptr);
// The same of a model built in memory (no weight caches: `placement.caches` must be empty).
Expected<std::unique_ptr<PlacedExecutor>> loadPlaced(const onnx::ModelProto& model, const std::string& label,
                                                     const OperatorPlacement& placement);

}  // namespace zp::runtime::serve
