#include "libplan/runtime/serve/run_calibration.h"

#include <algorithm>
#include <atomic>
#include <future>
#include <mutex>
#include <thread>

#include <unistd.h>

#include "libplan/runtime/measure.h"
#include "libplan/runtime/serve/pinned_worker.h"
#include "libplan/runtime/serve/serve_records.h"
#include "libplan/util/stats.h"

namespace zp::runtime::serve {

namespace {

using Workers = std::vector<std::unique_ptr<PinnedWorker>>;

struct Loaded {
  int slot = 0;
  LoadedUnit unit;
  TensorMap inputs;
};

// Writes over twice the core's L2 cache: a unit served is loaded after other
// units have run since it was last needed (it was evicted for them), its code
// and data gone from the core's caches. Timed right after the round's previous
// small run, a small unit's load measured half its served time; after this,
// three fifths (deployment zoo, AVX2 EPYC): what else serving adds is not known.
void takeTheCaches(std::vector<char>& scratch) {
  if (scratch.empty()) {
    const long l2 = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
    scratch.resize(static_cast<size_t>(2 * (l2 > 0 ? l2 : 1 << 20)));
  }
  for (size_t i = 0; i < scratch.size(); i += 64) scratch[i] = static_cast<char>(scratch[i] + 1);
}

Expected<LoadedUnit> loadSlot(const ServeSetup& setup, SubgraphLoader& loader, int slot) {
  const auto& info = setup.slots[static_cast<size_t>(slot)];
  auto l = loader.load(slot, info, sessionOptions(setup.processors[static_cast<size_t>(info.processor)]));
  if (!l.ok()) return makeError("subgraph '{}': {}", info.name, l.error().message);
  if (!l->unit) return makeError("subgraph '{}': the loader returned no unit", info.name);
  return std::move(l->unit);
}

// Loads each of processor p's slots.
Expected<std::vector<Loaded>> loadProcessorSlots(const ServeSetup& setup, SubgraphLoader& loader,
                                                 const RunCalibrationParams& params, int p) {
  std::vector<Loaded> mine;
  for (size_t s = 0; s < setup.slots.size(); ++s) {
    if (setup.slots[s].processor != p) continue;
    ZP_ASSIGN_OR_RETURN(LoadedUnit unit, loadSlot(setup, loader, static_cast<int>(s)));
    TensorMap in = randomInputs(unit.session(), params.seed + s);
    mine.push_back({static_cast<int>(s), std::move(unit), std::move(in)});
  }
  return mine;
}

// One processor's share: load its slots, then set by set the timed rounds of
// its slots in the set (back to back, then after idle gaps), then keep the
// processor busy with them until every processor is done timing the set, so
// that every timed run has company from its own set.
Status calibrateProcessor(const ServeSetup& setup, SubgraphLoader& loader, const RunCalibrationParams& params, int p,
                          const std::vector<std::vector<int>>& sets, std::vector<std::atomic<int>>& timing,
                          std::mutex& holdingTurn, RunCalibration& out, std::vector<TensorMap>& inputs) {
  struct DoneTiming {  // however this processor ends, the others must not wait for it
    std::vector<std::atomic<int>>& timing;
    size_t counted = 0;  // the sets this processor is done timing
    void through(size_t sets) {
      for (; counted < sets; ++counted) timing[counted].fetch_sub(1);
    }
    ~DoneTiming() { through(timing.size()); }
  } doneTiming{timing};
  ZP_ASSIGN_OR_RETURN(auto loaded, loadProcessorSlots(setup, loader, params, p));
  for (const auto& l : loaded) inputs[static_cast<size_t>(l.slot)] = l.inputs;  // this processor's slots only
  // A slot that holds other processors runs with them to itself when served: it
  // is timed after the others, one such slot's processor at a time.
  std::vector<Loaded*> mine, holding;
  for (auto& l : loaded) (setup.slots[static_cast<size_t>(l.slot)].holds.empty() ? mine : holding).push_back(&l);
  // The end of this worker's last run: an after-idle run records how long ago it was.
  auto lastEnd = SteadyClock::now();
  auto runOnce = [&](Loaded& l, std::vector<double>* record, double idleMs) -> Status {
    if (idleMs > 0) std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(idleMs * 1000)));
    const double idleBeforeMs = msSince(lastEnd);
    const auto t0 = SteadyClock::now();
    auto r = l.unit.run(l.inputs);
    lastEnd = SteadyClock::now();
    if (!r.ok()) return makeError("subgraph '{}': {}", setup.slots[static_cast<size_t>(l.slot)].name, r.error().message);
    if (record) record->push_back(msSince(t0));
    if (record && idleMs > 0) out.idleGapsMs[static_cast<size_t>(l.slot)].push_back(idleBeforeMs);
    return {};
  };
  // The slot's copy is freed (timed as its free: serving frees the units a load
  // evicts), then loaded afresh in its place and run once: no other copy of
  // it is alive meanwhile, as none is when serving loads it.
  std::vector<char> scratch;
  auto loadOnce = [&](Loaded& l, bool timed) -> Status {
    takeTheCaches(scratch);
    const auto f0 = SteadyClock::now();
    l.unit = {};
    if (timed) out.freeMs[static_cast<size_t>(l.slot)].push_back(msSince(f0));
    const auto t0 = SteadyClock::now();
    ZP_ASSIGN_OR_RETURN(l.unit, loadSlot(setup, loader, l.slot));
    if (timed) out.loadMs[static_cast<size_t>(l.slot)].push_back(msSince(t0));
    const auto r0 = SteadyClock::now();
    auto r = l.unit.run(l.inputs);
    if (!r.ok()) return makeError("subgraph '{}': {}", setup.slots[static_cast<size_t>(l.slot)].name, r.error().message);
    if (timed) out.firstRunMs[static_cast<size_t>(l.slot)].push_back(msSince(r0));
    lastEnd = SteadyClock::now();  // the worker was busy loading and running it
    return {};
  };
  auto timeRounds = [&](const std::vector<Loaded*>& units) -> Status {
    for (int round = 0; round < params.warmup + 2 * params.rounds; ++round) {
      const bool timed = round >= params.warmup, idle = round >= params.warmup + params.rounds;
      for (size_t u = 0; u < units.size(); ++u) {
        auto& l = *units[u];
        auto& samples = (idle ? out.idleMs : out.hotMs)[static_cast<size_t>(l.slot)];
        const size_t gap = static_cast<size_t>(params.idleGapStart + round - params.warmup - params.rounds) + u;
        const double gapMs = params.idleGapsMs[gap % params.idleGapsMs.size()];
        ZP_TRY(runOnce(l, timed ? &samples : nullptr, idle ? gapMs : 0.0));
        if (params.timeLoads && !idle) ZP_TRY(loadOnce(l, timed));
        if (params.afterRun) params.afterRun();
      }
    }
    return {};
  };
  for (size_t g = 0; g < sets.size(); ++g) {
    std::vector<Loaded*> units;  // this processor's slots of the set, in slot order
    for (Loaded* l : mine)
      if (std::binary_search(sets[g].begin(), sets[g].end(), l->slot)) units.push_back(l);
    ZP_TRY(timeRounds(units));
    doneTiming.through(g + 1);
    while (timing[g].load() > 0 && !units.empty())
      for (Loaded* l : units) ZP_TRY(runOnce(*l, nullptr, 0.0));
    while (timing[g].load() > 0) std::this_thread::sleep_for(std::chrono::microseconds(200));  // idle in this set
  }
  if (holding.empty()) return {};
  std::lock_guard turn(holdingTurn);
  return timeRounds(holding);
}

