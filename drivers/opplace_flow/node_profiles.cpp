#include "drivers/opplace_flow/node_profiles.h"

#include <cmath>
#include <set>

#include "libplan/graph/model_io.h"
#include "libplan/runtime/measure.h"
#include "passes/measure/node_profile.h"

namespace zp::drivers::opplace_flow {

std::vector<Processor> hostConfigs(const zoo::Zoo& zoo) {
  std::vector<Processor> out;
  std::set<Processor> seen;
  for (const auto& p : zoo.processors) {
    if (!p.host()) continue;
    // A node profile is keyed by policy and threads (measured unpinned, with the default GEMM).
    Processor c;
    c.policy = p.policy;
    c.threads = p.threads;
    if (seen.insert(c).second) out.push_back(c);
  }
  return out;
}

std::vector<ModelSource> zooModels(const zoo::Zoo& zoo) {
  std::vector<ModelSource> out;
  for (const auto& t : zoo.tasks)
    for (const auto& v : t.variants) out.push_back(ModelSource{artifacts::zooModelKey(zoo.name, t.name, v.id), zoo.resolve(v.onnx)});
  return out;
}

Expected<std::vector<artifacts::NodeProfileRow>> profileModels(const std::vector<ModelSource>& models,
                                                               const std::vector<Processor>& configs,
                                                               const ProfileParams& params) {
  std::vector<artifacts::NodeProfileRow> rows;
  for (const auto& m : models) {
    ZP_ASSIGN_OR_RETURN(auto model, graph::loadModel(m.file));
    for (const auto& c : configs) {
      ZP_ASSIGN_OR_RETURN(auto session, runtime::Session::fromModel(model, m.file.string(), measure::sessionOptions(c)));
      const auto inputs = runtime::randomInputs(*session, params.seed);
      session.reset();
      ZP_ASSIGN_OR_RETURN(auto r, measure::profileNodes(model, m.name, c, inputs, params.measure));
      rows.insert(rows.end(), r.begin(), r.end());
    }
  }
  return rows;
}

bool profiledUnder(const artifacts::NodeProfileRow& row, const Processor& config) {
  return row.policy == config.policy && row.threads == config.threads;
}

std::vector<estimate::OpSample> samplesOf(const std::vector<artifacts::NodeProfileRow>& rows,
                                          const Processor& config) {
  std::vector<estimate::OpSample> out;
  for (const auto& r : rows)
    if (profiledUnder(r, config)) out.push_back(estimate::OpSample{r.model, r.features, r.ms});
  return out;
}

double selfAgreement(const std::vector<artifacts::NodeProfileRow>& rows, const Processor& config,
                     double tolerance) {
  size_t n = 0, agree = 0;
  for (const auto& r : rows)
    if (profiledUnder(r, config)) {
      ++n;
      agree += std::abs(r.msOdd - r.msEven) <= tolerance * r.msEven;
    }
  return n ? static_cast<double>(agree) / static_cast<double>(n) : 0.0;
}

}  // namespace zp::drivers::opplace_flow
