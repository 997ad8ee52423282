// Measuring on the host with the runtime: subgraph latency per execution
// configuration (kernel policy x threads), the fixed cost of one run and the
// cost of handing a boundary tensor over. Per-node profiles: node_profile.h.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/runtime/session.h"
#include "libplan/util/error.h"
#include "libplan/zoo/processor.h"

namespace zp::measure {

struct MeasureParams {
  int repeat = 20;
  int warmup = 3;
};

struct LatencyMeasurement {
  double medianMs = 0, p90Ms = 0;
  int runs = 0;
  int64_t memoryBytes = 0;  // activation arena + weights + scratch
};

// The runtime on `processor` (its engine fields), without re-checking the model.
runtime::SessionOptions sessionOptions(const Processor& processor);

// Warm latency of `session` on `inputs`: `warmup` untimed runs, then `repeat` timed ones.
Expected<LatencyMeasurement> measureLatency(runtime::Session& session, const runtime::TensorMap& inputs,
                                            const MeasureParams& params);

// The runtime's fixed cost of one run under `config`: a one-node model on a
// one-element tensor, measured like any subgraph.
Expected<double> measureRunOverhead(const Processor& config, const MeasureParams& params);

// Median time to copy `bytes` between two buffers: a boundary tensor handed
// from one processor to another through shared memory.
double measureCopyMs(int64_t bytes, const MeasureParams& params);

}  // namespace zp::measure
