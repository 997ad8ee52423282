// plan-run BUNDLE_DIR for a bundle of a concurrent plan (HaX-CoNN): the plan's
// schedule of model DNNs, and each baseline schedule it records, run on the host
// processors its workload named (concurrent_flow/executed_schedule.h): every
// DNN's layer groups on their accelerator's pinned worker in the order of the
// schedule's timeline, hand-offs in shared memory, a pipeline's DNN after the
// ones it follows. The schedules take turns round after round (a shared
// machine's noise falls on all alike); for each, the measured makespan, per-DNN
// latency and throughput (Eq. 10) are reported beside the simulated ones, and
// every DNN's outputs are checked against the DNN run alone.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/plan/plan.h"
#include "libplan/util/error.h"
#include "libplan/util/json.h"

namespace zp::drivers {

struct ConcurrentRunParams {
  std::filesystem::path bundle;
  int repeat = 10;  // timed runs per schedule and round (after `warmup` untimed ones)
  int warmup = 2;
  int rounds = 3;   // each schedule runs once per round; medians over rounds
  uint64_t seed = 0;  // of the random inputs
  double tolerance = 1e-5;  // outputs: max |run - alone| <= tolerance * max(1, max |alone|)
  std::vector<std::string> schedules;  // "zooplan" and baseline names to run; empty: all
  std::filesystem::path trace;         // Perfetto trace of one profiled run of the plan's schedule (empty: none)
};

struct ConcurrentRunReport {
  std::string workload, objective, source;  // source: the plan's ("zooplan" or "baseline:<name>")
  std::vector<std::string> processors;      // "<accelerator>: cores ..., <policy>, <gemm>"
  std::vector<std::string> dnns;
  struct Row {
    std::string schedule;  // "zooplan" (the plan's schedule) or a baseline's name
    double predictedMakespanMs = 0, predictedThroughput = 0;
    std::vector<double> predictedDnnMs;  // end - release, per DNN
    double measuredMakespanMs = 0, measuredP90Ms = 0, measuredThroughput = 0;
    std::vector<double> measuredDnnMs;
    std::vector<double> roundMakespanMs;  // the median of each round
    int handoffs = 0;
    double maxAbsDiff = 0, refScale = 0;  // every DNN's outputs against the DNN run alone on the first processor
    bool match = false;
  };
  std::vector<Row> rows;  // the plan's schedule first, then the baselines in the plan's order
  int repeat = 0, rounds = 0;
  std::string bestMeasured() const;  // by the plan's objective
  bool ok() const;                   // every schedule's outputs matched
  Json json() const;
  std::string table() const;
};

class Bundle;
// A bundle whose plan has a concurrent section; its DNNs' units are read from it.
Expected<ConcurrentRunReport> runConcurrentBundle(const ConcurrentRunParams& params, Bundle& bundle);

}  // namespace zp::drivers
