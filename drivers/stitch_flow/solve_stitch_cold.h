// plan-solve --mode stitch: the cold-start section (NNV12, passes/coldstart) of
// every subgraph zooplan's feasible selections run, planned from the
// cold_profile.csv that zoo-profile --cold-profile wrote beside the profile.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/plan/plan.h"
#include "libplan/util/error.h"
#include "passes/coldstart/coldstart.h"

namespace zp::drivers {

struct StitchColdPlans {
  bool profiled = false;        // the profile directory has cold_profile.csv
  std::string profileSha256;    // of that file, for the plan header
  std::vector<plan::ColdPlan> plans;  // by label "task/position/variant", sorted
  std::string summary;
};

// The subgraphs of `stitch`'s feasible selections, each planned; none (with a
// note) when the profile has no cold profile. The file is checked against the
// hash report.json records for it.
Expected<StitchColdPlans> planStitchColdStarts(const std::filesystem::path& profileDir, const plan::StitchPlan& stitch,
                                               const coldstart::ColdStartParams& params);

}  // namespace zp::drivers
