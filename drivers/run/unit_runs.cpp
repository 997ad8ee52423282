#include "drivers/run/unit_runs.h"

#include <cstdint>
#include <mutex>

#include "libplan/runtime/measure.h"
#include "libplan/util/stats.h"

namespace zp::drivers {

namespace {

// Loads each slot from its files and keeps what the load found.
class RecordingLoader : public runtime::serve::SubgraphLoader {
 public:
  explicit RecordingLoader(const std::vector<runtime::serve::SubgraphFiles>& files)
      : files_(files), stats_(files.size()) {}

  Expected<runtime::serve::LoadedSubgraph> load(int slot, const runtime::serve::ServeSlot&,
                                                const runtime::SessionOptions& options) override {
    ZP_ASSIGN_OR_RETURN(auto loaded, runtime::serve::loadUnit(files_.at(static_cast<size_t>(slot)), options));
    SlotLoadStats stats;
    auto add = [&](const runtime::Session& s) {
      stats.cacheHits += s.loadStats().cacheHits;
      stats.cacheFallbacks += s.loadStats().cacheFallbacks;
      stats.warnings.insert(stats.warnings.end(), s.warnings().begin(), s.warnings().end());
    };
    if (const auto* placed = loaded.unit.placed()) {
      for (int p = 0; p < placed->program().processors(); ++p) add(placed->program().session(p));
    } else {
      add(loaded.unit.session());
    }
    std::lock_guard lock(mutex_);
    stats_[static_cast<size_t>(slot)] = std::move(stats);
    return loaded;
  }

  std::vector<SlotLoadStats> stats() {
    std::lock_guard lock(mutex_);
    return stats_;
  }

 private:
  const std::vector<runtime::serve::SubgraphFiles>& files_;
  std::mutex mutex_;
  std::vector<SlotLoadStats> stats_;
};

}  // namespace

Expected<UnitRuns> runUnits(const UnitRunSetup& setup, const std::vector<UnitQuery>& queries,
                            const UnitRunParams& params) {
  runtime::serve::ServeSetup serve{setup.processors, setup.slots, setup.tasks, INT64_MAX};
  for (auto& slot : serve.slots) slot.preload = params.preload;
  if (!params.preload)
    for (const auto& f : setup.files)
      for (const auto& path : {f.model, f.cache})
        if (!path.empty()) ZP_TRY(runtime::evictFromPageCache(path));
  runtime::serve::ArrivalTrace trace;
  for (const auto& t : setup.tasks) trace.tasks.push_back(t.name);
  for (const auto& q : queries) trace.arrivals.push_back({0.0, q.task, q.sample});
  runtime::serve::ServeParams sp;
  sp.closedLoop = true;
  sp.keepOutputs = true;
  sp.afterRun = params.afterRun;
  RecordingLoader loader(setup.files);
  ZP_ASSIGN_OR_RETURN(auto served, runtime::serve::serve(serve, loader, trace, sp));
  return UnitRuns{std::move(served), loader.stats()};
}

std::vector<double> latenciesMs(const runtime::serve::ServeResult& served, size_t from, size_t to) {
  std::vector<double> ms;
  for (size_t i = from; i < std::min(to, served.queries.size()); ++i) ms.push_back(served.queries[i].latencyMs);
  return ms;
}

double medianLatencyMs(const runtime::serve::ServeResult& served, size_t from) {
  auto ms = latenciesMs(served, from, served.queries.size());
  return ms.empty() ? 0.0 : median(std::move(ms));
}

}  // namespace zp::drivers
