// What handing a tensor from one processor to another costs in a placed run
// (runtime/serve/placed_executor.h): a chain of Relus on one tensor, every step
// on the other processor from the one before (each edge a hand-off), against the
// same chain on one processor, per edge, at several tensor sizes; then the
// least-squares line fixed + per-byte through those points (both coefficients
// kept non-negative). The operator-placement cost model charges this per edge
// between processors (passes/opplace/problem.h).
#pragma once
#include <cstdint>
#include <vector>

#include "libplan/runtime/serve/processor.h"
#include "libplan/util/error.h"
#include "passes/measure/host_measure.h"

namespace zp::measure {

struct HandOffPoint {
  int64_t bytes = 0;
  double alternatingMs = 0, sameMs = 0;  // median chain latencies
  double perEdgeMs = 0;                  // (alternating - same) / edges, at least 0
};

struct HandOffFit {
  double fixedMs = 0, msPerByte = 0;
  std::vector<HandOffPoint> points;
};

struct HandOffParams {
  std::vector<int64_t> bytes = {4096, 65536, 524288, 2097152};
  int chain = 16;  // Relus in the chain (chain - 1 edges)
  MeasureParams measure{30, 5};
};

// `a` and `b`: the two processors (their cores must be on this machine).
Expected<HandOffFit> measurePlacedHandOff(const Processor& a,
                                          const Processor& b, const HandOffParams& params);

// The least-squares line through (bytes, ms) with both coefficients >= 0.
void fitHandOff(HandOffFit& fit);

}  // namespace zp::measure
