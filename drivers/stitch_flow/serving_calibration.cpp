#include "drivers/stitch_flow/serving_calibration.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "libplan/plan/unit.h"
#include "libplan/runtime/serve/model_file_loader.h"
#include "libplan/runtime/serve/processor.h"
#include "libplan/runtime/serve/run_calibration.h"
#include "libplan/runtime/session.h"
#include "libplan/util/progress.h"
#include "libplan/util/stats.h"
#include "passes/coldstart/runtime_schedule.h"

namespace zp::drivers {
namespace fs = std::filesystem;

namespace {

// A folder for the weight caches the calibration's units load from, removed with it.
class ScratchFolder {
 public:
  static Expected<ScratchFolder> make() {
    ScratchFolder f;
    std::error_code ec;
    f.path_ = fs::temp_directory_path(ec) / fmt::format("zooplan-calibration-{}", ::getpid());
    if (!ec) fs::create_directories(f.path_, ec);
    if (ec) return makeError("{}: cannot create the calibration's scratch folder: {}", f.path_.string(), ec.message());
    return f;
  }
  ScratchFolder() = default;
  ScratchFolder(ScratchFolder&& o) noexcept : path_(std::exchange(o.path_, {})) {}
  ScratchFolder& operator=(ScratchFolder&&) = delete;
  ~ScratchFolder() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The calibration's slots, one per unit and processor, and what each is.
struct CalibrationSlots {
  runtime::serve::ServeSetup setup;
  std::vector<runtime::serve::SubgraphFiles> files;
  std::vector<std::string> keys;  // "UNIT_ID@PROCESSOR"
  std::vector<double> plannedMs, megabytes;
  std::vector<bool> coldSection;  // loaded by its cold section: its figures go to ServingCalibration::coldLoaded
  void add(runtime::serve::ServeSlot slot, std::string key, runtime::serve::SubgraphFiles f, double ms, double mb,
           bool cold = false) {
    setup.slots.push_back(std::move(slot));
    keys.push_back(std::move(key));
    files.push_back(std::move(f));
    plannedMs.push_back(ms);
    megabytes.push_back(mb);
    coldSection.push_back(cold);
  }
};

// Writes the caches the calibration's units load from: each model's warm
// cache per kernel policy (as plan-emit writes a bundle's), and each
// subgraph's cold cache for its cold section.
class CacheWriter {
 public:
  explicit CacheWriter(const fs::path& folder) : folder_(folder) {}

  Expected<fs::path> warm(const fs::path& model, const Processor& processor) {
    const std::string key = model.string() + "|" + processor.policy;
    if (auto it = warm_.find(key); it != warm_.end()) return it->second;
    runtime::SessionOptions so;
    so.threads = processor.threads;
    so.kernels.policy = processor.policy;
    const fs::path path = nextPath(processor.policy);
    if (Status st = runtime::Session::writeModelCache(model, so, path); !st.ok())
      return makeError("{}: cannot write its weight cache ({}): {}", model.string(), processor.policy,
                       st.error().message);
    return warm_.emplace(key, path).first->second;
  }

  Expected<runtime::serve::SubgraphFiles> cold(const fs::path& model, const plan::ColdPlan& section) {
    ZP_ASSIGN_OR_RETURN(runtime::ColdSchedule schedule, coldstart::coldScheduleOf(section, section.unit.str()));
    const fs::path path = nextPath("cold");
    ZP_TRY(runtime::Session::writeColdCache(model, schedule, runtime::SessionOptions{}, path, false));
    return runtime::serve::SubgraphFiles{model, path, std::make_shared<const runtime::ColdSchedule>(std::move(schedule))};
  }

 private:
  fs::path nextPath(const std::string& kind) { return folder_ / fmt::format("{}.{}.zwc", written_++, kind); }

