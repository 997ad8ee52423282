// Calibrating the cold-start cost model against measured cold runs. The cold
// profile measures each piece alone, in a process that has run before: a node's
// first execution, a transform on an idle core, a sequential read. A cold start in
// a fresh process pays more for each (page faults and cold caches in the first
// executions; transforms sharing a core with the reader, which faults the weights
// in and checks them). Given runs of a model's cold plan (plan-run --cold --json in
// fresh processes), the calibration is, summed over the runs' nodes, measured over
// profiled: execute time against the profile's first execution, transform time
// against the profile's transform, bytes read against read time.
#pragma once
#include <string>
#include <vector>

#include "libplan/profile/cold_profile.h"
#include "libplan/profile/cold_run.h"
#include "libplan/util/error.h"

namespace zp::coldstart {

struct Calibration {
  int runs = 0;                // measured runs it comes from; 0: none (the identity)
  double readMBps = 0;         // bytes read over read time; 0: the profile's storage bandwidth
  double executeFactor = 1;    // measured execute / profiled first execute
  double transformFactor = 1;  // measured transform / profiled transform
};

// Errors name the run (by `sources[i]`, the file it came from) and the node: a run
// of another model, a kernel the profile has no row for, a run with no node executed.
Expected<Calibration> calibrate(const profile::ColdProfile& profile, const std::string& model,
                                const std::vector<profile::MeasuredColdRun>& runs,
                                const std::vector<std::string>& sources);

// `profile` with `model`'s first executions and transforms scaled and the storage
// bandwidth replaced as `c` says (the identity for runs == 0).
profile::ColdProfile applyCalibration(const profile::ColdProfile& profile, const std::string& model,
                                      const Calibration& c);

}  // namespace zp::coldstart