// The sets of slots timed together: the given ones (sorted, without repeats),
// then the slots in none; one set of all slots when none is given.
Expected<std::vector<std::vector<int>>> calibrationSets(const ServeSetup& setup, const RunCalibrationParams& params) {
  const int n = static_cast<int>(setup.slots.size());
  std::vector<std::vector<int>> sets;
  std::vector<bool> listed(setup.slots.size(), false);
  for (const auto& given : params.servedTogether) {
    std::vector<int> set = given;
    std::sort(set.begin(), set.end());
    set.erase(std::unique(set.begin(), set.end()), set.end());
    for (int s : set) {
      if (s < 0 || s >= n) return makeError("serving calibration: slot {} of a set served together, of {} slots", s, n);
      listed[static_cast<size_t>(s)] = true;
    }
    if (!set.empty()) sets.push_back(std::move(set));
  }
  std::vector<int> rest;
  for (int s = 0; s < n; ++s)
    if (!listed[static_cast<size_t>(s)]) rest.push_back(s);
  if (!rest.empty()) sets.push_back(std::move(rest));
  return sets;
}

Status calibrateRuns(const ServeSetup& setup, SubgraphLoader& loader, const RunCalibrationParams& params,
                     Workers& workers, RunCalibration& out, std::vector<TensorMap>& inputs) {
  ZP_ASSIGN_OR_RETURN(const auto sets, calibrationSets(setup, params));
  std::vector<std::atomic<int>> timing(sets.size());  // per set: the processors still timing it
  for (auto& t : timing) t.store(static_cast<int>(workers.size()));
  std::mutex holdingTurn;
  std::vector<std::future<Status>> done;
  for (size_t p = 0; p < workers.size(); ++p) {
    auto promise = std::make_shared<std::promise<Status>>();
    done.push_back(promise->get_future());
    workers[p]->post([&, p, promise] {
      promise->set_value(
          calibrateProcessor(setup, loader, params, static_cast<int>(p), sets, timing, holdingTurn, out, inputs));
    });
  }
  Status first;
  for (auto& f : done) {
    Status s = f.get();
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

// As the executor dispatches: an idle worker wakes when the arrival falls due,
// posts its query (here to itself) and runs it; the delay ends when it does.
double timeDispatch(PinnedWorker& worker, int samples) {
  struct Arrival {  // shared with the worker, whose last call may end after this one's turn
    SteadyClock::time_point due;
    std::promise<double> ran;
    std::atomic<bool> posted{false};
  };
  std::vector<double> ms;
  for (int i = 0; i < samples; ++i) {
    auto a = std::make_shared<Arrival>();
    a->due = SteadyClock::now() + std::chrono::milliseconds(2);
    auto ran = a->ran.get_future();
    worker.takeArrivals([&worker, a]() -> SteadyClock::time_point {
      if (SteadyClock::now() < a->due) return a->due;
      if (!a->posted.exchange(true)) worker.post([a] { a->ran.set_value(msSince(a->due)); });
      return SteadyClock::time_point::max();
    });
    ms.push_back(ran.get());
    worker.takeArrivals({});
  }
  return median(ms);
}

// As a position hands its query to the next processor: `from` posts to `to`, idle.
double timeHandoff(PinnedWorker& from, PinnedWorker& to, int samples) {
  std::vector<double> ms;
  for (int i = 0; i < samples; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // `to` goes idle
    std::promise<double> ran;
    from.post([&] {
      const auto posted = SteadyClock::now();
      to.post([&, posted] { ran.set_value(msSince(posted)); });
    });
    ms.push_back(ran.get_future().get());
  }
  return median(ms);
}

// The executor's turnaround between queued jobs, timed as it serves: `perTask`
// queries of every task arriving at once, so each worker takes job after job.
// A setup without tasks (a planner's candidate units) serves each slot as a
// task of its own, on the random inputs its runs were timed with.
Expected<double> timeTurnaround(const ServeSetup& setup, SubgraphLoader& loader, int perTask,
                                const std::vector<TensorMap>& inputs) {
  if (perTask < 1 || setup.slots.empty()) return 0.0;
  ServeSetup own;
  if (setup.tasks.empty()) {
    own = setup;
    for (size_t s = 0; s < setup.slots.size(); ++s)
      own.tasks.push_back({"slot " + std::to_string(s), {static_cast<int>(s)}, 1000, true, {inputs[s]}, {}});
  }
  const ServeSetup& served = setup.tasks.empty() ? own : setup;
  ArrivalTrace burst;
  for (const auto& t : served.tasks) burst.tasks.push_back(t.name);
  for (int k = 0; k < perTask; ++k)
    for (size_t t = 0; t < served.tasks.size(); ++t) {
      const int samples = static_cast<int>(served.tasks[t].samples.size());
      burst.arrivals.push_back({0.0, static_cast<int>(t), samples > 0 ? k % samples : 0});
    }
  ZP_ASSIGN_OR_RETURN(auto result, serve(served, loader, burst));
  const auto turns = workerTurnaroundsMs(result);
  // The median: the burst's first jobs also wait for the worker posting all of it.
  return turns.empty() ? 0.0 : median(turns);
}

}  // namespace

Expected<RunCalibration> calibrateServing(const ServeSetup& setup, SubgraphLoader& loader,
                                          const RunCalibrationParams& params) {
  ZP_TRY(checkSetup(setup));
  const bool gapsOk = !params.idleGapsMs.empty() &&
                      std::all_of(params.idleGapsMs.begin(), params.idleGapsMs.end(), [](double g) { return g > 0; });
  if (params.rounds < 1 || params.warmup < 0 || params.wakeSamples < 1 || params.idleGapStart < 0 || !gapsOk)
    return makeError("serving calibration: rounds {}, warmup {}, wake samples {}, {} idle gaps (each above 0 ms)",
                     params.rounds, params.warmup, params.wakeSamples, params.idleGapsMs.size());
  RunCalibration out;
  out.hotMs.resize(setup.slots.size());
  out.idleMs.resize(setup.slots.size());
  out.idleGapsMs.resize(setup.slots.size());
  if (params.timeLoads) {
    out.loadMs.resize(setup.slots.size());
    out.freeMs.resize(setup.slots.size());
    out.firstRunMs.resize(setup.slots.size());
  }
  Workers workers;
  for (const auto& p : setup.processors) {
    ZP_ASSIGN_OR_RETURN(auto w, PinnedWorker::start(p));
    workers.push_back(std::move(w));
  }
  std::vector<TensorMap> inputs(setup.slots.size());  // each slot's, for the burst below
  ZP_TRY(calibrateRuns(setup, loader, params, workers, out, inputs));
  out.dispatchMs = timeDispatch(*workers[0], params.wakeSamples);
  if (workers.size() > 1) out.handoffMs = timeHandoff(*workers[0], *workers[1], params.wakeSamples);
  workers.clear();  // serving starts workers of its own on the same cores
  ZP_ASSIGN_OR_RETURN(out.turnaroundMs, timeTurnaround(setup, loader, params.turnaroundQueriesPerTask, inputs));
  return out;
}

}  // namespace zp::runtime::serve
