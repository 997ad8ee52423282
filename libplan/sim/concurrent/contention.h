// Shared-memory contention model, PCCS-style (Xu et al., MICRO'21, as used by
// HaX-CoNN §3.3): the slowdown of a group on accelerator `a` is a function of
// its own requested memory throughput and of the external throughput requested
// by whatever runs concurrently on the other accelerators. Per accelerator the
// function is piecewise linear on a grid (bilinear between grid points,
// clamped outside), read from a per-SoC CSV (format: schemas/README.md;
// reader: libplan/artifacts/contention_csv.h).
#pragma once
#include <string>
#include <vector>

#include "libplan/util/error.h"

namespace zp::sim {

class ContentionModel {
 public:
  struct Surface {
    std::vector<double> own;       // ascending
    std::vector<double> external;  // ascending
    std::vector<double> slowdown;  // own.size() x external.size(), row-major, >= 1
  };

  // No contention at all: every slowdown is 1.
  static ContentionModel none(int numAccelerators);
  // One surface per accelerator, in the problem's accelerator order (the
  // contention CSV's reader, libplan/artifacts/contention_csv.h, checks them).
  static ContentionModel fromSurfaces(std::vector<Surface> surfaces);

  // Slowdown factor (>= 1) of a group on `acc` requesting `own` while the
  // other accelerators together request `external`. Only consulted while some
  // group runs on another accelerator: a group running alone takes its
  // standalone (profiled) time. Quantized to 1e-6.
  double slowdown(int acc, double own, double external) const;
  bool isNone() const { return surfaces_.empty(); }
  // Every slowdown scaled towards 1: s' = 1 + f (s - 1). f = 0 removes contention.
  ContentionModel scaled(double f) const;
  const std::vector<Surface>& surfaces() const { return surfaces_; }

 private:
  double slowdownAt(int acc, double own, double external) const;
  int numAcc_ = 0;
  std::vector<Surface> surfaces_;  // empty: no contention
};

}  // namespace zp::sim
