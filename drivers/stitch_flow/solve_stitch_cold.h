// plan-solve --mode stitch: the cold-start section (NNV12, passes/coldstart) of
// the subgraphs zooplan's feasible selections run, planned from the
// cold_profile.csv that zoo-profile --cold-profile wrote beside the profile.
#pragma once
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "libplan/plan/plan.h"
#include "libplan/profile/cold_profile.h"
#include "libplan/util/error.h"
#include "passes/coldstart/coldstart.h"

namespace zp::drivers {

// A profile directory's cold_profile.csv, checked against the hash report.json records for it.
struct StitchColdProfile {
  std::filesystem::path path;
  std::string sha256;
  profile::ColdProfile profile;
};

// Nothing when the directory has no cold_profile.csv.
Expected<std::optional<StitchColdProfile>> readStitchColdProfile(const std::filesystem::path& profileDir);

struct StitchColdPlans {
  bool profiled = false;        // the profile directory has cold_profile.csv
  std::string profileSha256;    // of that file, for the plan header
  std::vector<plan::ColdPlan> plans;  // by label "task/position/variant", sorted
  std::string summary;
};

// The subgraphs of `stitch`'s feasible selections, each planned (only those
// named in `only` when given: the units whose loads follow their cold
// sections); none (with a note) without a cold profile.
Expected<StitchColdPlans> planStitchColdStarts(const std::optional<StitchColdProfile>& cold,
                                               const std::filesystem::path& profileDir, const plan::StitchPlan& stitch,
                                               const coldstart::ColdStartParams& params,
                                               const std::set<std::string>* only = nullptr);

}  // namespace zp::drivers
