// Collecting per-node host profiles (node_profile.csv) of whole ONNX models
// for every host processor of a zoo, and validating the per-processor
// operator latency predictor on them (leave one model out).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/artifacts/node_profile_csv.h"
#include "libplan/estimate/op_latency.h"
#include "libplan/zoo/zoo.h"
#include "passes/measure/host_measure.h"

namespace zp::drivers::opplace_flow {

struct ModelSource {
  std::string name;  // the profile's model key
  std::filesystem::path file;
};

// The host processors of a zoo, one per distinct (policy, threads), in zoo order.
std::vector<Processor> hostConfigs(const zoo::Zoo& zoo);
// Every variant model of a zoo, named by artifacts::zooModelKey.
std::vector<ModelSource> zooModels(const zoo::Zoo& zoo);

struct ProfileParams {
  measure::MeasureParams measure{20, 3};
  uint64_t seed = 0;  // of the random inputs
};

// Per model, per config: profileNodes on seeded random inputs. Rows grouped by model, then config.
Expected<std::vector<artifacts::NodeProfileRow>> profileModels(const std::vector<ModelSource>& models,
                                                               const std::vector<Processor>& configs,
                                                               const ProfileParams& params);

// Whether `row` was profiled under `config` (one processor's rows of a shared file).
bool profiledUnder(const artifacts::NodeProfileRow& row, const Processor& config);

// The rows of one processor as predictor samples.
std::vector<estimate::OpSample> samplesOf(const std::vector<artifacts::NodeProfileRow>& rows,
                                          const Processor& config);

// Share of rows whose two half-medians (ms_odd, ms_even) agree within `tolerance`:
// how often the measurement agrees with itself, the ceiling of any predictor's score.
double selfAgreement(const std::vector<artifacts::NodeProfileRow>& rows, const Processor& config,
                     double tolerance);

}  // namespace zp::drivers::opplace_flow
