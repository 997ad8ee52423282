// Whether a stitch plan is still what plan-solve would make from its inputs:
// the hashes the plan recorded (the profile's files, stitch.json, the SLO file)
// against the files now, and down the chain the hashes stitch.json recorded
// (zoo.json and every variant's ONNX file) and zoo-profile's report recorded
// (every dataset it measured accuracy on) against theirs.
#pragma once
#include <string>
#include <vector>

#include "drivers/stitch_flow/solve_stitch.h"

namespace zp::drivers {

struct PlanFreshness {
  int checked = 0;                   // files compared
  std::vector<std::string> changed;  // one line each: the file, and what to re-run
  bool stale() const { return !changed.empty(); }
};

// The plan at `planFile` (read, never written) against the inputs it records:
// its profile directory and SLO source; `defaults` give the tool's name and version.
Expected<PlanFreshness> checkStitchPlanFreshness(const std::filesystem::path& planFile,
                                                 const SolveStitchOptions& defaults);

}  // namespace zp::drivers
