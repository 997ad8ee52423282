// An MTS plan's units as a bundle holds them, shared by plan-run's run and
// serving of the plan: per weight-shared group its stitched unit and its
// members' own units, and the samples both read (each member's dataset, or
// seeded random inputs, cut to the group's shortest).
#pragma once
#include <vector>

#include "drivers/run/bundle.h"
#include "libplan/plan/plan.h"
#include "libplan/runtime/tensor.h"

namespace zp::drivers {

struct MtsGroupSamples {
  std::vector<runtime::TensorMap> stitched;              // per sample (the shortest member's count): the stitched graph's inputs
  std::vector<std::vector<runtime::TensorMap>> members;  // per member, per sample: its own model's input
  std::vector<std::vector<int64_t>> labels;              // per member, per sample (empty: none)
  std::vector<std::string> sources;                      // per member: "dataset" | "random"
};

struct MtsBundleUnits {
  const plan::MtsPlan* mts = nullptr;
  std::vector<Processor> processors;                    // checked against this machine
  std::vector<const plan::Unit*> groups;                // per group of the section: its unit
  std::vector<std::vector<const plan::Unit*>> members;  // per group, per member: its unit
  std::vector<MtsGroupSamples> samples;                 // per group
};

// The units of the bundle's MTS section and up to `limit` samples per member
// (`randomCount` seeded random ones for a member without a dataset); each
// member's cut to the group's shortest unless `wholeSplits`.
Expected<MtsBundleUnits> readMtsUnits(Bundle& bundle, int limit, int randomCount, uint64_t seed,
                                      bool wholeSplits = false);

// Tolerance of a stitched graph's outputs against its members' own (relative:
// products regrouped and batched).
inline constexpr double kStitchedTolerance = 1e-4;

}  // namespace zp::drivers
