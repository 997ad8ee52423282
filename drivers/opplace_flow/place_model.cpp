#include "drivers/opplace_flow/place_model.h"

#include <algorithm>
#include <map>
#include <set>

#include "libplan/graph/analysis.h"
#include "libplan/graph/tensor.h"
#include "libplan/runtime/measure.h"
#include "passes/measure/node_profile.h"

namespace zp::drivers::opplace_flow {
namespace {

std::vector<artifacts::NodeProfileRow> rowsOf(const std::vector<artifacts::NodeProfileRow>& rows,
                                              const std::string& model, const Processor& c) {
  std::vector<artifacts::NodeProfileRow> out;
  for (const auto& r : rows)
    if (r.model == model && r.policy == c.policy && r.threads == c.threads) out.push_back(r);
  return out;
}

// Per-node costs of `model` under `c`: measured rows, else predictions from its features.
Expected<std::vector<double>> nodeCosts(const onnx::ModelProto& model, const PlaceInputs& in, const Processor& c,
                                        const std::vector<std::string>& names, bool* predicted) {
  auto rows = rowsOf(in.profile, in.modelKey, c);
  if (rows.empty()) {
    *predicted = true;
    std::vector<estimate::OpSample> train;
    for (const auto& r : in.profile)
      if (r.policy == c.policy && r.threads == c.threads && r.model != in.modelKey)
        train.push_back(estimate::OpSample{r.model, r.features, r.ms});
    if (train.empty()) return makeError("node profile: no rows for processor {} to predict from", c.label());
    ZP_ASSIGN_OR_RETURN(auto predictor, estimate::OpLatencyPredictor::train(train, in.predictor));
    ZP_ASSIGN_OR_RETURN(auto session, runtime::Session::fromModel(model, in.modelKey, measure::sessionOptions(c)));
    const auto inputs = runtime::randomInputs(*session, in.seed);
    session.reset();
    // One untimed-for-cost run: the features (kernels, activation sparsity).
    ZP_ASSIGN_OR_RETURN(rows, measure::profileNodes(model, in.modelKey, c, inputs, measure::MeasureParams{1, 0}));
    std::vector<estimate::OpFeatures> f;
    for (const auto& r : rows) f.push_back(r.features);
    auto ms = predictor.predict(f);
    for (size_t i = 0; i < rows.size(); ++i) rows[i].ms = ms[i];
  }
  if (rows.size() != names.size())
    return makeError("node profile: {} has {} nodes under {}, the runtime runs {} (a profile made by another zooplan "
                     "build, whose runtime fused other nodes?): re-run zoo-profile",
                     in.modelKey, rows.size(), c.label(), names.size());
  std::vector<double> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].node != names[i])
      return makeError("node profile: {} node {} is '{}' under {}, '{}' elsewhere", in.modelKey, i, rows[i].node,
                       c.label(), names[i]);
    out.push_back(rows[i].ms);
  }
  return out;
}

}  // namespace

Expected<std::vector<std::vector<estimate::TransitionCost>>> handOffCosts(const estimate::LatencyModel& model,
                                                                          const std::vector<std::string>& names,
                                                                          const std::string& source) {
  std::vector<std::vector<estimate::TransitionCost>> h(names.size(), std::vector<estimate::TransitionCost>(names.size()));
  for (size_t a = 0; a < names.size(); ++a)
    for (size_t b = 0; b < names.size(); ++b) {
      if (a == b) continue;
      auto it = model.transitions().find({names[a], names[b]});
      if (it == model.transitions().end())
        return makeError("{}: no transition cost from '{}' to '{}'", source, names[a], names[b]);
      h[a][b] = it->second;
    }
  return h;
}

