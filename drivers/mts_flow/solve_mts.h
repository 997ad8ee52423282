// plan-solve --mode mts: the stitched groups zoo-mts wrote become units of the
// plan. Each unit's stitched graph and its members' own models are measured on
// every host processor of the zoo (pinned to the processor's cores), the units
// are placed on processors to minimise the makespan of one query of every
// unit (passes/mts/unit_placement), and the plan records the placement beside
// the systems plan-run --serve compares it with.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

#include "libplan/plan/plan.h"
#include "libplan/util/error.h"

namespace zp::drivers {

struct SolveMtsOptions {
  std::filesystem::path manifest;  // mts.json, or the zoo-mts output directory holding it
  std::filesystem::path zoo;       // the host processors' zoo.json (empty: the zoo mts.json was made from)
  std::filesystem::path output;    // plan.json
  int warmup = 10, repeat = 50;    // untimed and timed runs of each model on each processor
  uint64_t seed = 0;               // of the random inputs the runs are timed on
  std::string tool = "plan-solve", version;
};

struct SolveMtsResult {
  plan::Plan plan;
  std::string summary;  // per unit and per system, one line each
};

// The plan's units: each stitched group on the processor zooplan's system
// places it on, and each member's own model (what the comparison systems run)
// as a unit of its group, named GROUP/TASK (a task may be a member of two groups).
struct GroupModels {
  struct File {
    std::string file, sha256;
  };
  std::string file, sha256;   // the stitched graph
  std::vector<File> members;  // each member's own model, in the group's member order
};
std::vector<plan::Unit> mtsUnits(const plan::MtsPlan& mts, const std::vector<GroupModels>& models);

// Errors name the file: a stitched graph that is not the one mts.json records,
// a zoo that changed since zoo-mts, a processor that is not a host processor
// with cores. The plan is written (atomically) only when everything succeeded.
Expected<SolveMtsResult> solveMts(const SolveMtsOptions& options);

}  // namespace zp::drivers
