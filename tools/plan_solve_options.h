// plan-solve's command line: every mode's options and checks, parsed into one
// request whose mode's options are complete (input, output, seed, version).
#pragma once
#include <string>
#include <variant>

#include "drivers/cold_flow/solve_cold.h"
#include "drivers/concurrent_flow/solve_concurrent.h"
#include "drivers/mts_flow/solve_mts.h"
#include "drivers/opplace_flow/solve_opplace.h"
#include "drivers/stitch_flow/solve_stitch.h"

namespace zp::cli {

struct PlanSolveRequest {
  std::string mode = "stitch";  // stitch | concurrent | opplace | cold | mts: which options below apply
  drivers::SolveConcurrentOptions concurrent;
  drivers::SolveStitchOptions stitch;
  drivers::SolveOpplaceOptions opplace;
  drivers::SolveColdOptions cold;
  drivers::SolveMtsOptions mts;
  bool anytime = false;  // concurrent: print each improving schedule
  std::string checkPlan;  // --check: the stitch plan to compare with its inputs instead of planning
};

// A request, or the exit code to end with: 0 after --help, kOptionError after
// one line "plan-solve: error: ..." on stderr.
std::variant<PlanSolveRequest, int> parsePlanSolveArgs(int argc, char** argv);

}  // namespace zp::cli
