// plan-solve --mode cold: MODEL.onnx -> plan.json with the model's cold-start plan
// (passes/coldstart). The cold profile is measured on this host (storage, GEMM
// start-up, every node under every kernel: seconds to minutes) unless an
// earlier cold_profile.csv is given; --write-cold-profile keeps the measurement.
// With --calibrate, the costs are first calibrated against measured cold runs of
// the model (plan-run --cold --json reports, passes/coldstart/calibration.h).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/util/error.h"
#include "passes/coldstart/coldstart.h"
#include "passes/measure/cold_profile_measure.h"

namespace zp::drivers {

struct SolveColdOptions {
  std::filesystem::path model;         // MODEL.onnx
  std::filesystem::path output;        // plan.json
  std::filesystem::path coldProfile;   // read this cold_profile.csv instead of measuring (empty: measure)
  std::string profileModel;            // the profile's model label (empty: the model file's stem)
  std::filesystem::path writeProfile;  // write the measured cold_profile.csv here (empty: none)
  std::vector<std::filesystem::path> calibrationRuns;  // plan-run --cold --json reports of this model
  measure::ColdProfileParams measure;  // workDir empty: beside the output
  coldstart::ColdStartParams solve;
  std::string tool = "plan-solve", version;
};

struct SolveColdResult {
  std::string summary;  // the predicted ablation table and the plan's per-node choices
};

// Measures (or reads) the profile, plans, writes plan.json atomically.
Expected<SolveColdResult> solveCold(const SolveColdOptions& options);

// The table plan-solve prints: every knob combination's predicted cold latency.
std::string coldSummary(const plan::ColdPlan& plan);

}  // namespace zp::drivers
