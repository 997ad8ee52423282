// What serving on this host adds to the profile's run times, measured for
// plan-solve's serving objective (passes/select/serving_objective.h) the way
// plan-run --serve calibrates its prediction (runtime/serve/run_calibration.h):
// every candidate unit (each task's variants at every position, each
// weight-shared group's unit, each placed model holding its other processors)
// on every processor it was profiled on, loaded three times, then each
// processor's worker running its units round-robin while the others run theirs,
// timed back to back and after idle; and the dispatch and hand-over wake-ups.
// Subgraphs and groups load from weight caches written for the calibration, as
// a bundle's units load from plan-emit's; with a cold profile, each subgraph is
// also loaded by a cold section planned for it (NNV12), timed the same way.
#pragma once
#include <cstdint>

#include "libplan/profile/cold_profile.h"
#include "libplan/util/error.h"
#include "passes/coldstart/coldstart.h"
#include "passes/select/serving_objective.h"

namespace zp::drivers {

struct ColdSectionCalibration {
  const profile::ColdProfile* profile = nullptr;  // none: no cold sections calibrated
  coldstart::ColdStartParams params;              // of every cold section planned
};

// Nothing (no calibration: runs as profiled) when a processor is not this
// host's (an imported profile) or rounds is 0.
Expected<select::ServingCalibration> measureServingCalibration(const select::StitchSpace& space, int rounds,
                                                               uint64_t seed, const ColdSectionCalibration& cold = {});

}  // namespace zp::drivers
