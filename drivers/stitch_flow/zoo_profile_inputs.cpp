// zoo-profile: the shapes subgraphs and stitched variants run at. The subgraph
// files keep a model's symbolic dims (a dynamic batch runs at any batch);
// stitch.json's signatures hold the values zoo-stitch bound them to.
#include "drivers/stitch_flow/zoo_profile_steps.h"
#include "libplan/graph/dims.h"

namespace zp::drivers::zoo_profile {

runtime::Shape runShape(const runtime::IoInfo& io, const zoo::TensorSig* sig, int64_t batch) {
  runtime::Shape s = io.shape;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] >= 0) continue;
    if (i == 0) s[i] = batch;
    else if (sig && i < sig->shape.size() && sig->shape[i] >= 0) s[i] = sig->shape[i];
    else s[i] = 1;  // unreachable for files zoo-stitch wrote: it binds every dim or refuses
  }
  return s;
}

runtime::TensorMap randomInputsAt(const runtime::Session& session, const std::vector<zoo::TensorSig>& sigs,
                                  int64_t batch, uint64_t seed) {
  runtime::TensorMap m;
  uint64_t k = 0;
  for (const auto& io : session.inputs()) {
    const zoo::TensorSig* sig = nullptr;
    for (const auto& s : sigs)
      if (s.name == io.name) sig = &s;
    if (!sig && sigs.size() == session.inputs().size()) sig = &sigs[k];  // renamed by stitching: same order
    m[io.name] = runtime::randomInput(runtime::IoInfo{io.name, io.dtype, runShape(io, sig, batch)}, seed + k);
    ++k;
  }
  return m;
}

Expected<bool> batchSymbolic(const Run& run, const zoo::SubgraphInfo& sg) {
  ZP_ASSIGN_OR_RETURN(auto model, graph::loadModel(run.src.stitchDir / sg.file, graph::LoadOptions{false, false}));
  return !sg.inputs.empty() && graph::leadingDimSymbolic(model, sg.inputs.at(0).name);
}

Expected<int64_t> boundaryBytes(const Run& run, const zoo::TaskStitch& task, int pos) {
  int64_t bytes = task.subgraph(pos, task.reference).outputs.at(0).bytes();
  if (run.batch == run.src.manifest.batch) return bytes;
  ZP_ASSIGN_OR_RETURN(bool symbolic, batchSymbolic(run, task.subgraph(pos + 1, task.reference)));
  return symbolic ? bytes / run.src.manifest.batch * run.batch : bytes;
}

Expected<runtime::Shape> sampleShape(const Run& run, const zoo::TaskStitch& task) {
  const auto& sg = task.subgraph(0, task.reference);
  ZP_ASSIGN_OR_RETURN(bool symbolic, batchSymbolic(run, sg));
  runtime::Shape s = sg.inputs.at(0).shape;
  if (!s.empty() && symbolic) s[0] = 1;
  return s;
}

}  // namespace zp::drivers::zoo_profile
