// The composed plan's operator-placed candidates (SparOA within the stitch
// flow): every task's variant that zoo-profile's per-node profile measured,
// whole, its operators placed across the space's processors (drivers/
// opplace_flow, passes/opplace) with the hand-off costs zoo-profile measured.
// A variant whose placement does not beat its best single processor by the
// minimum gain is no candidate: the space already runs it whole on one.
#pragma once
#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include "drivers/opplace_flow/place_model.h"
#include "libplan/util/error.h"
#include "libplan/zoo/zoo.h"
#include "passes/opplace/solve.h"
#include "passes/select/stitch_space.h"

namespace zp::drivers {

struct PlacedModelsParams {
  // minMixGain, minMixGainMs: what a mix must gain over one processor to be a candidate; a
  // node limit keeps the placements (and so the plan) the same on every rerun.
  opplace::SolveParams solve = {10, 2'000'000, 0.05, 0.1};
};

// What placing a profile's variants needs: node_profile.csv's rows (checked
// against report.json's hash, which joins the space's inputs), the hand-over
// costs latency_model.json measured, the zoo (its name keys the rows) and the
// models the rows measured. None (nullopt) when the profile has no
// node_profile.csv or the space fewer than two processors.
struct MeasuredPlacing {
  opplace_flow::PlaceInputs inputs;  // modelKey left to the caller
  zoo::Zoo zoo;
  std::filesystem::path zooPath;
  std::set<std::string> profiledModels;
};
Expected<std::optional<MeasuredPlacing>> readMeasuredPlacing(select::StitchSpace& space);

// Task `task`'s variant (its combination at every position: `original`) run
// whole under `placement`, as a candidate: the placement's processors in the
// space's order (the first dispatches a run, the others are held), its resident
// size its subgraphs' on that first processor, as profiled (weights and their
// transformed copies; the plan records it for plan-run to count the same).
select::PlacedModel placedCandidate(const select::StitchSpace& space, size_t task, const zoo::VariantInfo& variant,
                                    uint64_t original, plan::OpPlacement placement, select::PlacedBy by);

// Adds the candidates to space.placed (tasks in order, variants in stitch.json's
// order). Returns a line for the terminal. `measured.inputs.modelKey` is set per
// variant placed.
Expected<std::string> addPlacedModels(select::StitchSpace& space, MeasuredPlacing& measured,
                                      const PlacedModelsParams& params);

}  // namespace zp::drivers
