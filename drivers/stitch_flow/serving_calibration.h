// What serving on this host adds to the profile's run times, measured for
// plan-solve's serving objective (passes/select/serving_objective.h) the way
// plan-run --serve calibrates its prediction (runtime/serve/run_calibration.h):
// every candidate unit (each task's variants at every position, each
// weight-shared group's unit, each placed model holding its other processors)
// on every processor it was profiled on, loaded three times, then each
// processor's worker running its units round-robin while the others run theirs,
// timed back to back and after idle; and the dispatch and hand-over wake-ups.
#pragma once
#include <cstdint>

#include "libplan/util/error.h"
#include "passes/select/serving_objective.h"

namespace zp::drivers {

// Nothing (no calibration: runs as profiled) when a processor is not this
// host's (an imported profile) or rounds is 0.
Expected<select::ServingCalibration> measureServingCalibration(const select::StitchSpace& space, int rounds,
                                                               uint64_t seed);

}  // namespace zp::drivers
