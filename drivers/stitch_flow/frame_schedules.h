// The composed plan's layer-group candidates (HaX-CoNN within the stitch flow):
// each frame of the workload is scheduled as HaX-CoNN schedules concurrent DNNs
// (drivers/concurrent_flow, passes/schedule): its DNNs as given (each task's
// reference variant), cut into layer groups from zoo-profile's per-node profile,
// the groups mapped to the space's processors under the frame's dependencies for
// the least frame latency. A DNN the schedule spreads over several processors
// becomes a placed candidate (select::PlacedBy::HaxConn): the variant whole, its
// nodes where their layer groups run. One the schedule keeps on one processor
// adds nothing: the space runs it whole there already.
#pragma once
#include <string>
#include <vector>

#include "libplan/plan/workload.h"
#include "libplan/util/error.h"
#include "drivers/stitch_flow/placed_models.h"
#include "passes/schedule/concurrent.h"
#include "passes/select/stitch_space.h"

namespace zp::drivers {

struct FrameSchedulesParams {
  schedule::ConcurrentParams solve;  // the frame's latency is the objective; a time limit and seed
  // Skip a variant that already has an operator-placed candidate (the composed
  // search: SparOA's per-operator optimum of the DNN alone, one unit per model).
  bool skipPlacedVariants = true;
};

// Adds the candidates to space.placed (frames in order, DNNs in the frame's
// order). Returns lines for the terminal: per frame, where its schedule runs
// each DNN. `measured.inputs.modelKey` is set per DNN placed.
Expected<std::string> addFrameSchedules(select::StitchSpace& space, MeasuredPlacing& measured,
                                        const std::vector<plan::FrameSpec>& frames, const FrameSchedulesParams& params);

}  // namespace zp::drivers
