// Seeded random stitch spaces for the selection tests: T tasks of S positions,
// V variants, P processors, with unprofiled subgraphs, invalid combinations,
// measured and predicted accuracies, and (with `ties`) values from a few
// small numbers, so that many combinations tie exactly and tie-breaking is
// exercised.
#pragma once
#include <random>

#include "passes/select/select.h"

namespace zp::select::testing {

struct Shape {
  int T = 1, S = 2, V = 2, P = 2;
};

struct SpaceOptions {
  bool ties = false;        // values from a few small numbers
  bool meanAccuracy = false;  // MeanSourceAccuracy instead of a table
  double unprofiled = 0.1;  // share of (position, variant, processor) without a latency
  double invalid = 0.15;    // share of stitched combinations that do not chain (table only)
};

StitchSpace randomSpace(std::mt19937_64& rng, const Shape& shape, const SpaceOptions& options);

// An SLO per task that some but not all combinations meet (mostly).
plan::SloConfiguration randomSlo(std::mt19937_64& rng, const StitchSpace& space, const std::string& id);

}  // namespace zp::select::testing
