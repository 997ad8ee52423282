// zoo-profile step 3: per-node features (SparOA §2.1, §3.1) of every
// subgraph, on the first host processor, with each position fed the previous
// position's outputs over the task's calibration inputs.
#include "drivers/stitch_flow/dataset_read.h"
#include "drivers/stitch_flow/zoo_profile_steps.h"
#include "libplan/graph/dims.h"
#include "libplan/graph/model_io.h"
#include "libplan/runtime/measure.h"

namespace zp::drivers::zoo_profile {
namespace {

// The calibration inputs of a task (empty: random inputs are used).
Expected<std::vector<runtime::Tensor>> calibrationInputs(const Run& run, const zoo::TaskStitch& task) {
  const zoo::TaskSpec* spec = nullptr;
  for (const auto& t : run.src.zoo.tasks)
    if (t.name == task.name) spec = &t;
  if (!spec || !spec->dataset) return std::vector<runtime::Tensor>{};
  ZP_ASSIGN_OR_RETURN(auto shape, sampleShape(run, task));
  std::string file = spec->dataset->calibration.empty() ? spec->dataset->inputs : spec->dataset->calibration;
  return readSamples(run.src.zoo.resolve(file), shape, run.params.calibrationSamples);
}

// One variant's subgraphs, position after position.
Status variantFeatures(const Run& run, const Processor& proc, const zoo::TaskStitch& task, const zoo::VariantInfo& v,
                       const std::vector<runtime::Tensor>& calib, std::vector<artifacts::FeatureRow>& rows) {
  std::vector<runtime::TensorMap> current;
  for (int pos = 0; pos < task.positions(); ++pos) {
    const auto& sg = task.subgraph(pos, v.id);
    ZP_ASSIGN_OR_RETURN(auto model, graph::loadModel(run.src.stitchDir / sg.file, graph::LoadOptions{false, true}));
    ZP_ASSIGN_OR_RETURN(auto session,
                        runtime::Session::fromModel(model, sg.file, measure::sessionOptions(proc.config)));
    if (pos == 0) {
      current.clear();
      if (calib.empty()) current.push_back(randomInputsAt(*session, sg.inputs, 1, run.params.seed));
      for (const auto& x : calib) {
        runtime::TensorMap m;
        m.emplace(session->inputs().at(0).name, x);
        current.push_back(std::move(m));
      }
    } else {
      // The previous position's outputs feed this one, renamed to its input.
      for (auto& m : current) {
        runtime::Tensor t = m.begin()->second;
        m.clear();
        m.emplace(session->inputs().at(0).name, std::move(t));
      }
    }
    // FLOPs and bytes need fixed shapes: the model bound to the shapes it runs at
    // here, with computed Reshape targets followed (graph::bindInputShapes).
    std::map<std::string, std::vector<int64_t>> shapes;
    for (const auto& [name, t] : current.front()) shapes[name] = t.shape;
    ZP_ASSIGN_OR_RETURN(auto bound, graph::bindInputShapes(model, shapes, (run.src.stitchDir / sg.file).string()));
    std::vector<runtime::TensorMap> outputs;
    ZP_ASSIGN_OR_RETURN(auto nf, measure::nodeFeatures(*session, bound, current, &outputs));
    current = std::move(outputs);
    for (const auto& f : nf)
      rows.push_back(artifacts::FeatureRow{task.name, pos, v.id, f.node, f.opType, f.kernel, f.flops,
                                           f.weightSparsity, f.activationSparsity, f.intensity, f.ms});
  }
  return {};
}

}  // namespace

Expected<std::vector<artifacts::FeatureRow>> measureFeatures(const Run& run) {
  std::vector<artifacts::FeatureRow> rows;
  const Processor* featureProc = nullptr;
  for (const auto& p : run.src.processors)
    if (p.host && !featureProc) featureProc = &p;
  if (!featureProc) return rows;
  for (const auto& task : run.src.manifest.tasks) {
    ZP_ASSIGN_OR_RETURN(auto calib, calibrationInputs(run, task));
    for (const auto& v : task.variants) ZP_TRY(variantFeatures(run, *featureProc, task, v, calib, rows));
  }
  return rows;
}

}  // namespace zp::drivers::zoo_profile
