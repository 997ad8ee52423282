// plan-solve --mode opplace: MODEL.onnx, the zoo's host processors, the
// per-node profile (PROFILE_DIR/node_profile.csv) and the measured hand-off
// costs between processors (PROFILE_DIR/latency_model.json), both written by
// zoo-profile ->
// plan.json with the operator-placement section, and a table of the predicted
// latency of the placement and of each baseline.
#pragma once
#include <string>

#include "libplan/util/error.h"
#include "passes/opplace/solve.h"

namespace zp::drivers {

struct SolveOpplaceOptions {
  std::string model, zoo, profileDir, output;
  opplace::SolveParams solve;
  uint64_t seed = 0;
  std::string tool = "plan-solve", version;
};

struct SolveOpplaceResult {
  std::string summary;
};

Expected<SolveOpplaceResult> solveOpplace(const SolveOpplaceOptions& options);

}  // namespace zp::drivers
