#include "drivers/stitch_flow/placed_models.h"

#include <algorithm>
#include <cassert>
#include <set>

#include <fmt/format.h>

#include "drivers/opplace_flow/place_model.h"
#include "libplan/artifacts/node_profile_csv.h"
#include "libplan/artifacts/profile_report.h"
#include "libplan/graph/model_io.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/json_reader.h"
#include "passes/opplace/opplace.h"

namespace zp::drivers {
namespace fs = std::filesystem;

Expected<std::optional<MeasuredPlacing>> readMeasuredPlacing(select::StitchSpace& space) {
  const fs::path file = space.profileDir / "node_profile.csv";
  if (space.tasks.empty() || space.processors.size() < 2 || !fs::exists(file)) return std::optional<MeasuredPlacing>();
  ZP_ASSIGN_OR_RETURN(const std::string bytes, readFile(file));
  const fs::path reportPath = space.profileDir / "report.json";
  ZP_ASSIGN_OR_RETURN(const Json report, readJsonFile(reportPath));
  ZP_TRY(artifacts::checkRecordedFile(report, reportPath, file, bytes));
  space.inputHashes["profile/node_profile.csv"] = sha256Hex(bytes);
  MeasuredPlacing m;
  ZP_ASSIGN_OR_RETURN(m.inputs.profile, artifacts::parseNodeProfileCsv(bytes, file.string()));
  for (const auto& r : m.inputs.profile) m.profiledModels.insert(r.model);
  m.zooPath = (space.stitchDir / space.manifest.zooPath).lexically_normal();
  ZP_ASSIGN_OR_RETURN(m.zoo, artifacts::loadZoo(m.zooPath));
  m.inputs.processors = space.processors;
  // Every task's latency model carries the same measured transitions.
  ZP_ASSIGN_OR_RETURN(m.inputs.handoff,
                      opplace_flow::handOffCosts(space.tasks.front().latency, plan::processorNames(space.processors),
                                                 (space.profileDir / "latency_model.json").string()));
  return std::optional<MeasuredPlacing>(std::move(m));
}

select::PlacedModel placedCandidate(const select::StitchSpace& space, size_t task, const zoo::VariantInfo& variant,
                                    uint64_t original, plan::OpPlacement placement, select::PlacedBy by) {
  const auto& ts = space.tasks[task];
  std::set<std::string> used;
  for (const auto& n : placement.nodes) used.insert(n.processor);
  placement.processors.clear();
  for (const auto& p : space.processors)
    if (used.count(p.name)) placement.processors.push_back(p.name);
  assert(!placement.processors.empty() && "a placement runs its nodes somewhere");
  select::PlacedModel m;
  m.by = by;
  m.task = static_cast<int>(task);
  m.variant = variant.id;
  m.original = original;
  m.file = (fs::path(space.manifest.zooPath).parent_path() / variant.onnx).lexically_normal().generic_string();
  m.sha256 = variant.sha256;
  for (int pos = 0; pos < ts.positions; ++pos) m.bytes += ts.memoryBytes(pos, variant.id, placement.processors.front());
  placement.memoryBytes = m.bytes;
  m.placement = std::move(placement);
  return m;
}

Expected<std::string> addPlacedModels(select::StitchSpace& space, MeasuredPlacing& measured,
                                      const PlacedModelsParams& params) {
  const auto& zoo = measured.zoo;
  const auto& profiled = measured.profiledModels;
  opplace_flow::PlaceInputs& in = measured.inputs;
  int solved = 0;
  std::vector<std::string> kept;
  for (size_t t = 0; t < space.tasks.size(); ++t) {
    const auto& ts = space.tasks[t];
    for (size_t v = 0; v < ts.variants.size(); ++v) {
      const std::string& variant = ts.variants[v];
      in.modelKey = artifacts::zooModelKey(zoo.name, ts.name, variant);
      if (!profiled.count(in.modelKey)) continue;  // placed on measured costs only
      const auto info = std::find_if(ts.stitch->variants.begin(), ts.stitch->variants.end(),
                                     [&](const zoo::VariantInfo& x) { return x.id == variant; });
      const uint64_t original =
          ts.combinations().number(std::vector<int>(static_cast<size_t>(ts.positions), static_cast<int>(v)));
      if (info == ts.stitch->variants.end() || !ts.valid(original)) continue;
      ZP_ASSIGN_OR_RETURN(auto model, graph::loadModel(space.stitchDir / fs::path(space.manifest.zooPath).parent_path() /
                                                       info->onnx));
      ZP_ASSIGN_OR_RETURN(auto pp, opplace_flow::buildPlaceProblem(model, in));
      ZP_ASSIGN_OR_RETURN(auto result, opplace::placeOperators(pp.problem, params.solve));
      ++solved;
      plan::OpPlacement o = opplace_flow::placementSection(pp.problem, result, space.processors,
                                                           plan::UnitId::model(in.modelKey), pp.costSource, params.solve);
      std::set<std::string> used;
      for (const auto& n : o.nodes) used.insert(n.processor);
      if (used.size() < 2) continue;  // one processor: the space runs the variant whole there already
      select::PlacedModel m = placedCandidate(space, t, *info, original, std::move(o), select::PlacedBy::SparOA);
      kept.push_back(fmt::format("{}/{} {:.3f} ms", ts.name, variant, m.placement.latencyMs));
      space.placed.push_back(std::move(m));
    }
  }
  return fmt::format("operator placement: {} of {} profiled variants gain at least {:g}% and {:g} ms over one "
                     "processor{}{}\n",
                     kept.size(), solved, 100 * params.solve.minMixGain, params.solve.minMixGainMs,
                     kept.empty() ? "" : ": ",
                     fmt::join(kept, ", "));
}

}  // namespace zp::drivers
