// plan-run's command line: every option, its checks and which combinations a
// run takes, parsed into one request for a driver. Kept out of plan-run.cpp so
// that the fuzz harness parses exactly what the tool parses.
#pragma once
#include <variant>

#include "drivers/run/run_bundle.h"
#include "drivers/run/run_model.h"
#include "drivers/run/serve_bundle.h"

namespace zp::cli {

struct PlanRunRequest {
  enum class Kind { Model, Bundle, Serve } kind = Kind::Model;
  drivers::RunModelOptions model;     // Kind::Model
  drivers::BundleRunParams bundle;    // Kind::Bundle
  drivers::ServeBundleParams serve;   // Kind::Serve
  bool json = false;                  // print the report as JSON (Model, Bundle)
  std::string simdTarget = "best";    // the kernels' SIMD target (and oneDNN's cap)
};

// A request, or the exit code to end with: 0 after --help, kOptionError after
// one line "plan-run: error: ..." on stderr.
std::variant<PlanRunRequest, int> parsePlanRunArgs(int argc, char** argv);

}  // namespace zp::cli
