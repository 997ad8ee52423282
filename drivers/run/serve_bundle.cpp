#include "drivers/run/serve_bundle.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <future>
#include <map>
#include <optional>
#include <set>

#include <malloc.h>

#include <fmt/format.h>

#include "drivers/run/serve_system.h"
#include "libplan/runtime/serve/pinned_worker.h"
#include "libplan/runtime/serve/run_calibration.h"
#include "libplan/sim/queries/serve_sim.h"
#include "libplan/util/file.h"
#include "libplan/util/output_dir.h"
#include "libplan/util/progress.h"
#include "libplan/util/stats.h"

namespace zp::drivers {
namespace fs = std::filesystem;
using namespace runtime::serve;

Expected<ServedSlot> servedSlot(Bundle& bundle, const plan::Unit& unit, int processor, const Processor& proc) {
  ZP_ASSIGN_OR_RETURN(const fs::path model, bundle.model(unit));
  ZP_ASSIGN_OR_RETURN(auto cold, coldUnitFiles(bundle, unit));
  if (cold) {  // loaded following its cold section (NNV12)
    ServedSlot slot;
    slot.unit = unit.id;
    slot.processor = processor;
    slot.files = std::move(*cold);
    return slot;
  }
  const auto cache = bundle.cache(unit, proc.policy);
  if (!cache)
    return makeError("{}: missing from the bundle (needed by {} on '{}')", bundle.cachePath(unit, proc.policy).string(),
                     unit.id.str(), proc.name);
  ServedSlot slot;
  slot.unit = unit.id;
  slot.processor = processor;
  slot.files = {model, *cache};
  return slot;
}

Expected<ArrivalTrace> userArrivals(const ServeBundleParams& params, const std::vector<artifacts::KnownTask>& tasks) {
  if (!params.arrivals.empty()) return artifacts::readArrivalsCsv(params.arrivals, tasks);
  ArrivalParams ap;
  for (const auto& k : tasks) {
    auto own = params.taskRateQps.find(k.name);
    ap.tasks.push_back({k.name, params.process == "periodic" ? ArrivalProcess::Periodic : ArrivalProcess::Poisson,
                        own == params.taskRateQps.end() ? params.rateQps : own->second, k.samples});
  }
  ap.seed = params.seed;
  ap.durationMs = params.durationMs;
  ap.count = params.durationMs > 0 ? 0 : (params.count > 0 ? params.count : 60);
  return generateArrivals(ap);
}

namespace {

// Load times are measured once per model and processor and shared by every system served.
using LoadTimes = std::map<std::pair<fs::path, int>, double>;

// What the executor and the simulator take, made from a setup.
struct Prepared {
  ServeSetup setup;
  std::vector<SubgraphFiles> files;
  std::vector<sim::ServeSimSlot> simSlots;
  std::vector<sim::ServeSimTask> simTasks;
  std::vector<sim::ServeSimArrival> arrivals;
};

Prepared prepare(const ServedPlan& sp, SystemSetup& s) {
  Prepared p;
  p.setup.processors = sp.processors;
  p.setup.memoryBudgetBytes = s.budgetBytes;
  for (const auto& slot : s.slots) {
    const std::string name = slot.unit.str() + "@" + sp.processors[static_cast<size_t>(slot.processor)].name;
    // An operator-placed unit's run holds the other processors it places operators on.
    std::vector<int> holds;
    if (slot.files.placement)
      for (size_t q = 0; q < sp.processors.size(); ++q)
        if (static_cast<int>(q) != slot.processor &&
            std::any_of(slot.files.placement->processors.begin(), slot.files.placement->processors.end(),
                        [&](const Processor& x) { return x.name == sp.processors[q].name; }))
          holds.push_back(static_cast<int>(q));
    p.setup.slots.push_back({name, slot.processor, slot.bytes, slot.preload, holds});
    p.files.push_back(slot.files);
    p.simSlots.push_back({slot.processor, slot.plannedMs, 0.0, slot.bytes, slot.preload, {}, {}, holds});
  }
  for (const auto& t : s.tasks) p.simTasks.push_back({t.name, t.slots, t.sloMs, t.accuracySloMet});
  p.setup.tasks = std::move(s.tasks);
  for (const auto& a : s.trace.arrivals) p.arrivals.push_back({a.timeMs, a.task});
  return p;
}

// Median of three loads of every slot that may be loaded while serving, on its
// processor's pinned worker, every processor timing its own loads at the same time
// and loading on until all are done: served, a load has company (the other
// processor runs or loads meanwhile); timed alone on the machine, loads measured
// about a third faster than the same loads served.
Status measureLoads(const ServedPlan& sp, Prepared& p, LoadTimes& times) {
  const size_t P = sp.processors.size();
  std::vector<std::vector<size_t>> todo(P);  // per processor: a slot per model file not yet timed
  std::set<std::pair<fs::path, int>> queued;
  for (size_t s = 0; s < p.setup.slots.size(); ++s) {
    const auto& slot = p.setup.slots[s];
    const auto key = std::make_pair(p.files[s].model, slot.processor);
    if (slot.preload || times.count(key) || !queued.insert(key).second) continue;
    todo[static_cast<size_t>(slot.processor)].push_back(s);
  }
  std::vector<std::unique_ptr<PinnedWorker>> workers(P);
  int busy = 0;
  for (size_t q = 0; q < P; ++q)
    if (!todo[q].empty()) {
      ZP_ASSIGN_OR_RETURN(workers[q], PinnedWorker::start(sp.processors[q]));
      ++busy;
    }
  std::atomic<int> timing{busy};
  std::vector<std::vector<double>> ms(p.setup.slots.size());
  std::vector<std::promise<Status>> done(P);
  for (size_t q = 0; q < P; ++q) {
    if (!workers[q]) continue;
    workers[q]->post([&, q] {
      const auto options = runtime::serve::sessionOptions(sp.processors[q]);
      auto loadOnce = [&](size_t s) -> Expected<double> {
        ModelFileLoader loader({p.files[s]});
        const auto t0 = SteadyClock::now();
        auto l = loader.load(0, p.setup.slots[s], options);
        if (!l.ok()) return l.error();
        return msSince(t0);
      };
      Status status;
      for (int round = 0; round < 3 && status.ok(); ++round)
        for (size_t s : todo[q]) {
          auto t = loadOnce(s);
          if (!t.ok()) {
            status = t.error();
            break;
          }
          ms[s].push_back(*t);
        }
      timing.fetch_sub(1);
      while (status.ok() && timing.load() > 0)  // company for the processors still timing
        for (size_t s : todo[q])
          if (auto t = loadOnce(s); !t.ok() || timing.load() == 0) break;
      done[q].set_value(status);
    });
  }
  Status first;
  for (size_t q = 0; q < P; ++q)
    if (workers[q])
      if (Status st = done[q].get_future().get(); !st.ok() && first.ok()) first = st;
  ZP_TRY(first);
  for (size_t q = 0; q < P; ++q)
    for (size_t s : todo[q]) times[{p.files[s].model, p.setup.slots[s].processor}] = median(ms[s]);
  for (size_t s = 0; s < p.setup.slots.size(); ++s)
    if (!p.setup.slots[s].preload) p.simSlots[s].loadMs = times[{p.files[s].model, p.setup.slots[s].processor}];
  return {};
}

// The summary of the user's queries: the records themselves, or, when a query
// has parts (an arrival of the setup's trace each, s.queryOf), each query
// ending with its last part. `completed(record)` says whether a part finished.
template <typename Record, typename Completed>
QuerySummary userQueries(const SystemSetup& s, const std::vector<runtime::serve::ServeTask>& tasks,
                         const std::vector<Record>& parts, const QuerySummary& ofParts, Completed completed) {
  if (s.queryOf.empty()) return ofParts;
  std::vector<QueryOutcome> q;
  for (double t : s.queryArrivalMs) q.push_back(QueryOutcome{t, t, true, 0.0, true});
  for (size_t e = 0; e < s.queryOf.size(); ++e) {
    auto& o = q[static_cast<size_t>(s.queryOf[e])];
    const auto& task = tasks[static_cast<size_t>(parts[e].task)];
    o.sloMs = o.sloMs == 0 ? task.sloMs : std::min(o.sloMs, task.sloMs);
    o.accuracySloMet = o.accuracySloMet && task.accuracySloMet;
    o.finishMs = std::max(o.finishMs, parts[e].finishMs);
    o.completed = o.completed && completed(parts[e]);
  }
  return summarizeQueries(q);
}

// Round r of R serves the arrivals in [fromMs, toMs) of a trace whose arrivals
// all lie in [0, spanMs) (the last round's end is open).
struct Segment {
  double fromMs = 0, toMs = 0;
  bool holds(double t) const { return t >= fromMs && t < toMs; }
};
Segment segment(int r, int R, double spanMs) {
  return {spanMs * r / R, r + 1 == R ? INFINITY : spanMs * (r + 1) / R};
}
// Past the last arrival, so every arrival lies in some segment.
double spanAfter(double lastArrivalMs) { return lastArrivalMs * (1 + 1e-12) + 1e-9; }

// Per user task (a setup task's queue, else its name; a frame chain's name), the
// summary of its queries (of its parts, for a group's queries): where a system's
// violations come from.
template <typename Record, typename Completed>
std::map<std::string, QuerySummary> perTask(const std::vector<runtime::serve::ServeTask>& tasks,
                                            const std::vector<Record>& records, Completed completed) {
  std::map<std::string, std::vector<QueryOutcome>> by;
  for (const auto& r : records) {
    const auto& t = tasks[static_cast<size_t>(r.task)];
    by[t.queue.empty() ? t.name : t.queue].push_back(
        QueryOutcome{r.arrivalMs, r.finishMs, completed(r), t.sloMs, t.accuracySloMet});
  }
  std::map<std::string, QuerySummary> out;
  for (const auto& [name, q] : by) out[name] = summarizeQueries(q);
  return out;
}

struct SystemOutcome {
  std::string name, description;
  Json plan;
  ServeResult measured;
  QuerySummary measuredQueries, predicted, fromPlan;
  std::map<std::string, QuerySummary> measuredPerTask, predictedPerTask;
  // The predicted residency: loads, evictions, loads over the budget, peak resident bytes.
  int predictedLoads = 0, predictedEvictions = 0, predictedOverBudgetLoads = 0;
  int64_t predictedPeakResidentBytes = 0;
  void setPredictedResidency(const sim::ServeSimResult& r) {
    predictedLoads = r.loads, predictedEvictions = r.evictions, predictedOverBudgetLoads = r.overBudgetLoads;
    predictedPeakResidentBytes = r.peakResidentBytes;
  }
  std::optional<QuerySummary> predictedFirstCome;  // served earliest deadline first: predicted first come instead
  // In hindsight: the simulator given the run and load times the executor measured
  // while serving, drawn independently as the calibrated ones are (a hint of where
  // a gap comes from, not an attribution: the host's slow spells are in neither).
  std::optional<QuerySummary> predictedFromServed;
  Json calibration = Json::object();
  std::vector<std::string> unreachable;  // tasks whose latency SLO no query can meet here
  Json slots = Json::array();            // per slot: its loads and runs measured beside calibrated
  // The simulator given each run's and load's measured time where the executor
  // ran or loaded it: what is left of a gap here is the queueing model's (its
  // order, residency and hand-overs), the rest of the gap the times'.
  std::optional<QuerySummary> predictedReplayingServed;
};

// Tasks whose latency SLO lies below their fastest query as calibrated here:
// the dispatch, each position's median run back to back, the hand-overs.
// One line per user task (its SLO configurations' setup tasks together).
std::vector<std::string> unreachableSlos(const Prepared& p, const RunCalibration& cal) {
  struct Miss {
    int count = 0, of = 0;
    double loMs = INFINITY, hiMs = 0, fastestMs = INFINITY;
  };
  std::map<std::string, Miss> misses;
  std::vector<std::string> order;
  for (const auto& t : p.setup.tasks) {
    const std::string user = t.queue.empty() ? t.name : t.queue;
    if (!misses.count(user)) order.push_back(user);
    Miss& m = misses[user];
    ++m.of;
    double ms = cal.dispatchMs;
    for (size_t k = 0; k < t.slots.size(); ++k) {
      const auto& runs = cal.hotMs[static_cast<size_t>(t.slots[k])];
      ms += runs.empty() ? 0.0 : median(runs);
      if (k > 0 && p.setup.slots[static_cast<size_t>(t.slots[k])].processor !=
                       p.setup.slots[static_cast<size_t>(t.slots[k - 1])].processor)
        ms += cal.handoffMs;
    }
    if (t.sloMs >= ms) continue;
    ++m.count;
    m.loMs = std::min(m.loMs, t.sloMs), m.hiMs = std::max(m.hiMs, t.sloMs), m.fastestMs = std::min(m.fastestMs, ms);
  }
  std::vector<std::string> out;
  for (const auto& user : order) {
    const Miss& m = misses.at(user);
    if (m.count == 0) continue;
    out.push_back(fmt::format("task '{}': the latency SLO of {} of its {} served configuration(s) ({:.4g}-{:.4g} ms) "
                              "lies below its fastest query here, {:.4g} ms or more (dispatch {:.3g} ms and its runs as "
                              "calibrated): every such query violates it; plan with SLOs this host can meet (slo.json)",
                              user, m.count, m.of, m.loMs, m.hiMs, m.fastestMs, cal.dispatchMs));
  }
  return out;
}

// The prediction of a system served as it is measured: in `rounds` segments of
// its trace, each from a fresh start (residency and queues empty), pooled; its
// units' times as `slots` gives them (default: the system's).
sim::ServeSimResult simulateAsServed(const Prepared& p, const sim::ServeSimParams& params, int rounds,
                                     const std::vector<sim::ServeSimSlot>* slots = nullptr,
                                     const std::map<int, sim::ServeSimReplay>* replays = nullptr) {
  const auto& units = slots ? *slots : p.simSlots;
  auto paramsOf = [&](int r) {
    sim::ServeSimParams x = params;
    if (replays) {
      auto it = replays->find(r);
      x.replay = it == replays->end() ? nullptr : &it->second;
    }
    return x;
  };
  if (rounds <= 1) return sim::simulateServing(units, p.simTasks, p.arrivals, paramsOf(0));
  const double span = p.arrivals.empty() ? 0.0 : spanAfter(p.arrivals.back().timeMs);
  sim::ServeSimResult all;
  std::vector<QueryOutcome> outcomes;
  for (int r = 0; r < rounds; ++r) {
    const Segment g = segment(r, rounds, span);
    const double from = g.fromMs;
    std::vector<sim::ServeSimArrival> seg;
    for (const auto& a : p.arrivals)
      if (g.holds(a.timeMs)) seg.push_back({a.timeMs - from, a.task});
    if (seg.empty()) continue;
    auto res = sim::simulateServing(units, p.simTasks, seg, paramsOf(r));
    for (auto q : res.queries) {
      q.arrivalMs += from, q.startMs += from, q.finishMs += from;
      const auto& task = p.simTasks[static_cast<size_t>(q.task)];
      outcomes.push_back({q.arrivalMs, q.finishMs, true, task.sloMs, task.accuracySloMet});
      all.queries.push_back(q);
    }
    all.loads += res.loads, all.evictions += res.evictions, all.overBudgetLoads += res.overBudgetLoads;
    all.peakResidentBytes = std::max(all.peakResidentBytes, res.peakResidentBytes);
  }
  all.summary = summarizeQueries(outcomes);
  return all;
}

// A prediction as the user's queries.
QuerySummary predictedQueries(const SystemSetup& s, const Prepared& p, const sim::ServeSimResult& r) {
  return userQueries(s, p.setup.tasks, r.queries, r.summary, [](const sim::ServeSimQuery&) { return true; });
}

// What the calibration found, per processor: calibrated medians over the plan's
// latencies (geometric mean over the processor's slots), and the wake-up delays.
Json calibrationJson(const ServedPlan& sp, const Prepared& p, const RunCalibration& cal) {
  Json procs = Json::object();
  for (size_t q = 0; q < sp.processors.size(); ++q) {
    double hot = 0, idle = 0;
    int n = 0;
    for (size_t s = 0; s < p.simSlots.size(); ++s)
      if (p.simSlots[s].processor == static_cast<int>(q) && p.simSlots[s].runMs > 0) {
        hot += std::log(median(cal.hotMs[s]) / p.simSlots[s].runMs);
        idle += std::log(median(cal.idleMs[s]) / p.simSlots[s].runMs);
        ++n;
      }
    if (n > 0)
      procs[sp.processors[q].name] = Json{{"slots", n}, {"back_to_back_over_planned", std::exp(hot / n)},
                                          {"after_idle_over_planned", std::exp(idle / n)}};
  }
  size_t runs = SIZE_MAX;  // timed runs per slot and kind, over the pieces
  for (const auto& hot : cal.hotMs) runs = std::min(runs, hot.size());
  return Json{{"processors", procs},
              {"dispatch_ms", cal.dispatchMs},
              {"handoff_ms", cal.handoffMs},
              {"turnaround_ms", cal.turnaroundMs},
              {"runs_per_slot", cal.hotMs.empty() ? 0 : runs}};
}

// One system served: loads measured, predicted from the plan's latencies, its
// run times calibrated in pieces (one before each of its segments is served, so
// that the calibration spans the same stretch of the host's load as the
// measurement), then predicted from the pooled calibration.
struct SystemRun {
  Prepared prepared;
  SystemOutcome outcome;
  RunCalibration calibration;                // the pieces' runs, pooled per slot
  int calibratedRounds = 0;                  // per slot and kind, over the pieces so far
  std::vector<double> dispatchMs, handoffMs;  // per piece, its median
  std::vector<double> turnaroundMs;            // per piece, its median
  // Per slot, each load and run the executor measured while serving (what the
  // report sets beside the calibrated figures the prediction used).
  // Runs split as the simulator draws them: right after their load, after their
  // processor idled, or back to back.
  std::vector<std::vector<double>> servedLoadMs, servedFirstRunMs, servedIdleRunMs, servedHotRunMs;
  std::vector<std::vector<double>> servedIdleGapsMs;  // beside servedIdleRunMs: the idle before each
  std::map<int, sim::ServeSimReplay> servedInOrder;  // per round: each segment's measured times, per query and position
  std::vector<double> servedTurnaroundMs;  // each worker turnaround between queued jobs while serving
  std::vector<double> servedDispatchMs;    // each query's arrival to its first position handed to a worker
};

// Before the system's segments are served: its loads measured, and the prediction from the plan's latencies.
Expected<SystemRun> prepareSystem(const ServedPlan& sp, SystemSetup& s, const ServeBundleParams& params,
                                  LoadTimes& loadTimes) {
  SystemRun run{prepare(sp, s), SystemOutcome{s.name, s.description, s.plan, {}, {}, {}, {}, {}, {}, 0, 0, 0, 0, std::nullopt,
                                              std::nullopt, Json::object(), {}, Json::array()}};
  run.servedLoadMs.resize(run.prepared.setup.slots.size());
  run.servedFirstRunMs.resize(run.prepared.setup.slots.size());
  run.servedIdleRunMs.resize(run.prepared.setup.slots.size());
  run.servedIdleGapsMs.resize(run.prepared.setup.slots.size());
  run.servedHotRunMs.resize(run.prepared.setup.slots.size());
  Prepared& p = run.prepared;
  SystemOutcome& o = run.outcome;
  ZP_TRY(measureLoads(sp, p, loadTimes));
  sim::ServeSimParams simParams{static_cast<int>(sp.processors.size()), s.budgetBytes, 0.0};
  simParams.seed = params.seed;
  simParams.order = s.order;
  auto fromPlan = simulateAsServed(p, simParams, params.rounds);
  o.fromPlan = o.predicted = predictedQueries(s, p, fromPlan);
  const auto always = [](const sim::ServeSimQuery&) { return true; };
  o.predictedPerTask = perTask(p.setup.tasks, fromPlan.queries, always);
  o.setPredictedResidency(fromPlan);
  run.calibration.hotMs.resize(p.setup.slots.size());
  run.calibration.idleMs.resize(p.setup.slots.size());
  run.calibration.idleGapsMs.resize(p.setup.slots.size());
  return run;
}

// A segment's measured loads and runs, per slot; each run also as after idle (its
// processor idle for the simulator's threshold or longer before it) or back to back;
// and each query's dispatch, its arrival to its first position handed to a worker.
void recordServed(SystemRun& run, const ServeResult& served, int round) {
  auto& inOrder = run.servedInOrder[round];
  for (const auto& q : served.queries)
    if (!q.dropped) {
      inOrder.dispatchMs[q.query] = q.postedMs - q.arrivalMs;
      run.servedDispatchMs.push_back(q.postedMs - q.arrivalMs);
    }
  const auto& slices = served.slices;
  const double idleThresholdMs = sim::ServeSimParams{}.idleThresholdMs;
  std::map<int, double> busyUntil;  // per processor, the end of its last slice in this segment
  std::set<std::pair<int, int>> loaded;  // (query, position) of each load: its run comes right after it
  for (const auto& x : slices) {
    const auto slot = static_cast<size_t>(x.slot);
    const double ms = x.endMs - x.startMs;
    auto last = busyUntil.find(x.processor);
    const double idleMs = last == busyUntil.end() ? INFINITY : x.startMs - last->second;
    const bool idle = idleMs >= idleThresholdMs;
    busyUntil[x.processor] = last == busyUntil.end() ? x.endMs : std::max(last->second, x.endMs);
    if (x.kind == runtime::serve::ExecSlice::Kind::Load) {
      run.servedLoadMs.at(slot).push_back(ms);
      inOrder.loadMs[{x.query, x.position}] = ms;
      loaded.insert({x.query, x.position});
      continue;
    }
    inOrder.runMs[{x.query, x.position}] = ms;
    if (loaded.contains({x.query, x.position})) run.servedFirstRunMs.at(slot).push_back(ms);
    else if (!idle) run.servedHotRunMs.at(slot).push_back(ms);
    else {
      run.servedIdleRunMs.at(slot).push_back(ms);
      run.servedIdleGapsMs.at(slot).push_back(idleMs);
    }
  }
}

// The calibration rounds of serving round r of R: params.calibrationRounds spread evenly over the
// serving rounds (fewer rounds than serving rounds: every other one or so, the last one included).
int calibrationPiece(const ServeBundleParams& params, int r, int R) {
  const int64_t c = params.calibrationRounds;
  return static_cast<int>(c * (r + 1) / R - c * r / R);
}

// The slots of tasks whose arrivals span overlapping stretches of the trace
// (SLO configurations served in turn are apart): what the calibration times together.
std::vector<std::vector<int>> slotsServedTogether(const Prepared& p) {
  struct Span {
    double firstMs = 0, lastMs = 0;
    size_t task = 0;
  };
  std::vector<Span> spans;
  std::vector<int> spanOf(p.setup.tasks.size(), -1);
  for (const auto& a : p.arrivals) {
    int& k = spanOf[static_cast<size_t>(a.task)];
    if (k < 0) {
      k = static_cast<int>(spans.size());
      spans.push_back({a.timeMs, a.timeMs, static_cast<size_t>(a.task)});
    }
    auto& s = spans[static_cast<size_t>(k)];
    s.firstMs = std::min(s.firstMs, a.timeMs), s.lastMs = std::max(s.lastMs, a.timeMs);
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return std::tie(a.firstMs, a.task) < std::tie(b.firstMs, b.task);
  });
  std::vector<std::vector<int>> sets;
  double reachMs = 0;
  for (const auto& s : spans) {
    if (sets.empty() || s.firstMs > reachMs) sets.emplace_back(), reachMs = s.lastMs;
    reachMs = std::max(reachMs, s.lastMs);
    const auto& slots = p.setup.tasks[s.task].slots;
    sets.back().insert(sets.back().end(), slots.begin(), slots.end());
  }
  return sets;  // calibrateServing sorts each and drops repeats
}

// One piece of a system's calibration, `rounds` runs per slot and kind, pooled with its others.
Status calibratePiece(SystemRun& run, const ServeBundleParams& params, int rounds) {
  if (rounds <= 0) return {};
  ModelFileLoader loader(run.prepared.files);
  RunCalibrationParams cp;
  cp.rounds = rounds;
  cp.seed = params.seed;
  cp.timeLoads = true;
  cp.servedTogether = slotsServedTogether(run.prepared);
  cp.idleGapStart = run.calibratedRounds;
  run.calibratedRounds += rounds;
  ZP_ASSIGN_OR_RETURN(auto cal, calibrateServing(run.prepared.setup, loader, cp));
  run.calibration.loadMs.resize(cal.loadMs.size());
  run.calibration.freeMs.resize(cal.freeMs.size());
  run.calibration.firstRunMs.resize(cal.firstRunMs.size());
  for (size_t k = 0; k < cal.hotMs.size(); ++k) {
    auto& hot = run.calibration.hotMs[k];
    auto& idle = run.calibration.idleMs[k];
    auto& load = run.calibration.loadMs[k];
    auto& free = run.calibration.freeMs[k];
    hot.insert(hot.end(), cal.hotMs[k].begin(), cal.hotMs[k].end());
    idle.insert(idle.end(), cal.idleMs[k].begin(), cal.idleMs[k].end());
    auto& gaps = run.calibration.idleGapsMs[k];
    gaps.insert(gaps.end(), cal.idleGapsMs[k].begin(), cal.idleGapsMs[k].end());
    load.insert(load.end(), cal.loadMs[k].begin(), cal.loadMs[k].end());
    free.insert(free.end(), cal.freeMs[k].begin(), cal.freeMs[k].end());
    auto& first = run.calibration.firstRunMs[k];
    first.insert(first.end(), cal.firstRunMs[k].begin(), cal.firstRunMs[k].end());
  }
  run.dispatchMs.push_back(cal.dispatchMs);
  run.handoffMs.push_back(cal.handoffMs);
  run.turnaroundMs.push_back(cal.turnaroundMs);
  ::malloc_trim(0);  // the calibration's units (all loaded at once) out of the next segment's peak RSS
  return {};
}

// Per slot that served: its loads and runs as the executor measured them beside
// the calibrated figures the prediction used (medians), where a gap comes from.
Json slotsJson(const Prepared& p, const SystemRun& run) {
  Json out = Json::array();
  auto med = [](const std::vector<double>& v) { return v.empty() ? Json(nullptr) : Json(median(v)); };
  for (size_t k = 0; k < p.setup.slots.size(); ++k) {
    const auto& loads = run.servedLoadMs[k];
    std::vector<double> runs = run.servedHotRunMs[k];
    runs.insert(runs.end(), run.servedIdleRunMs[k].begin(), run.servedIdleRunMs[k].end());
    const auto& firstRuns = run.servedFirstRunMs[k];
    if (loads.empty() && runs.empty() && firstRuns.empty()) continue;
    out.push_back(Json{{"slot", p.setup.slots[k].name},
                       {"loads", loads.size()},
                       {"load_ms", Json{{"measured", med(loads)}, {"calibrated", p.simSlots[k].loadMs}}},
                       {"free_ms", Json{{"calibrated", p.simSlots[k].freeMs}}},
                       {"first_run_ms", Json{{"measured", med(firstRuns)},
                                             {"calibrated", med(p.simSlots[k].firstRunSamplesMs)}}},
                       {"runs", runs.size()},
                       {"run_ms", Json{{"measured", med(runs)}, {"calibrated", med(run.calibration.hotMs[k])}}},
                       // Split as the simulator draws them: back to back, and after the processor idled.
                       {"back_to_back_run_ms", Json{{"measured", med(run.servedHotRunMs[k])},
                                                    {"calibrated", med(run.calibration.hotMs[k])}}},
                       {"after_idle_run_ms", Json{{"measured", med(run.servedIdleRunMs[k])},
                                                  {"calibrated", med(run.calibration.idleMs[k])}}}});
  }
  return out;
}

// The system's units with the run and load times measured while serving in place
// of the calibrated ones (a slot that did not run keeps its calibration).
std::vector<sim::ServeSimSlot> withServedTimes(const Prepared& p, const SystemRun& run) {
  std::vector<sim::ServeSimSlot> slots = p.simSlots;
  for (size_t k = 0; k < slots.size(); ++k) {
    auto& slot = slots[k];
    const auto& hot = run.servedHotRunMs[k];
    const auto& idle = run.servedIdleRunMs[k];
    if (!hot.empty()) slot.runSamplesMs = hot;
    slot.idleRunGapsMs.clear();
    if (!idle.empty()) {
      slot.idleRunSamplesMs = idle;
      slot.idleRunGapsMs = run.servedIdleGapsMs[k];
    } else if (!hot.empty()) {
      slot.idleRunSamplesMs = hot;
    }
    if (!run.servedLoadMs[k].empty()) slot.loadMs = median(run.servedLoadMs[k]);
    if (!run.servedFirstRunMs[k].empty()) slot.firstRunSamplesMs = run.servedFirstRunMs[k];
    slot.freeMs = 0;  // a served load's time holds the frees of the units it evicted
  }
  return slots;
}

// The prediction from the pooled calibration (wake-up delays: the median of the pieces' medians).
void predictCalibrated(const ServedPlan& sp, const SystemSetup& s, SystemRun& run, const ServeBundleParams& params) {
  if (run.dispatchMs.empty()) return;
  Prepared& p = run.prepared;
  SystemOutcome& o = run.outcome;
  RunCalibration& cal = run.calibration;
  cal.dispatchMs = median(run.dispatchMs);
  cal.handoffMs = median(run.handoffMs);
  cal.turnaroundMs = median(run.turnaroundMs);
  for (size_t k = 0; k < p.simSlots.size(); ++k) {
    p.simSlots[k].runSamplesMs = cal.hotMs[k];
    p.simSlots[k].idleRunSamplesMs = cal.idleMs[k];
    p.simSlots[k].idleRunGapsMs = cal.idleGapsMs[k];
    // Timed among the other processors' runs (as served); freeing a copy, what a load that evicts it adds.
    if (!p.setup.slots[k].preload && k < cal.loadMs.size() && !cal.loadMs[k].empty())
      p.simSlots[k].loadMs = median(cal.loadMs[k]);
    if (!p.setup.slots[k].preload && k < cal.freeMs.size() && !cal.freeMs[k].empty())
      p.simSlots[k].freeMs = median(cal.freeMs[k]);
    if (!p.setup.slots[k].preload && k < cal.firstRunMs.size())
      p.simSlots[k].firstRunSamplesMs = cal.firstRunMs[k];
  }
  sim::ServeSimParams simParams{static_cast<int>(sp.processors.size()), s.budgetBytes, cal.handoffMs};
  simParams.dispatchMs = cal.dispatchMs;
  simParams.turnaroundMs = cal.turnaroundMs;
  simParams.seed = params.seed;
  simParams.order = s.order;
  const auto predicted = simulateAsServed(p, simParams, params.rounds);
  o.predicted = predictedQueries(s, p, predicted);
  o.predictedPerTask = perTask(p.setup.tasks, predicted.queries, [](const sim::ServeSimQuery&) { return true; });
  o.setPredictedResidency(predicted);
  const auto served = withServedTimes(p, run);
  o.predictedFromServed = predictedQueries(s, p, simulateAsServed(p, simParams, params.rounds, &served));
  o.predictedReplayingServed =
      predictedQueries(s, p, simulateAsServed(p, simParams, params.rounds, &served, &run.servedInOrder));
  if (s.order != ServingOrder::FirstCome) {
    // What the order gains, under the same calibration: the same units served first come first served.
    simParams.order = ServingOrder::FirstCome;
    o.predictedFirstCome = predictedQueries(s, p, simulateAsServed(p, simParams, params.rounds));
  }
  o.calibration = calibrationJson(sp, p, cal);
  // Beside the calibrated turnaround, the median of those served.
  o.calibration["served_turnaround_ms"] =
      run.servedTurnaroundMs.empty() ? Json(nullptr) : Json(median(run.servedTurnaroundMs));
  // Beside the calibrated dispatch (timed on idle workers), the hand-on delays while serving:
  // a query falling due while every worker runs waits for the first to end its job.
  if (const auto& d = run.servedDispatchMs; !d.empty())
    o.calibration["served_dispatch_ms"] = Json{{"median", median(d)}, {"p90", percentile(d, 0.9)},
                                               {"p99", percentile(d, 0.99)}, {"max", percentile(d, 1.0)}};
  o.unreachable = unreachableSlos(p, cal);
  o.slots = slotsJson(p, run);
}

// A segment of a trace, its times from the segment's start; `index` receives
// each arrival's place in the whole trace.
ArrivalTrace segmentOf(const ArrivalTrace& trace, const Segment& g, std::vector<size_t>& index) {
  ArrivalTrace seg;
  seg.tasks = trace.tasks;
  index.clear();
  for (size_t i = 0; i < trace.arrivals.size(); ++i) {
    const auto& a = trace.arrivals[i];
    if (!g.holds(a.timeMs)) continue;
    seg.arrivals.push_back({a.timeMs - g.fromMs, a.task, a.sample});
    index.push_back(i);
  }
  return seg;
}

// A segment's measurement added to the system's: records in their place in the
// whole trace, times back on its clock; counts summed, peaks the larger.
void addSegment(ServeResult& all, ServeResult seg, const std::vector<size_t>& index, double offsetMs) {
  if (all.processors.empty()) all.processors = seg.processors, all.tasks = seg.tasks, all.slots = seg.slots;
  for (size_t i = 0; i < seg.queries.size(); ++i) {
    auto q = seg.queries[i];
    q.query = static_cast<int>(index[i]);
    q.arrivalMs += offsetMs, q.startMs += offsetMs, q.finishMs += offsetMs, q.postedMs += offsetMs;
    all.queries[index[i]] = q;
  }
  for (auto sl : seg.slices) {
    sl.query = static_cast<int>(index[static_cast<size_t>(sl.query)]);
    sl.startMs += offsetMs, sl.endMs += offsetMs;
    all.slices.push_back(sl);
  }
  all.labelled += seg.labelled, all.correct += seg.correct, all.dropped += seg.dropped;
  all.loads += seg.loads, all.evictions += seg.evictions, all.overBudgetLoads += seg.overBudgetLoads;
  all.peakRssBytes = std::max(all.peakRssBytes, seg.peakRssBytes);
  all.peakResidentBytes = std::max(all.peakResidentBytes, seg.peakResidentBytes);
  all.preloadMs += seg.preloadMs;
}

// Every system serves its trace, cut into `rounds` segments: in each round every
// system serves that segment, starting with a different one each round, so a
// change in the host's load falls on all alike (one round: each serves it whole).
// Right before each segment, a piece of the system's calibration runs.
Status measureSystems(const ServedPlan& sp, std::vector<SystemRun>& runs, const ServeBundleParams& params,
                      const std::string& traced) {
  const int R = std::max(1, params.rounds);
  std::vector<double> span(runs.size(), 0.0);
  for (size_t k = 0; k < runs.size(); ++k) {
    const auto& trace = sp.systems[k].trace;
    span[k] = trace.arrivals.empty() ? 0.0 : spanAfter(trace.arrivals.back().timeMs);
    runs[k].outcome.measured.queries.resize(trace.arrivals.size());
  }
  std::vector<size_t> index;
  double totalMs = 0;  // the serving time ahead, what progress counts
  for (double s : span) totalMs += s;
  Progress progress(fmt::format("plan-run: serving {} system(s) in {} round(s)", runs.size(), R),
                    static_cast<size_t>(totalMs), "ms of traces");
  double servedMs = 0;
  for (int r = 0; r < R; ++r)
    for (size_t j = 0; j < runs.size(); ++j) {
      const size_t k = (j + static_cast<size_t>(r)) % runs.size();
      const auto& s = sp.systems[k];
      const Segment g = segment(r, R, span[k]);
      ZP_TRY(calibratePiece(runs[k], params, calibrationPiece(params, r, R)));
      const ArrivalTrace seg = segmentOf(s.trace, g, index);
      if (seg.arrivals.empty()) continue;
      ModelFileLoader loader(runs[k].prepared.files);
      ZP_ASSIGN_OR_RETURN(auto measured, runtime::serve::serve(runs[k].prepared.setup, loader, seg,
                                                               {.maxQueuedPerTask = params.maxQueuedPerTask,
                                                                .order = s.order}));
      recordServed(runs[k], measured, r);
      for (double t : workerTurnaroundsMs(measured)) runs[k].servedTurnaroundMs.push_back(t);
      if (s.name != traced) measured.slices = {};
      addSegment(runs[k].outcome.measured, std::move(measured), index, g.fromMs);
      ::malloc_trim(0);  // glibc keeps freed pages: one run's records out of the next one's peak RSS
      servedMs += span[k] / R;
      progress.set(static_cast<size_t>(servedMs));
    }
  progress.finish();
  for (size_t k = 0; k < runs.size(); ++k) {
    predictCalibrated(sp, sp.systems[k], runs[k], params);
    runs[k].prepared.arrivals = {};
    auto& o = runs[k].outcome;
    const auto& s = sp.systems[k];
    const auto& tasks = runs[k].prepared.setup.tasks;
    std::vector<double> sloMs;
    std::vector<bool> accuracyMet;
    for (const auto& t : tasks) sloMs.push_back(t.sloMs), accuracyMet.push_back(t.accuracySloMet);
    o.measured.summary = runtime::serve::summarize(o.measured.queries, sloMs, accuracyMet);
    const auto completed = [](const QueryRecord& q) { return q.completed; };
    o.measuredQueries = userQueries(s, tasks, o.measured.queries, o.measured.summary, completed);
    o.measuredPerTask = perTask(tasks, o.measured.queries, completed);
    if (s.name != traced) o.measured.queries = {};
  }
  return {};
}

Json reportJson(const ServeBundleParams& params, const ServedPlan& sp, const std::vector<SystemOutcome>& outcomes,
                const std::vector<std::string>& notes) {
  Json systems = Json::object();
  for (const auto& o : outcomes) {
    Json measured = querySummaryJson(o.measuredQueries);
    measured["peak_rss_bytes"] = o.measured.peakRssBytes;
    measured["peak_resident_bytes"] = o.measured.peakResidentBytes;
    measured["loads"] = o.measured.loads;
    measured["evictions"] = o.measured.evictions;
    measured["over_budget_loads"] = o.measured.overBudgetLoads;  // loads beside units the other processors held
    measured["dropped"] = o.measured.dropped;
    measured["accuracy"] = o.measured.labelled > 0 ? Json(static_cast<double>(o.measured.correct) / o.measured.labelled)
                                                   : Json(nullptr);
    Json predicted = querySummaryJson(o.predicted);
    predicted["loads"] = o.predictedLoads;
    predicted["evictions"] = o.predictedEvictions;  // beside the executor's: where a load's frees differ
    predicted["over_budget_loads"] = o.predictedOverBudgetLoads;
    predicted["peak_resident_bytes"] = o.predictedPeakResidentBytes;
    Json perTaskJson = Json::object();
    for (const auto& [task, m] : o.measuredPerTask) {
      auto p = o.predictedPerTask.find(task);
      perTaskJson[task] = Json{{"measured", querySummaryJson(m)},
                               {"predicted", p == o.predictedPerTask.end() ? Json(nullptr) : querySummaryJson(p->second)}};
    }
    if (o.predictedFirstCome) predicted["first_come"] = querySummaryJson(*o.predictedFirstCome);
    if (o.predictedFromServed) predicted["from_served_times"] = querySummaryJson(*o.predictedFromServed);
    if (o.predictedReplayingServed)
      predicted["replaying_served_times"] = querySummaryJson(*o.predictedReplayingServed);
    Json system = o.plan;
    system.update(Json{{"description", o.description},
                       {"tasks", perTaskJson},
                       {"measured", measured},
                       {"predicted", predicted},
                       {"predicted_from_plan_latencies", querySummaryJson(o.fromPlan)},
                       {"calibration", o.calibration},
                       {"slots", o.slots}});
    systems[o.name] = std::move(system);
  }
  Json report = sp.report;
  if (!report.contains("arrivals"))
    report["arrivals"] = params.arrivals.empty()
                             ? Json{{"process", params.process}, {"rate_qps", params.rateQps}, {"seed", params.seed}}
                             : Json(params.arrivals.string());
  report.update(Json{{"systems", systems},
                     {"queries", sp.queries},
                     {"calibration_rounds", params.calibrationRounds},
                     {"processors", processorsJson(sp.processors)},
                     {"notes", notes}});
  return report;
}

std::string reportTable(const ServedPlan& sp, const std::vector<SystemOutcome>& outcomes, bool calibrated) {
  size_t width = 13;  // the system column: its longest name (a --with system's may be long)
  for (const auto& o : outcomes) width = std::max(width, o.name.size());
  std::string s = fmt::format("{:<{}} {:>17} {:>8} {:>19} {:>8} {:>19} {:>19} {:>10} {:>9}\n", "system", width,
                              "violation m / p", "p(plan)", "p50 ms m / p", "p(plan)", "p99 ms m / p", "q/s m / p",
                              "peak RSS", "accuracy");
  for (const auto& o : outcomes) {
    const auto& m = o.measuredQueries;
    const auto& p = o.predicted;
    // Accuracy of the served queries' answers against their samples' labels (none known: "-").
    const std::string accuracy = o.measured.labelled > 0
                                     ? fmt::format("{:.4f}", static_cast<double>(o.measured.correct) / o.measured.labelled)
                                     : "-";
    const std::string violation = sp.latencySlos ? fmt::format("{:>7.1f}% / {:>5.1f}% {:>7.1f}%", 100 * m.violationRate,
                                                               100 * p.violationRate, 100 * o.fromPlan.violationRate)
                                                 : fmt::format("{:>17} {:>8}", "-", "-");
    s += fmt::format("{:<{}} {} {:>9.2f} / {:>7.2f} {:>8.2f} {:>9.2f} / {:>7.2f} {:>9.1f} / {:>7.1f} {:>7.1f} MB {:>9}\n",
                     o.name, width, violation, m.p50Ms, p.p50Ms, o.fromPlan.p50Ms, m.p99Ms, p.p99Ms, m.throughputQps,
                     p.throughputQps, static_cast<double>(o.measured.peakRssBytes) / 1e6, accuracy);
  }
  for (size_t i = 0; i < outcomes.size(); ++i)
    s += fmt::format("{}{}: {}\n", outcomes[i].name, i == 0 ? " (the plan's choice)" : "", outcomes[i].description);
  for (const auto& o : outcomes)
    if (o.predictedFirstCome && sp.latencySlos)
      s += fmt::format("{}: each processor takes the queued query with the earliest deadline (its arrival plus its "
                       "task's latency bound) first, those already late last, the other systems first come first "
                       "served; its units served first come first served are predicted {:.1f}% violations\n",
                       o.name, 100 * o.predictedFirstCome->violationRate);
  for (const auto& o : outcomes)
    if (o.measured.dropped > 0)
      s += fmt::format("{}: {} of {} queries dropped at arrival (their task's queue full: --max-queue), counted as "
                       "violations\n", o.name, o.measured.dropped, o.measured.summary.queries);
  if (!sp.queryLegend.empty()) s += sp.queryLegend + "\n";
  s += "m: measured by the executor on this host; p: predicted by the open-loop simulator from ";
  s += calibrated ? "run times, loads and wake-up delays calibrated on the pinned processors (runs back to back and "
                    "after idle, loads between runs); p(plan): from the plan's latencies and loads timed alone instead\n"
                  : "the plan's latencies and measured load times\n";
  return s;
}

// --with: each other bundle's plan choice, as the system named, checked to serve
// the same processors and the very same trace as this plan's systems.
Status addAlongside(const ServeBundleParams& params, ServedPlan& sp) {
  for (const auto& [name, dir] : params.alongside) {
    const std::string where = fmt::format("--with {}={}", name, dir.string());
    if (std::any_of(sp.systems.begin(), sp.systems.end(), [&](const auto& s) { return s.name == name; }))
      return makeError("{}: a system of that name is served already; name it otherwise", where);
    ZP_ASSIGN_OR_RETURN(Bundle other, Bundle::open(dir));
    if (!other.plan().stitch)
      return makeError("{}: {} is not a stitch plan's (--with serves another stitch plan's choice)", where,
                       other.planFile());
    ServeBundleParams op = params;
    op.bundle = dir;
    op.compare = {};
    op.alongside = {};
    ZP_ASSIGN_OR_RETURN(ServedPlan osp, stitchServedPlan(other, op));
    auto names = [](const std::vector<Processor>& ps) {
      std::vector<std::pair<std::string, std::vector<int>>> out;
      for (const auto& p : ps) out.push_back({p.name, p.cores});
      return out;
    };
    if (names(osp.processors) != names(sp.processors))
      return makeError("{}: its plan's processors (names and cores) differ from {}'s", where, params.bundle.string());
    SystemSetup s = std::move(osp.systems.front());
    const SystemSetup& mine = sp.systems.front();
    if (!(s.trace == mine.trace) || s.queryOf != mine.queryOf)
      return makeError("{}: its plan serves another trace than {}'s (other tasks, SLO configurations or workload); "
                       "plan both for the same SLO file",
                       where, params.bundle.string());
    s.description = fmt::format("{}'s plan: {}", dir.string(), s.description);
    s.name = name;
    s.plan["bundle"] = dir.string();
    sp.systems.push_back(std::move(s));
  }
  return {};
}

}  // namespace

