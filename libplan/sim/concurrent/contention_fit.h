// A contention surface (contention.h) from measurements: each point is a probe
// with a known own memory demand run beside a co-runner with a known external
// demand, and the slowdown measured against the probe alone. The surface's
// grid is the measured own and external demands (plus 0, where nothing slows
// down: a probe alone, or one that requests no memory); each grid value is the
// mean slowdown measured there, at least 1. Leave-one-out residuals tell how
// well the surface predicts a probe it was not built from.
#pragma once
#include <vector>

#include "libplan/sim/concurrent/contention.h"

namespace zp::sim {

struct ContentionPoint {
  double own = 0, external = 0;  // requested memory throughput, % of the host's peak
  double slowdown = 1;           // time beside the co-runner / time alone
};

// Points whose own demands lie within `merge` of each other share a grid row
// (their demand and slowdown averaged); likewise external demands and columns.
// Every (own, external) cell of the grid must be measured. Errors: a missing
// cell, a non-finite value.
Expected<ContentionModel::Surface> fitContentionSurface(const std::vector<ContentionPoint>& points, double merge = 2.0);

struct ContentionResidual {
  ContentionPoint point;
  double predicted = 1;  // by the surface fitted without this point's own-demand row
};
// For each own-demand row strictly inside the grid, its points predicted by the
// surface fitted without that row (bilinear between the rows around it).
Expected<std::vector<ContentionResidual>> leaveOneRowOut(const std::vector<ContentionPoint>& points,
                                                         double merge = 2.0);

}  // namespace zp::sim
