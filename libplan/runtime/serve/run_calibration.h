// What the serving predictor needs to know about this host, measured on the
// processors' pinned workers. A subgraph profiled alone runs back to back with
// its weights hot in the caches; served, a run often starts after its
// processor idled between queries (caches and predictors gone cold, the core
// asleep), and a query waits for an idle worker's timed wake-up before its
// first run and a wake-up at each hand-over to another processor. So each
// slot is timed twice, back to back and after idle gaps of several lengths in
// turn (each sample kept with its idle), each processor's worker running its
// slots round-robin while the other processors run theirs (shared caches and
// memory, as in serving), set by set when sets of slots are served at
// different times; and the wake-up delays are timed the way the
// executor dispatches and hands over, and its turnaround between queued jobs
// as it serves a burst of the setup's tasks. A slot that holds other processors
// (ServeSlot::holds) has them to itself when served, so it is timed once the
// others are done, one such processor at a time. Loads, when asked, are
// timed among the back-to-back rounds, as serving loads a unit between runs.
#pragma once
#include <functional>
#include <cstdint>
#include <vector>

#include "libplan/runtime/serve/executor.h"

namespace zp::runtime::serve {

struct RunCalibrationParams {
  int warmup = 2;          // untimed rounds before timing
  int rounds = 15;         // timed runs per slot, per kind (back to back, after idle)
  // The worker sleeps this long before an after-idle run, each gap in turn: a
  // run's slowdown grows with the idle before it (on a 2-core Xeon 1.0x the
  // back-to-back median after 2-5 ms, 1.1-1.4x after 20), and served idles are
  // mostly short (at tens of queries a second a task, 2-10 ms), so the
  // simulator draws by the idle (calibrated at 20 ms alone, the realistic
  // zoo's violations came out 3.6 points above the measurement on average;
  // drawn by the idle, 0.5).
  std::vector<double> idleGapsMs = {2, 4, 8, 16, 32};
  // The after-idle rounds start this many gaps into idleGapsMs. A slot's gap
  // steps one along per round, so a calibration in pieces of fewer rounds than
  // gaps goes on where the last piece stopped; else each slot met the same
  // few gaps in every piece (the third slot of a set only 8-32 ms).
  int idleGapStart = 0;
  // Sets of slots served at the same time (one SLO configuration's, when
  // configurations are served in turn). Each set is timed on its own, a
  // processor's slots of it round-robin among themselves, every processor moving
  // to the next set together; a slot in several sets is timed in each, and the
  // slots in none form a last set. Served, a run follows runs of its own set,
  // whose weights are what shares the caches with it: timed round-robin among
  // all eight of a plan's cpu slots, the realistic zoo's ran 5-13% slower back
  // to back than served (mobilenet/0 1.13 against 1.00 ms). Empty: one set.
  std::vector<std::vector<int>> servedTogether = {};
  int wakeSamples = 20;    // timed dispatches and hand-overs
  uint64_t seed = 0;       // random inputs of each slot
  // Each back-to-back round (warm-up included, timed once timed) also loads
  // every slot afresh on its worker, while the other processors run theirs: as
  // serving loads a unit, its caches taken by other runs (loads timed alone,
  // one after another, measured a third faster than served). Before each load
  // the slot's own copy is freed, timed as its free (serving frees the units a
  // load evicts before loading, and what that costs depends on which units they
  // are), so no other copy of it is alive as it loads, as when serving loads
  // it (with a second copy alive, the deployment zoo's small heads loaded
  // about a fifth faster than without). The new copy then runs once,
  // timed as the slot's first run: served, the run right after a load finds
  // the unit's weights and code out of the caches (and a unit loaded by its
  // cold section runs its pipelined cold run then).
  bool timeLoads = false;
  // Queries of every task served at once after the rounds (0: none), so each
  // worker takes job after job: the executor's turnaround between queued jobs
  // (workerTurnaroundsMs), which the rounds, run outside the executor, lack. A
  // setup without tasks has each slot served as a task of its own.
  int turnaroundQueriesPerTask = 4;
  // Called (on the processors' workers, at once) after each of the
  // slots x (warmup + 2 rounds) runs: how a caller shows progress.
  std::function<void()> afterRun = {};
};

struct RunCalibration {
  std::vector<std::vector<double>> hotMs;   // per slot: runs back to back, in the order they ran
  std::vector<std::vector<double>> idleMs;  // per slot: runs after their worker slept
  std::vector<std::vector<double>> idleGapsMs;  // per slot, beside idleMs: how long the worker was idle before each
  double dispatchMs = 0;  // median: an arrival's timer fires -> its first position starts on an idle worker
  double handoffMs = 0;   // median: one worker posts -> another, idle, worker runs it (0: one processor)
  std::vector<std::vector<double>> loadMs;  // per slot: its timed loads (empty unless timeLoads)
  std::vector<std::vector<double>> freeMs;  // per slot: freeing a loaded copy of it (empty unless timeLoads)
  std::vector<std::vector<double>> firstRunMs;  // per slot: a loaded copy's first run (empty unless timeLoads)
  // Median: a worker's turnaround from one job to the next queued one (0: no
  // burst served, or no job waited).
  double turnaroundMs = 0;
};

// Loads every slot of `setup` (whatever the memory budget: calibration holds all
// at once) on its processor's worker and times it as described above.
Expected<RunCalibration> calibrateServing(const ServeSetup& setup, SubgraphLoader& loader,
                                          const RunCalibrationParams& params = {});

}  // namespace zp::runtime::serve
