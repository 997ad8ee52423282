// Layer grouping (HaX-CoNN §3.1-3.2): the valid transition points of an ONNX
// graph are the partition pass's cut points (one crossing tensor, never inside
// a fusible chain, Q/DQ kept with their op); the nodes between two consecutive
// cuts form a minimal group. Minimal groups are merged left to right until a
// group is worth a transition: its fastest time is at least
// `minTimeToTransition` times the cheapest transition at the cut that ends it.
// Each group gets a row per accelerator: execution time (sum of its nodes'
// profile rows; a node without a row on an accelerator keeps the whole group
// off it, §3.1 point 3), transition-out / -in cost at its end / start, and
// requested memory throughput.
#pragma once
#include <string>
#include <vector>

#include "libplan/graph/analysis.h"
#include "libplan/profile/profile_db.h"
#include "libplan/sim/concurrent/problem.h"
#include "libplan/util/error.h"

namespace zp::grouping {

struct GroupingParams {
  std::vector<std::string> accelerators;  // processor names as in the profile rows
  std::string task, variant;              // which node rows of the profile to use
  double minTimeToTransition = 2.0;
  int maxGroups = 0;                      // 0: no limit; else merge the cheapest neighbours
  // Transition model (no per-cut transition rows exist in the profile CSV):
  // out = overhead + bytes / bandwidth on the source, in = the same on the target.
  double transitionOverheadMs = 0.01;
  double transitionBandwidthGBs = 25.0;
  // Requested memory throughput of a node = bytes it reads and writes (activations +
  // weights) / its time, in % of this peak (136.5 GB/s: Xavier AGX, HaX-CoNN Table 4).
  double peakBandwidthGBs = 136.5;
  // The rows are the runtime's own per-node profile (zoo-profile's node_profile.csv):
  // a node without a row was fused into a neighbour or folded, and costs nothing
  // of its own (else it is an error: the profile lacks it).
  bool absentNodesFused = false;
};

struct Grouping {
  std::vector<sim::GroupCost> groups;
  std::vector<std::string> boundaryTensors;  // tensor crossing the cut after group i (size groups-1)
  std::vector<std::vector<std::string>> nodes;  // node names of each group
};

// `label` names the model in errors.
Expected<Grouping> groupLayers(const graph::GraphView& view, const profile::ProfileDb& db,
                               const GroupingParams& params, const std::string& label);

}  // namespace zp::grouping
