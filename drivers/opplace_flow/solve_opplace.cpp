#include "drivers/opplace_flow/solve_opplace.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "drivers/opplace_flow/node_profiles.h"
#include "drivers/opplace_flow/place_model.h"
#include "libplan/artifacts/latency_model_json.h"
#include "libplan/artifacts/plan_json.h"
#include "libplan/artifacts/zoo_json.h"
#include "libplan/graph/model_io.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"

namespace zp::drivers {
namespace {

using opplace_flow::PlaceInputs;

// Hand-off costs between the processors: zoo-profile's measured transitions.
Expected<std::vector<std::vector<estimate::TransitionCost>>> handOffs(const std::filesystem::path& file,
                                                            const std::vector<std::string>& names) {
  ZP_ASSIGN_OR_RETURN(auto tasks, artifacts::readLatencyModel(file));
  if (tasks.empty()) return makeError("{}: no tasks, so no measured hand-off costs", file.string());
  return opplace_flow::handOffCosts(tasks.front().model, names, file.string());
}

}  // namespace

Expected<SolveOpplaceResult> solveOpplace(const SolveOpplaceOptions& o) {
  ZP_ASSIGN_OR_RETURN(auto zoo, artifacts::loadZoo(o.zoo));
  PlaceInputs in;
  in.processors = opplace_flow::placeProcessors(zoo);
  if (in.processors.empty()) return makeError("{}: no host processors to place operators on", o.zoo);
  const std::filesystem::path dir(o.profileDir);
  ZP_ASSIGN_OR_RETURN(in.profile, artifacts::readNodeProfileCsv(dir / "node_profile.csv"));
  std::vector<std::string> names;
  for (const auto& p : in.processors) names.push_back(p.name);
  ZP_ASSIGN_OR_RETURN(in.handoff, handOffs(dir / "latency_model.json", names));
  // Multi-threaded configurations in the profile: whole-model baselines.
  std::set<Processor> alone;
  for (const auto& r : in.profile)
    if (r.threads > 1) {
      Processor config;
      config.policy = r.policy;
      config.threads = r.threads;
      alone.insert(config);
    }
  in.alone.assign(alone.begin(), alone.end());
  // The model's key in the profile: a zoo variant's, else the file's stem (bench_opplace_predictor's keys).
  in.modelKey = std::filesystem::path(o.model).stem().string();
  std::error_code ec;
  for (const auto& m : opplace_flow::zooModels(zoo))
    if (std::filesystem::equivalent(m.file, o.model, ec)) in.modelKey = m.name;
  in.seed = o.seed;
  ZP_ASSIGN_OR_RETURN(auto model, graph::loadModel(o.model));
  ZP_ASSIGN_OR_RETURN(auto pp, opplace_flow::buildPlaceProblem(model, in));
  ZP_ASSIGN_OR_RETURN(auto result, opplace::placeOperators(pp.problem, o.solve));

  plan::Plan plan;
  plan.header.tool = o.tool;
  plan.header.version = o.version;
  for (const auto& f : {o.model, o.zoo, (dir / "node_profile.csv").string(), (dir / "latency_model.json").string()}) {
    ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(f));
    plan.header.inputs[f] = sha256Hex(bytes);
  }
  // The model is one unit: on one processor when no mix gained enough, else placed per operator.
  plan::Unit unit;
  unit.id = plan::UnitId::model(in.modelKey);
  unit.file = o.model;
  unit.sha256 = plan.header.inputs.at(o.model);
  plan.processors = in.processors;
  plan.opplace.push_back(
      opplace_flow::placementSection(pp.problem, result, in.processors, unit.id, pp.costSource, o.solve));
  std::set<std::string> used;
  for (const auto& n : plan.opplace.front().nodes) used.insert(n.processor);
  if (used.size() == 1) unit.processor = *used.begin();
  else unit.operatorPlaced = true;
  plan.units.push_back(std::move(unit));
  ZP_TRY(createParentDirectories(o.output));
  ZP_TRY(artifacts::writePlan(plan, o.output));

  const auto& s = result.solution;
  std::string out = fmt::format("{}: {} nodes, {} edges on {}; costs {}\n", o.model, pp.problem.nodes.size(),
                                pp.problem.edges.size(), fmt::join(names, ", "), pp.costSource);
  out += fmt::format("{:<20} {:>12} {:>9}\n", "schedule", "latency ms", "hand-offs");
  out += fmt::format("{:<20} {:>12.4f} {:>9}  ({} {}, gap {:.3g})\n", "opplace", s.latencyMs, result.timeline.handoffs,
                     s.solver, s.optimal ? "optimal" : "not proven optimal", s.gap);
  if (result.mixedLatencyMs > 0)
    out += fmt::format("  (kept one processor: the best mix, {:.4f} ms, gains less than --min-mix-gain {:g} or "
                       "--min-mix-gain-ms {:g})\n",
                       result.mixedLatencyMs, o.solve.minMixGain, o.solve.minMixGainMs);
  for (const auto& b : result.baselines)
    out += fmt::format("{:<20} {:>12.4f} {:>9}{}\n", b.name, b.latencyMs, b.handoffs,
                       b.detail.empty() ? "" : "  (" + b.detail + ")");
  out += fmt::format("wrote {}\n", o.output);
  return SolveOpplaceResult{out};
}

}  // namespace zp::drivers
