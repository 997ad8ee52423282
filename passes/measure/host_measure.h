// Measuring on the host with the runtime: subgraph latency per execution
// configuration (kernel policy x threads), the fixed cost of one run, the cost
// of handing a boundary tensor over, and per-node features (FLOPs, weight and
// activation sparsity, computational intensity — SparOA §2.1, §3.1).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/runtime/session.h"
#include "libplan/util/error.h"

namespace zp::measure {

// A host processor: how the runtime runs on it.
struct HostConfig {
  std::string policy = "default";
  int threads = 1;
  runtime::GemmLibrary gemm = runtime::GemmLibrary::OneDnn;
  std::vector<int> cores;  // measured pinned to these (empty: wherever the process runs)
  std::string label() const { return policy + "@" + std::to_string(threads); }
  auto operator<=>(const HostConfig&) const = default;
};

struct MeasureParams {
  int repeat = 20;
  int warmup = 3;
};

struct LatencyMeasurement {
  double medianMs = 0, p90Ms = 0;
  int runs = 0;
  int64_t memoryBytes = 0;  // activation arena + weights + scratch
};

runtime::SessionOptions sessionOptions(const HostConfig& config);

// Warm latency of `session` on `inputs`: `warmup` untimed runs, then `repeat` timed ones.
Expected<LatencyMeasurement> measureLatency(runtime::Session& session, const runtime::TensorMap& inputs,
                                            const MeasureParams& params);

// The runtime's fixed cost of one run under `config`: a one-node model on a
// one-element tensor, measured like any subgraph.
Expected<double> measureRunOverhead(const HostConfig& config, const MeasureParams& params);

// Median time to copy `bytes` between two buffers: a boundary tensor handed
// from one processor to another through shared memory.
double measureCopyMs(int64_t bytes, const MeasureParams& params);

struct NodeFeatures {
  std::string node, opType, kernel;
  double flops = 0;
  double weightSparsity = 0;
  double activationSparsity = 0;  // fraction of zeros in the node's output over the calibration inputs
  double intensity = 0;           // FLOPs per byte moved (inputs + outputs + weights)
  double ms = 0;                  // median per-node time over the calibration runs
};

// Runs `session` on each input of `calibration`, collecting per executed node
// its output's zero fraction and time; FLOPs and bytes come from the subgraph's
// ONNX model (`model`). Returns the outputs of every run (the next position's inputs).
Expected<std::vector<NodeFeatures>> nodeFeatures(runtime::Session& session, const onnx::ModelProto& model,
                                                 const std::vector<runtime::TensorMap>& calibration,
                                                 std::vector<runtime::TensorMap>* outputs);

}  // namespace zp::measure
