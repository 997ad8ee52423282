// What one measured cold start of a model took, node by node: the spans plan-run
// --cold reports (its `cold_plan_run` section) for the read, the transform and the
// execution of each node, with the kernel and weights the cold plan gave it. Read by
// the cold-start pass to calibrate its cost model against fresh-process runs.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace zp::profile {

// [start, end) in ms since the load began.
struct Span {
  double startMs = 0, endMs = 0;
  double ms() const { return endMs - startMs; }
  bool operator==(const Span&) const = default;
};

struct MeasuredColdNode {
  int step = 0;
  std::string node;
  std::string kernel;   // empty: no heavy weights
  std::string gemm;     // "" when the kernel uses no GEMM library
  std::string weights;  // "none" | "cache" | "transform"
  std::optional<Span> read, transform;  // absent: the node had none
  Span execute;
  bool operator==(const MeasuredColdNode&) const = default;
};

// A GEMM library's start-up for the cold run (its first product in the process).
struct MeasuredStartup {
  std::string library;  // "blis" | "onednn"
  Span span;
  bool operator==(const MeasuredStartup&) const = default;
};

struct MeasuredColdRun {
  std::string configuration;  // the cold plan's knob combination
  int cores = 1;
  double runEndMs = 0;  // end of the cold run
  std::vector<MeasuredColdNode> nodes;  // in execution order
  std::vector<MeasuredStartup> startups;  // the cold run's, done ones only
  double setupMs = 0;  // load before the first read: map the cache, parse the skeleton, build the ops; 0: not reported
  bool operator==(const MeasuredColdRun&) const = default;
};

}  // namespace zp::profile
