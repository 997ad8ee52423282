// Measuring on the host with the runtime: subgraph latency per execution
// configuration (kernel policy x threads), the fixed cost of one run and the
// cost of handing a boundary tensor over. Per-node profiles: node_profile.h.
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

}  // namespace zp::measure
