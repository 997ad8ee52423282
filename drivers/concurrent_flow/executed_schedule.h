// Concurrent schedules executed on the host's processors. A schedule of model
// DNNs (each a chain of layer groups, passes/grouping) runs as one placed
// program (runtime/placed_program.h): the DNNs' graphs joined into one whose
// nodes are ordered by the simulated start of their layer groups, every node
// on its group's accelerator. Each processor then runs its groups in the order
// the simulator starts them there (segments whole, in order of readiness), a
// group waits for its predecessor on the other processor, a DNN that follows
// others (a pipeline) waits for their ends, and the hand-offs are the real ones
// (tensors in shared memory): the measured makespan is the schedule's as the
// simulator defines it, without the simulator's cost model.
#pragma once
#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <vector>

#include "libplan/runtime/measure.h"
#include "libplan/runtime/serve/processor.h"
#include "libplan/sim/concurrent/simulator.h"
#include "libplan/util/error.h"
#include "libplan/util/json.h"

namespace zp::drivers {

struct ScheduledModel {
  std::string name;  // the DNN's name in the problem, and the prefix of its names in the joined graph
  onnx::ModelProto model;
  std::vector<std::vector<std::string>> groupNodes;  // node names of each layer group, in group order
};

// Where and when each layer group runs: the accelerator the schedule assigns
// it and its start in the schedule's timeline (the simulator's, or a plan's
// record of it), which orders the steps; and which DNNs each DNN follows.
struct GroupSlot {
  int accelerator = 0;
  double startMs = 0;
};
struct ExecutionOrder {
  std::vector<std::vector<GroupSlot>> groups;  // per DNN, per layer group
  std::vector<std::vector<int>> deps;          // per DNN: the DNNs whose end it waits for (earlier ones)
};
ExecutionOrder simulatedOrder(const sim::Problem& problem, const sim::Schedule& schedule);

struct JoinedSchedule {
  onnx::ModelProto model;                      // every name prefixed "<dnn>/"
  std::map<std::string, int> nodeAccelerator;  // joined node name -> accelerator index
};

// A node in no group (a constant) goes with the first group that reads it.
// Errors: models with different opsets, unnamed nodes, subgraph attributes, a
// group naming a node the model lacks.
Expected<JoinedSchedule> joinScheduledModels(const std::vector<ScheduledModel>& models, const ExecutionOrder& order);

struct ExecutedSchedule {
  runtime::WarmStats wall;  // makespan of one round: every independent DNN's inputs posted at once
  // Medians over the timed rounds, per DNN: its end minus its release (0, or
  // the end of the last DNN it follows), and Eq. 10's throughput of a round.
  std::vector<double> dnnLatencyMs;
  double throughput = 0;
  int handoffs = 0;         // steps reading another processor's output
  runtime::TensorMap inputs, outputs;  // of the joined graph ("<dnn>/<name>"): the random inputs, the last run's outputs
  Json trace;               // Perfetto trace of one profiled round, a track per processor
};

struct ExecuteParams {
  int warmup = 2, repeat = 10;  // untimed, then timed rounds
  uint64_t seed = 0;            // of the random inputs
};

// `processors[a]`: the host processor of accelerator a.
Expected<ExecutedSchedule> executeSchedule(const std::vector<ScheduledModel>& models, const ExecutionOrder& order,
                                           const std::vector<Processor>& processors,
                                           const ExecuteParams& params);

}  // namespace zp::drivers