  fs::path folder_;
  int written_ = 0;
  std::map<std::string, fs::path> warm_;  // "MODEL|POLICY" -> its cache
};

bool profiledCold(const profile::ColdProfile& profile, const plan::UnitId& unit) {
  const std::string key = unit.profileKey();
  return std::any_of(profile.models.begin(), profile.models.end(), [&](const auto& m) { return m.model == key; });
}

// Every subgraph on each processor it was profiled on; with a cold profile also
// loaded by its cold section, a slot of its own.
Status addSubgraphs(const select::StitchSpace& space, const ColdSectionCalibration& cold, CacheWriter& caches,
                    CalibrationSlots& out) {
  for (const auto& ts : space.tasks)
    for (int pos = 0; pos < ts.positions; ++pos)
      for (const auto& variant : ts.variants) {
        const fs::path model = space.stitchDir / ts.stitch->subgraph(pos, variant).file;
        const auto unit = plan::UnitId::subgraph(ts.name, pos, variant);
        std::optional<runtime::serve::SubgraphFiles> coldFiles;
        for (size_t p = 0; p < space.processors.size(); ++p) {
          const auto& proc = space.processors[p];
          const auto ms = ts.latency.subgraph(pos, variant, proc.name);
          if (!ms || !(*ms > 0) || !std::isfinite(*ms)) continue;
          const double mb = static_cast<double>(ts.memoryBytes(pos, variant, proc.name)) / 1e6;
          ZP_ASSIGN_OR_RETURN(fs::path cache, caches.warm(model, proc));
          out.add({unit.str(), static_cast<int>(p), 0, true}, unit.str() + "@" + proc.name, {model, cache}, *ms, mb);
          if (!cold.profile || !profiledCold(*cold.profile, unit)) continue;
          if (!coldFiles) {
            auto section = coldstart::planColdStart(*cold.profile, unit, cold.params);
            if (!section.ok()) return makeError("cold profile: {}", section.error().message);
            ZP_ASSIGN_OR_RETURN(auto f, caches.cold(model, *section));
            coldFiles = std::move(f);
          }
          out.add({unit.str() + " (cold section)", static_cast<int>(p), 0, true}, unit.str() + "@" + proc.name,
                  *coldFiles, *ms, mb, true);
        }
      }
  return {};
}

// Each weight-shared group's unit on every processor it was profiled on; each
// placed model, dispatched on its first processor and holding the others.
Status addGroupsAndPlaced(const select::StitchSpace& space, CacheWriter& caches, CalibrationSlots& out) {
  for (const auto& g : space.groups)
    for (size_t p = 0; p < space.processors.size(); ++p) {
      const auto& proc = space.processors[p];
      auto ms = g.runMs.find(proc.name);
      if (ms == g.runMs.end() || !(ms->second > 0) || !std::isfinite(ms->second)) continue;
      const std::string id = plan::UnitId::group(g.name).str();
      ZP_ASSIGN_OR_RETURN(fs::path cache, caches.warm(space.stitchDir / g.file, proc));
      out.add({id, static_cast<int>(p), 0, true}, id + "@" + proc.name, {space.stitchDir / g.file, cache}, ms->second,
              static_cast<double>(g.bytes.at(proc.name)) / 1e6);
    }
  for (const auto& m : space.placed) {
    const auto& o = m.placement;
    const fs::path model = space.stitchDir / m.file;
    runtime::serve::OperatorPlacement placement;
    std::vector<int> held;
    for (const auto& name : o.processors) {
      const auto& proc = space.processors[static_cast<size_t>(select::processorIndex(space, name))];
      placement.processors.push_back(proc);
      ZP_ASSIGN_OR_RETURN(fs::path cache, caches.warm(model, proc));
      placement.caches.push_back(cache);
      if (name != o.processors.front()) held.push_back(select::processorIndex(space, name));
    }
    for (const auto& n : o.nodes)
      placement.nodeProcessor[n.node] = static_cast<int>(
          std::find(o.processors.begin(), o.processors.end(), n.processor) - o.processors.begin());
    placement.source = o.unit.str();
    out.add({o.unit.str(), select::processorIndex(space, o.processors.front()), 0, true, held},
            o.unit.str() + "@" + o.processors.front(), {model, {}, {}, std::move(placement)}, o.latencyMs,
            static_cast<double>(m.bytes) / 1e6);
  }
  return {};
}

}  // namespace

Expected<select::ServingCalibration> measureServingCalibration(const select::StitchSpace& space, int rounds,
                                                               uint64_t seed, const ColdSectionCalibration& cold) {
  select::ServingCalibration out;
  if (rounds <= 0) return out;
  for (const auto& p : space.processors)
    if (!p.host() || p.cores.empty()) return out;
  ZP_ASSIGN_OR_RETURN(ScratchFolder scratch, ScratchFolder::make());
  CacheWriter caches(scratch.path());
  CalibrationSlots slots;
  slots.setup.processors = space.processors;
  ZP_TRY(addSubgraphs(space, cold, caches, slots));
  ZP_TRY(addGroupsAndPlaced(space, caches, slots));
  runtime::serve::ModelFileLoader loader(slots.files);
  runtime::serve::RunCalibrationParams cp;
  cp.rounds = rounds;
  cp.seed = seed;
  cp.timeLoads = true;
  Progress progress("plan-solve: calibrating run times on the pinned processors",
                    slots.setup.slots.size() * static_cast<size_t>(cp.warmup + 2 * cp.rounds), "runs");
  cp.afterRun = [&] { progress.advance(); };
  ZP_ASSIGN_OR_RETURN(auto cal, runtime::serve::calibrateServing(slots.setup, loader, cp));
  progress.finish();
  out.dispatchMs = cal.dispatchMs;
  out.handoffMs = cal.handoffMs;
  out.turnaroundMs = cal.turnaroundMs;
  out.hotRatios.resize(space.processors.size());
  out.idleRatios.resize(space.processors.size());
  std::vector<double> perMB;  // for units the planner meets without a measurement of their own
  for (size_t s = 0; s < slots.setup.slots.size(); ++s) {
    const double loadMs = median(cal.loadMs[s]);
    select::UnitCalibration unit{cal.hotMs[s], cal.idleMs[s], loadMs, median(cal.freeMs[s]), cal.firstRunMs[s],
                                 cal.idleGapsMs[s]};
    if (slots.coldSection[s]) {
      out.coldLoaded[slots.keys[s]] = std::move(unit);
      continue;
    }
    out.units[slots.keys[s]] = std::move(unit);
    const auto p = static_cast<size_t>(slots.setup.slots[s].processor);
    if (slots.megabytes[s] > 0) perMB.push_back(loadMs / slots.megabytes[s]);
    for (double ms : cal.hotMs[s]) out.hotRatios[p].push_back(ms / slots.plannedMs[s]);
    for (double ms : cal.idleMs[s]) out.idleRatios[p].push_back(ms / slots.plannedMs[s]);
  }
  if (!perMB.empty()) out.loadMsPerMB = median(perMB);
  return out;
}

}  // namespace zp::drivers