Json querySummaryJson(const QuerySummary& s) {
  return Json{{"queries", s.queries},         {"completed", s.completed}, {"violations", s.violations},
              {"violation_rate", s.violationRate}, {"p50_ms", s.p50Ms},   {"p99_ms", s.p99Ms},
              {"throughput_qps", s.throughputQps}};
}

Json processorsJson(const std::vector<Processor>& processors) {
  Json procs = Json::array();
  for (const auto& p : processors)
    procs.push_back(Json{{"name", p.name}, {"cores", p.cores}, {"policy", p.policy},
                         {"gemm", p.gemm}, {"threads", p.threads}});
  return procs;
}

Expected<std::string> tracedSystem(const ServeBundleParams& params, const std::vector<std::string>& served) {
  if (!params.traceSystem.empty()) {
    if (std::count(served.begin(), served.end(), params.traceSystem)) return params.traceSystem;
    return makeError("--trace-system {}: not among the systems served ({})", params.traceSystem,
                     fmt::format("{}", fmt::join(served, ", ")));
  }
  return served.empty() ? std::string() : served.front();  // the plan's own
}

Expected<ServeBundleResult> serveBundle(const ServeBundleParams& params) {
  // Before anything runs: a run that cannot write its report should not serve first.
  ZP_TRY(checkOutputFiles({params.json, params.trace}, {{params.bundle, "bundle"}, {params.arrivals, "arrivals"}}));
  ZP_ASSIGN_OR_RETURN(Bundle bundle, Bundle::open(params.bundle));
  ServedPlan sp;
  if (bundle.plan().stitch) {
    ZP_ASSIGN_OR_RETURN(sp, stitchServedPlan(bundle, params));
  } else if (bundle.plan().mts) {
    ZP_ASSIGN_OR_RETURN(sp, mtsServedPlan(bundle, params));
  } else if (!bundle.plan().opplace.empty()) {
    ZP_ASSIGN_OR_RETURN(sp, opplaceServedPlan(bundle, params));
  } else {
    return makeError("{}: --serve serves a stitch, MTS or operator-placement plan's bundle; a concurrent schedule "
                     "runs its frames with plan-run BUNDLE", bundle.planFile());
  }
  ZP_TRY(addAlongside(params, sp));
  std::vector<std::string> served;
  for (auto& s : sp.systems) {
    served.push_back(s.name);
    auto own = params.servingOrderOf.find(s.name);
    if (own == params.servingOrderOf.end() && !params.servingOrder) continue;
    s.order = own != params.servingOrderOf.end() ? own->second : *params.servingOrder;
    s.plan["serving_order"] = servingOrderName(s.order);
  }
  for (const auto& [name, order] : params.servingOrderOf)
    if (!std::count(served.begin(), served.end(), name))
      return makeError("--serving-order {}={}: not among the systems served ({})", name, servingOrderName(order),
                       fmt::format("{}", fmt::join(served, ", ")));
  ZP_ASSIGN_OR_RETURN(const std::string traceName, tracedSystem(params, served));
  // Every system's loads are measured before any is served; its calibration runs beside its serving.
  LoadTimes loadTimes;
  std::vector<SystemRun> runs;
  for (auto& s : sp.systems) {
    ZP_ASSIGN_OR_RETURN(auto run, prepareSystem(sp, s, params, loadTimes));
    runs.push_back(std::move(run));
  }
  ZP_TRY(measureSystems(sp, runs, params, params.trace.empty() ? std::string() : traceName));
  std::vector<SystemOutcome> outcomes;
  for (auto& r : runs) outcomes.push_back(std::move(r.outcome));
  for (const auto& w : outcomes.front().unreachable) bundle.note(w);  // the plan's own choice
  ServeBundleResult res{reportJson(params, sp, outcomes, bundle.notes()),
                        reportTable(sp, outcomes, params.calibrationRounds > 0), bundle.notes()};
  if (!params.trace.empty()) {
    auto traced = std::find_if(outcomes.begin(), outcomes.end(), [&](const auto& o) { return o.name == traceName; });
    ZP_TRY(writeFileAtomic(params.trace, canonicalJson(serveTrace(traced->measured, "plan-run --serve " + traced->name))));
  }
  if (!params.json.empty()) ZP_TRY(writeFileAtomic(params.json, canonicalJson(res.report)));
  return res;
}

}  // namespace zp::drivers
