// The state of a session that follows a cold schedule (Session::ColdExecution,
// session_cold.cpp): the ops its transform tasks build, the tasks each step
// waits for, the warm ops later runs switch to, and the pipeline running the tasks.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "libplan/runtime/cold_pipeline.h"
#include "libplan/runtime/cold_schedule.h"
#include "libplan/runtime/kernel_policy.h"
#include "libplan/runtime/ops/op.h"
#include "libplan/util/stats.h"

namespace zp::runtime {

struct ColdState {
  ColdSchedule schedule;
  std::map<std::string, size_t> stepOf;  // node -> index in schedule.steps
  KernelPolicy coldPolicy, warmPolicy;   // every heavy node's cold / warm kernel
  SteadyClock::time_point t0;            // the load began
  double setupMs = 0;

  // Per session step (filled while building, tasks made by makeTasks).
  std::vector<std::optional<BuildContext>> deferred;  // built by its transform task
  std::vector<std::optional<BuildContext>> warm;      // the warm kernel's op, built by a warm task
  std::vector<std::unique_ptr<Op>> builtOps, warmOps;
  std::vector<std::vector<int>> stepRefs;  // indices into Impl::modelReads among the step's inputs
  std::vector<std::vector<int>> needs;     // tasks the cold run waits for before the step
  std::vector<int> warmOpTask;             // the step's warm-transform task (-1: none)
  std::vector<std::optional<GemmLibrary>> warmGemm;
  std::vector<int> warmGemmTask;           // the start-up task of its warm library (-1: none needed)
  std::vector<char> switched;
  std::vector<std::string> corrupt;        // per step: why its weights failed their checks
  std::vector<std::vector<std::string>> warnings, warmWarnings;  // per step, from its (warm) tasks

  std::mutex requestMu;      // the reads asked of the storage ahead (requestColdReadsAhead)
  size_t requestedUpTo = 0;  // steps before it have been asked for

  std::vector<std::pair<double, double>> executeMs;
  double runStartMs = 0, runEndMs = 0;
  bool ran = false;
  int warmSwitched = 0;
  std::unique_ptr<ColdPipeline> pipeline;  // last: stopped before the rest goes
};

}  // namespace zp::runtime
