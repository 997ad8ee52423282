#include "libplan/sim/queries/serve_sim.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <iterator>
#include <random>

#include "libplan/sim/queries/processor_queues.h"
#include "libplan/util/budgeted_lru.h"

namespace zp::sim {

namespace {
struct Running {
  int slot = -1;
  double until = 0;
};

// Makes `slot` resident at `start` on `processor`; returns its load time (0 when
// resident), freeing the units it evicts included (the executor frees them on
// the loading worker before it loads).
double acquire(int slot, int processor, double start, const std::vector<ServeSimSlot>& slots,
               const std::vector<Running>& running, BudgetedLru& lru, ServeSimResult& r, const double* replayedMs) {
  auto inUse = [&](int id) {
    for (size_t p = 0; p < running.size(); ++p)
      if (static_cast<int>(p) != processor && running[p].slot == id && running[p].until > start) return true;
    return false;
  };
  // A load that went over the budget held it only while it ran (the executor
  // drops such units when their run ends): idle units go first, least recently
  // used first, until the budget holds again.
  if (!lru.fits(0)) r.evictions += static_cast<int>(lru.makeRoom(0, [&](int id) { return !inUse(id); }).size());
  if (lru.contains(slot)) {
    lru.touch(slot);
    return 0;
  }
  const auto& s = slots[static_cast<size_t>(slot)];
  const auto evicted = lru.makeRoom(s.bytes, [&](int id) { return !inUse(id); });
  r.evictions += static_cast<int>(evicted.size());
  double freeMs = 0;
  for (int e : evicted) freeMs += slots[static_cast<size_t>(e)].freeMs;
  if (!lru.fits(s.bytes)) ++r.overBudgetLoads;
  lru.insert(slot, s.bytes);
  ++r.loads;
  return replayedMs ? *replayedMs : freeMs + s.loadMs;
}

// Per slot whose after-idle samples carry their idle: (idle, ms) by idle, and
// a draw among those whose idle lay within a factor of two of a run's own.
class AfterIdleByIdle {
 public:
  explicit AfterIdleByIdle(const std::vector<ServeSimSlot>& slots) : byIdle_(slots.size()) {
    for (size_t k = 0; k < slots.size(); ++k)
      if (!slots[k].idleRunSamplesMs.empty() && slots[k].idleRunGapsMs.size() == slots[k].idleRunSamplesMs.size()) {
        for (size_t i = 0; i < slots[k].idleRunSamplesMs.size(); ++i)
          byIdle_[k].push_back({slots[k].idleRunGapsMs[i], slots[k].idleRunSamplesMs[i]});
        std::sort(byIdle_[k].begin(), byIdle_[k].end());
      }
  }
  bool has(int slot) const { return !byIdle_[static_cast<size_t>(slot)].empty(); }
  double draw(int slot, double idleMs, std::mt19937_64& rng) const {
    const auto& byIdle = byIdle_[static_cast<size_t>(slot)];
    auto at = [&](double g) {
      return std::lower_bound(byIdle.begin(), byIdle.end(), std::pair<double, double>{g, -INFINITY});
    };
    auto from = at(idleMs / 2), to = at(2 * idleMs);
    if (from == to) {  // none within a factor of two: the nearest (ties to the shorter idle)
      if (from == byIdle.end()) return std::prev(from)->second;
      if (from == byIdle.begin()) return from->second;
      return std::log(idleMs / std::prev(from)->first) <= std::log(from->first / idleMs) ? std::prev(from)->second
                                                                                          : from->second;
    }
    return (from + static_cast<std::ptrdiff_t>(rng() % static_cast<uint64_t>(to - from)))->second;
  }

