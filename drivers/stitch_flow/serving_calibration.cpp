#include "drivers/stitch_flow/serving_calibration.h"

#include <algorithm>
#include <cmath>

#include "libplan/plan/unit.h"
#include "libplan/runtime/serve/model_file_loader.h"
#include "libplan/runtime/serve/run_calibration.h"
#include "libplan/util/progress.h"
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
  std::vector<std::string> keys;
  std::vector<double> plannedMs, megabytes;
  for (const auto& ts : space.tasks)
    for (int pos = 0; pos < ts.positions; ++pos)
      for (const auto& variant : ts.variants) {
        const auto& sg = ts.stitch->subgraph(pos, variant);
        for (size_t p = 0; p < space.processors.size(); ++p) {
          const auto ms = ts.latency.subgraph(pos, variant, space.processors[p].name);
          if (!ms || !(*ms > 0) || !std::isfinite(*ms)) continue;
          const std::string id = plan::UnitId::subgraph(ts.name, pos, variant).str();
          setup.slots.push_back({id, static_cast<int>(p), 0, true});
          keys.push_back(id + "@" + space.processors[p].name);
          files.push_back({space.stitchDir / sg.file, {}});
          plannedMs.push_back(*ms);
          megabytes.push_back(static_cast<double>(ts.memoryBytes(pos, variant, space.processors[p].name)) / 1e6);
        }
      }
  // Each weight-shared group's unit on every processor it was profiled on.
  for (const auto& g : space.groups)
    for (size_t p = 0; p < space.processors.size(); ++p) {
      const std::string& proc = space.processors[p].name;
      auto ms = g.runMs.find(proc);
      if (ms == g.runMs.end() || !(ms->second > 0) || !std::isfinite(ms->second)) continue;
      const std::string id = plan::UnitId::group(g.name).str();
      setup.slots.push_back({id, static_cast<int>(p), 0, true});
      keys.push_back(id + "@" + proc);
      files.push_back({space.stitchDir / g.file, {}});
      plannedMs.push_back(ms->second);
      megabytes.push_back(static_cast<double>(g.bytes.at(proc)) / 1e6);
    }
  // Each placed model, dispatched on its first processor and holding the others.
  for (const auto& m : space.placed) {
    const auto& o = m.placement;
    runtime::serve::OperatorPlacement placement;
    std::vector<int> held;
    for (const auto& name : o.processors) {
      placement.processors.push_back(space.processors[static_cast<size_t>(select::processorIndex(space, name))]);
      placement.caches.emplace_back();  // none: its weights transformed at load, as for the other units here
      if (name != o.processors.front()) held.push_back(select::processorIndex(space, name));
    }
    for (const auto& n : o.nodes)
      placement.nodeProcessor[n.node] = static_cast<int>(
          std::find(o.processors.begin(), o.processors.end(), n.processor) - o.processors.begin());
    placement.source = o.unit.str();
    setup.slots.push_back({o.unit.str(), select::processorIndex(space, o.processors.front()), 0, true, held});
    keys.push_back(o.unit.str() + "@" + o.processors.front());
    files.push_back({space.stitchDir / m.file, {}, {}, std::move(placement)});
    plannedMs.push_back(o.latencyMs);
    megabytes.push_back(static_cast<double>(m.bytes) / 1e6);
  }
  runtime::serve::ModelFileLoader loader(files);
  runtime::serve::RunCalibrationParams cp;
  cp.rounds = rounds;
  cp.seed = seed;
  cp.timeLoads = true;
  Progress progress("plan-solve: calibrating run times on the pinned processors",
                    setup.slots.size() * static_cast<size_t>(cp.warmup + 2 * cp.rounds), "runs");
  cp.afterRun = [&] { progress.advance(); };
  ZP_ASSIGN_OR_RETURN(auto cal, runtime::serve::calibrateServing(setup, loader, cp));
  progress.finish();
  out.dispatchMs = cal.dispatchMs;
  out.handoffMs = cal.handoffMs;
  out.hotRatios.resize(space.processors.size());
  out.idleRatios.resize(space.processors.size());
  std::vector<double> perMB;  // for units the planner meets without a measurement of their own
  for (size_t s = 0; s < setup.slots.size(); ++s) {
    const auto p = static_cast<size_t>(setup.slots[s].processor);
    const double loadMs = median(cal.loadMs[s]);
    out.units[keys[s]] = select::UnitCalibration{cal.hotMs[s], cal.idleMs[s], loadMs, median(cal.freeMs[s]),
                                                        cal.firstRunMs[s]};
    if (megabytes[s] > 0) perMB.push_back(loadMs / megabytes[s]);
    for (double ms : cal.hotMs[s]) out.hotRatios[p].push_back(ms / plannedMs[s]);
    for (double ms : cal.idleMs[s]) out.idleRatios[p].push_back(ms / plannedMs[s]);
  }
  if (!perMB.empty()) out.loadMsPerMB = median(perMB);
  return out;
}

}  // namespace zp::drivers
