// Moving a tensor from one processor to another (a transition between
// stitched positions, a hand-off between placed operators): what it costs.
#pragma once

namespace zp::estimate {

struct TransitionCost {
  double fixedMs = 0;    // per transfer
  double msPerByte = 0;  // per byte moved
  double ms(double bytes) const { return fixedMs + msPerByte * bytes; }
  bool operator==(const TransitionCost&) const = default;
};

}  // namespace zp::estimate
