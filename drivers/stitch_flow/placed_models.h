// The composed plan's operator-placed candidates (SparOA within the stitch
// flow): every task's variant that zoo-profile's per-node profile measured,
// whole, its operators placed across the space's processors (drivers/
// opplace_flow, passes/opplace) with the hand-off costs zoo-profile measured.
// A variant whose placement does not beat its best single processor by the
// minimum gain is no candidate: the space already runs it whole on one.
#pragma once
#include <string>

#include "libplan/util/error.h"
#include "passes/opplace/solve.h"
#include "passes/select/stitch_space.h"

namespace zp::drivers {

struct PlacedModelsParams {
  // minMixGain, minMixGainMs: what a mix must gain over one processor to be a candidate; a
  // node limit keeps the placements (and so the plan) the same on every rerun.
  opplace::SolveParams solve = {10, 2'000'000, 0.05, 0.1};
};

// Adds the candidates to space.placed (tasks in order, variants in stitch.json's
// order) and node_profile.csv's hash to its inputs; a profile without a
// node_profile.csv adds none. Returns a line for the terminal.
Expected<std::string> addPlacedModels(select::StitchSpace& space, const PlacedModelsParams& params);

}  // namespace zp::drivers
