// zoo-profile step 3: node_profile.csv, the per-node profile of every variant
// model of the zoo under every host processor (measure::profileNodes), keyed
// as plan-solve --mode opplace looks the model up (artifacts::zooModelKey).
#include <set>
#include <utility>

#include "drivers/stitch_flow/zoo_profile_steps.h"
#include "libplan/graph/model_io.h"
#include "libplan/util/progress.h"
#include "passes/measure/node_profile.h"

namespace zp::drivers::zoo_profile {

std::vector<Processor> nodeProfileConfigs(const Run& run) {
  std::vector<Processor> out;
  std::set<std::pair<std::string, int>> seen;
  for (const auto& p : run.src.processors)
    if (p.host() && seen.insert({p.policy, p.threads}).second) out.push_back(p.engine());
  return out;
}

Expected<std::vector<artifacts::NodeProfileRow>> profileVariantNodes(const Run& run, const zoo::TaskStitch& task,
                                                                      const zoo::VariantInfo& v,
                                                                      const Processor& config) {
  const auto file = run.src.zoo.resolve(v.onnx);
  ZP_ASSIGN_OR_RETURN(auto model, graph::loadModel(file));
  // The variant's inputs are its first subgraph's: random, at the shapes it is
  // measured at (from a session under the first configuration, whichever is measured).
  runtime::TensorMap inputs;
  {
    ZP_ASSIGN_OR_RETURN(auto session, runtime::Session::fromModel(model, file.string(),
                                                                  measure::sessionOptions(nodeProfileConfigs(run).at(0))));
    inputs = randomInputsAt(*session, task.subgraph(0, v.id).inputs, run.batch, run.params.seed);
  }
  const std::string key = artifacts::zooModelKey(run.src.zoo.name, task.name, v.id);
  return measure::profileNodes(model, key, config, inputs, run.mp);
}

Expected<std::vector<artifacts::NodeProfileRow>> measureNodeProfiles(const Run& run) {
  std::vector<artifacts::NodeProfileRow> rows;
  const auto configs = nodeProfileConfigs(run);
  size_t variants = 0;
  for (const auto& task : run.src.manifest.tasks) variants += task.variants.size();
  Progress progress("zoo-profile: per-node profiles (every variant on every processor)", variants * configs.size(),
                    "runs");
  for (const auto& task : run.src.manifest.tasks)
    for (const auto& v : task.variants) {
      if (run.stopRequested()) return makeError("zoo-profile: stopped while profiling nodes");
      for (const auto& c : configs) {
        progress.advance();
        std::vector<artifacts::NodeProfileRow> r;
        if (const auto* given = run.given ? findIn(run.given->nodes, std::make_tuple(task.name, v.id, c.label())) : nullptr)
          r = *given;
        else { ZP_ASSIGN_OR_RETURN(r, profileVariantNodes(run, task, v, c)); }
        rows.insert(rows.end(), std::make_move_iterator(r.begin()), std::make_move_iterator(r.end()));
      }
    }
  return rows;
}

}  // namespace zp::drivers::zoo_profile
