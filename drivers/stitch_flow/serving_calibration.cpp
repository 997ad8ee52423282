#include "drivers/stitch_flow/serving_calibration.h"

#include <cmath>

#include "libplan/runtime/serve/model_file_loader.h"
#include "libplan/runtime/serve/run_calibration.h"
#include "libplan/util/stats.h"

namespace zp::drivers {

Expected<select::ServingCalibration> measureServingCalibration(const select::StitchSpace& space, int rounds,
                                                               uint64_t seed) {
  select::ServingCalibration out;
  if (rounds <= 0) return out;
  for (const auto& p : space.processors)
    if (!p.host() || p.cores.empty()) return out;
  runtime::serve::ServeSetup setup;
  setup.processors = space.processors;
  std::vector<runtime::serve::SubgraphFiles> files;
  std::vector<double> plannedMs, megabytes;
  for (const auto& ts : space.tasks)
    for (int pos = 0; pos < ts.positions; ++pos) {
      const std::string& variant = ts.variants.front();
      const auto& sg = ts.stitch->subgraph(pos, variant);
      for (size_t p = 0; p < space.processors.size(); ++p) {
        const auto ms = ts.latency.subgraph(pos, variant, space.processors[p].name);
        if (!ms || !(*ms > 0) || !std::isfinite(*ms)) continue;
        setup.slots.push_back({ts.name + "/" + std::to_string(pos) + "/" + variant, static_cast<int>(p), 0, true});
        files.push_back({space.stitchDir / sg.file, {}});
        plannedMs.push_back(*ms);
        megabytes.push_back(static_cast<double>(ts.memoryBytes(pos, variant, space.processors[p].name)) / 1e6);
      }
    }
  runtime::serve::ModelFileLoader loader(files);
  runtime::serve::RunCalibrationParams cp;
  cp.rounds = rounds;
  cp.seed = seed;
  ZP_ASSIGN_OR_RETURN(auto cal, runtime::serve::calibrateServing(setup, loader, cp));
  out.dispatchMs = cal.dispatchMs;
  out.handoffMs = cal.handoffMs;
  out.hotRatios.resize(space.processors.size());
  out.idleRatios.resize(space.processors.size());
  // A subgraph not resident is loaded when a query needs it: ms per MB of its memory, the median over one load of each.
  std::vector<double> perMB;
  for (size_t s = 0; s < setup.slots.size(); ++s) {
    if (!(megabytes[s] > 0)) continue;
    const auto t0 = SteadyClock::now();
    ZP_TRY(loader.load(static_cast<int>(s), setup.slots[s],
                       runtime::serve::sessionOptions(setup.processors[static_cast<size_t>(setup.slots[s].processor)])));
    perMB.push_back(msSince(t0) / megabytes[s]);
  }
  if (!perMB.empty()) out.loadMsPerMB = median(perMB);
  for (size_t s = 0; s < setup.slots.size(); ++s) {
    const auto p = static_cast<size_t>(setup.slots[s].processor);
    for (double ms : cal.hotMs[s]) out.hotRatios[p].push_back(ms / plannedMs[s]);
    for (double ms : cal.idleMs[s]) out.idleRatios[p].push_back(ms / plannedMs[s]);
  }
  return out;
}

}  // namespace zp::drivers