Expected<PlaceProblem> buildPlaceProblem(const onnx::ModelProto& model, const PlaceInputs& in) {
  if (in.processors.empty()) return makeError("operator placement: no host processors");
  // The executed nodes, in the runtime's order (the same under every policy).
  ZP_ASSIGN_OR_RETURN(auto session,
                      runtime::Session::fromModel(model, in.modelKey, measure::sessionOptions(in.processors[0])));
  std::vector<std::string> names;
  for (const auto& n : session->nodes()) names.push_back(n.name);
  session.reset();

  PlaceProblem out;
  auto& p = out.problem;
  graph::GraphView view(model);
  std::map<std::string, int> onnxIndex;
  for (int i = 0; i < view.numNodes(); ++i) onnxIndex.emplace(view.node(i).name(), i);
  const std::set<std::string> executed(names.begin(), names.end());
  const auto written = measure::executedOutputs(view, executed);
  const auto read = measure::executedInputs(view, executed);
  std::map<std::string, int> producer;  // tensor -> executed node
  for (size_t v = 0; v < names.size(); ++v) {
    auto it = onnxIndex.find(names[v]);
    opplace::OpNode node{names[v], it == onnxIndex.end() ? "" : view.node(it->second).op_type(), 0, 0};
    if (it != onnxIndex.end()) {
      const auto f = measure::staticOpFeatures(view, it->second);
      node.intensity = f.intensity;
      for (const auto& in : read.at(it->second)) {
        auto pr = producer.find(in);
        if (pr == producer.end()) continue;
        double bytes = 0;
        if (auto ti = view.tensorInfo(in); ti && ti->numElements() > 0)
          bytes = static_cast<double>(ti->numElements() * graph::elementSize(ti->elemType));
        p.edges.push_back(opplace::OpEdge{pr->second, static_cast<int>(v), bytes});
      }
      for (const auto& t : written.at(it->second)) producer[t] = static_cast<int>(v);
    }
    p.nodes.push_back(std::move(node));
  }
  bool predicted = false;
  p.ms.assign(names.size(), {});
  for (const auto& proc : in.processors) {
    p.processors.push_back(proc.name);
    ZP_ASSIGN_OR_RETURN(auto costs, nodeCosts(model, in, proc, names, &predicted));
    for (size_t v = 0; v < names.size(); ++v) p.ms[v].push_back(costs[v]);
  }
  // Activation sparsity of each node's output (SparOA's rho), from the first processor's rows.
  auto rows = rowsOf(in.profile, in.modelKey, in.processors[0]);
  for (size_t v = 0; v < rows.size() && v < p.nodes.size(); ++v) p.nodes[v].activationSparsity = rows[v].features.outputSparsity;
  for (const auto& c : in.alone) {
    ZP_ASSIGN_OR_RETURN(auto costs, nodeCosts(model, in, c, names, &predicted));
    p.alone.push_back(opplace::AloneConfig{c.label(), costs});
  }
  p.handoff = in.handoff;
  // Processors that name their cores occupy them (one with all cores shares them with the others).
  if (std::all_of(in.processors.begin(), in.processors.end(), [](const Processor& q) { return !q.cores.empty(); }))
    for (const auto& q : in.processors) p.cores.push_back(q.cores);
  out.costSource = predicted ? "predicted" : "measured";
  ZP_TRY(opplace::validate(p));
  return out;
}

std::vector<Processor> placeProcessors(const zoo::Zoo& zoo) {
  std::vector<Processor> out;
  for (const auto& p : zoo.processors)
    if (p.host()) out.push_back(p);
  return out;
}

plan::OpPlacement placementSection(const opplace::Problem& p, const opplace::PlacementResult& r,
                                   const std::vector<Processor>& processors, const plan::UnitId& unit,
                                   const std::string& costSource, const opplace::SolveParams& params) {
  assert(processors.size() == p.processors.size());
  plan::OpPlacement o;
  o.unit = unit;
  o.costSource = costSource;
  o.processors = plan::processorNames(processors);
  o.latencyMs = r.solution.latencyMs;
  const auto& s = r.solution;
  o.solver = plan::SolverReport{s.solver, s.optimal ? "optimal" : "feasible", "all assignments", -1, s.latencyMs,
                                s.bound, s.gap, params.timeLimitS, 0, s.nodes, 0, ""};
  o.minMixGain = params.minMixGain;
  o.minMixGainMs = params.minMixGainMs;
  o.mixedLatencyMs = r.mixedLatencyMs;
  for (size_t v = 0; v < p.nodes.size(); ++v)
    o.nodes.push_back(plan::OpPlacementNode{p.nodes[v].name,
                                            p.processors[static_cast<size_t>(s.assignment[v])],
                                            r.timeline.startMs[v], r.timeline.finishMs[v]});
  for (const auto& b : r.baselines)
    o.baselines.push_back(plan::ScheduleResult{b.name, b.latencyMs, b.latencyMs > 0 ? 1000.0 / b.latencyMs : 0.0,
                                               b.handoffs});
  return o;
}

}  // namespace zp::drivers::opplace_flow