 private:
  std::vector<std::vector<std::pair<double, double>>> byIdle_;
};
}  // namespace

ServeSimResult simulateServing(const std::vector<ServeSimSlot>& slots, const std::vector<ServeSimTask>& tasks,
                               const std::vector<ServeSimArrival>& arrivals, const ServeSimParams& params) {
  ServeSimResult r;
  BudgetedLru lru(params.memoryBudgetBytes);
  for (size_t s = 0; s < slots.size(); ++s)
    if (slots[s].preload) lru.addPinned(static_cast<int>(s), slots[s].bytes);
  std::mt19937_64 rng(params.seed);
  std::vector<double> busyUntil(static_cast<size_t>(params.processors), -1e300);  // never ran: idle
  auto replayed = [&](const std::map<std::pair<int, int>, double>* times, int query, int position) -> const double* {
    if (!times) return nullptr;
    auto it = times->find({query, position});
    return it == times->end() ? nullptr : &it->second;
  };
  const auto* replayRuns = params.replay ? &params.replay->runMs : nullptr;
  const auto* replayLoads = params.replay ? &params.replay->loadMs : nullptr;
  const AfterIdleByIdle afterIdle(slots);
  auto runMs = [&](int query, int position, int slot, int processor, double start, bool afterLoad) {
    if (const double* ms = replayed(replayRuns, query, position)) return *ms;
    const auto& s = slots[static_cast<size_t>(slot)];
    const double idleMs = start - busyUntil[static_cast<size_t>(processor)];
    const bool idle = idleMs >= params.idleThresholdMs;
    if (idle && !(afterLoad && !s.firstRunSamplesMs.empty()) && afterIdle.has(slot))
      return afterIdle.draw(slot, idleMs, rng);
    const auto& samples = afterLoad && !s.firstRunSamplesMs.empty()   ? s.firstRunSamplesMs
                          : idle && !s.idleRunSamplesMs.empty() ? s.idleRunSamplesMs
                                                                : s.runSamplesMs;
    if (samples.empty()) return s.runMs;
    return samples[static_cast<size_t>(rng() % samples.size())];
  };
  ProcessorQueues queues(params.processors, params.order == ServingOrder::EarliestDeadline);
  std::vector<Running> running(static_cast<size_t>(params.processors));
  auto processorOf = [&](int task, int position) {
    return slots[static_cast<size_t>(tasks[static_cast<size_t>(task)].slots[static_cast<size_t>(position)])].processor;
  };
  // Every run of a query carries its deadline (all equal first come first served).
  auto deadlineOf = [&](int query) {
    if (params.order != ServingOrder::EarliestDeadline) return 0.0;
    const auto& q = r.queries[static_cast<size_t>(query)];
    return q.arrivalMs + tasks[static_cast<size_t>(q.task)].sloMs;
  };
  r.queries.reserve(arrivals.size());
  for (size_t q = 0; q < arrivals.size(); ++q) {
    assert(q == 0 || arrivals[q - 1].timeMs <= arrivals[q].timeMs);
    const auto& a = arrivals[q];
    r.queries.push_back({a.task, a.timeMs, 0, 0, 0});
    const int id = static_cast<int>(q);
    double dispatchMs = params.dispatchMs;
    if (params.replay)
      if (auto it = params.replay->dispatchMs.find(id); it != params.replay->dispatchMs.end())
        dispatchMs = std::max(dispatchMs, it->second);
    queues.push(processorOf(a.task, 0),
                QueuedJob{a.timeMs + dispatchMs, static_cast<int64_t>(q), id, 0, deadlineOf(id)});
  }
  // A run of a slot that holds other processors, waiting for their holds' turns.
  struct PendingRun {
    int query = 0, position = 0, slot = 0;
    int64_t key = 0;
    double drawnMs = 0, startMs = 0;
    int waiting = 0;
  };
  std::vector<PendingRun> pending;
  auto advance = [&](int id, int64_t key, int position, int p, double end) {
    auto& query = r.queries[static_cast<size_t>(id)];
    const auto& task = tasks[static_cast<size_t>(query.task)];
    if (position + 1 < static_cast<int>(task.slots.size())) {
      const int to = processorOf(query.task, position + 1);
      const double ready = end + (to != p ? params.handoffMs : 0.0);
      queues.push(to, QueuedJob{ready, key, id, position + 1, deadlineOf(id)});
    } else {
      query.finishMs = end;
    }
  };
  auto runSlot = [&](int id, int64_t key, int position, int slot, int p, double start, double ms) {
    const double end = start + ms;
    queues.occupyUntil(p, end + params.turnaroundMs);
    running[static_cast<size_t>(p)] = {slot, end};
    busyUntil[static_cast<size_t>(p)] = end;
    if (params.recordSpans)
      r.spans.push_back({id, r.queries[static_cast<size_t>(id)].task, position, slot, p, false, start, end});
    advance(id, key, position, p, end);
  };
  while (auto next = queues.pop()) {
    const int p = next->processor;
    if (next->job.stage < 0) {  // a hold of pending run job.id takes its turn on p
      auto& run = pending[static_cast<size_t>(next->job.id)];
      queues.occupyUntil(p, INFINITY);
      run.startMs = std::max(run.startMs, next->start);
      if (--run.waiting > 0) continue;
      const auto& held = slots[static_cast<size_t>(run.slot)];
      for (int h : held.holds) {
        queues.occupyUntil(h, run.startMs + run.drawnMs);
        busyUntil[static_cast<size_t>(h)] = run.startMs + run.drawnMs;
        if (params.recordSpans)
          r.spans.push_back({run.query, r.queries[static_cast<size_t>(run.query)].task, run.position, run.slot, h,
                             false, run.startMs, run.startMs + run.drawnMs, true});
      }
      runSlot(run.query, run.key, run.position, run.slot, held.processor, run.startMs, run.drawnMs);
      continue;
    }
    auto& query = r.queries[static_cast<size_t>(next->job.id)];
    const auto& task = tasks[static_cast<size_t>(query.task)];
    const int position = next->job.stage;
    const int slot = task.slots[static_cast<size_t>(position)];
    if (position == 0) query.startMs = next->start;
    const int loadsBefore = r.loads;
    const double loadMs =
        acquire(slot, p, next->start, slots, running, lru, r, replayed(replayLoads, next->job.id, position));
    const double runStart = next->start + loadMs;
    const double drawnMs = runMs(next->job.id, position, slot, p, next->start, r.loads > loadsBefore);
    query.loadMs += loadMs;
    if (loadMs > 0 && params.recordSpans) r.spans.push_back({next->job.id, query.task, position, slot, p, true, next->start, runStart});
    const auto& holds = slots[static_cast<size_t>(slot)].holds;
    if (holds.empty()) {
      runSlot(next->job.id, next->job.key, position, slot, p, runStart, drawnMs);
      continue;
    }
    // The runner's worker waits (its processor blocked) until every held worker takes its hold.
    queues.occupyUntil(p, INFINITY);
    running[static_cast<size_t>(p)] = {slot, INFINITY};
    const int id = static_cast<int>(pending.size());
    pending.push_back({next->job.id, position, slot, next->job.key, drawnMs, runStart,
                       static_cast<int>(holds.size())});
    // A hold is posted to the held worker as a hand-over is (measured: a run's holds take 0.06 ms
    // where the calibrated hand-over is 0.05).
    for (int h : holds)
      queues.push(h, QueuedJob{runStart + params.handoffMs, next->job.key, id, -1, next->job.deadline});
  }
  std::vector<QueryOutcome> outcomes;
  for (const auto& q : r.queries) {
    const auto& t = tasks[static_cast<size_t>(q.task)];
    outcomes.push_back({q.arrivalMs, q.finishMs, true, t.sloMs, t.accuracySloMet});
  }
  r.summary = summarizeQueries(outcomes);
  r.peakResidentBytes = lru.peakBytes();
  return r;
}

std::vector<bool> residentByLoadCost(const std::vector<double>& qps, const std::vector<double>& loadMs,
                                     const std::vector<int64_t>& bytes, int64_t budgetBytes) {
  std::vector<size_t> order(qps.size());
  for (size_t s = 0; s < order.size(); ++s) order[s] = s;
  auto score = [&](size_t s) { return qps[s] * loadMs[s] / static_cast<double>(std::max<int64_t>(bytes[s], 1)); };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score(a) > score(b); });
  std::vector<bool> resident(qps.size(), false);
  // The largest unit left out once `s` is in too: it must still load beside the resident ones.
  auto largestLeftOut = [&](size_t s) {
    int64_t largest = 0;
    for (size_t u = 0; u < bytes.size(); ++u)
      if (u != s && !resident[u]) largest = std::max(largest, bytes[u]);
    return largest;
  };
  int64_t used = 0;
  for (size_t s : order)
    if (used + bytes[s] + largestLeftOut(s) <= budgetBytes) {
      resident[s] = true;
      used += bytes[s];
    }
  return resident;
}

std::vector<bool> residentInEveryPhase(const std::vector<std::map<int, double>>& phaseQps,
                                       const std::vector<double>& loadMs, const std::vector<int64_t>& bytes,
                                       int64_t budgetBytes) {
  std::vector<bool> everywhere(bytes.size(), !phaseQps.empty());
  for (const auto& qps : phaseQps) {
    std::vector<double> q, load;
    std::vector<int64_t> b;
    for (const auto& [unit, x] : qps) {
      q.push_back(x);
      load.push_back(loadMs[static_cast<size_t>(unit)]);
      b.push_back(bytes[static_cast<size_t>(unit)]);
    }
    const auto resident = residentByLoadCost(q, load, b, budgetBytes);
    std::vector<bool> keeps(bytes.size(), false);
    size_t i = 0;
    for (const auto& entry : qps) keeps[static_cast<size_t>(entry.first)] = resident[i++];
    for (size_t u = 0; u < bytes.size(); ++u) everywhere[u] = everywhere[u] && keeps[u];
  }
  return everywhere;
}

}  // namespace zp::sim
