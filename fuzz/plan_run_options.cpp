// plan-run's command line as the tool parses it (cli::parsePlanRunArgs): the
// input is its arguments, one per line, each cut at a NUL as argv would be. A parse either ends with an exit code
// (0 or the option-error code) or yields a request whose values lie within the
// ranges the options promise and whose options belong together.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/util/dim_limits.h"
#include "tools/cli.h"
#include "tools/plan_run_options.h"

ZP_FUZZ_TARGET(plan_run_options) {
  using namespace zp;
  std::vector<std::string> args{"plan-run"};
  std::string text(fuzz::asText(data, size));
  size_t start = 0;
  while (start <= text.size() && args.size() < 64) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    std::string arg = text.substr(start, nl - start);
    arg.resize(std::min(arg.size(), arg.find('\0')));  // what argv can carry
    args.push_back(std::move(arg));
    start = nl + 1;
  }
  if (!args.back().size() && args.size() > 1) args.pop_back();  // a trailing newline
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  auto parsed = cli::parsePlanRunArgs(static_cast<int>(argv.size()), argv.data());
  if (const int* rc = std::get_if<int>(&parsed)) {
    fuzz::require(*rc == 0 || *rc == cli::kOptionError, "plan-run options: an exit code other than 0 or 2");
    return 0;
  }
  const auto& req = std::get<cli::PlanRunRequest>(parsed);
  using Kind = cli::PlanRunRequest::Kind;
  if (req.kind == Kind::Serve) {
    const auto& s = req.serve;
    fuzz::require(!s.bundle.empty(), "--serve: no bundle");
    fuzz::require(std::isfinite(s.rateQps) && s.rateQps > 0, "--serve: --rate out of range");
    fuzz::require(std::isfinite(s.durationMs) && s.durationMs >= 0 && s.durationMs <= kMaxLatencyMs,
                  "--serve: --duration-ms out of range");
    fuzz::require(!(s.durationMs > 0 && s.count > 0), "--serve: both --duration-ms and --count");
    fuzz::require(s.arrivals.empty() || (s.durationMs == 0 && s.count == 0), "--serve: --arrivals with generated arrivals");
    fuzz::require(s.count >= 0 && s.maxQueuedPerTask >= 1 && s.samples >= 1 && s.calibrationRounds >= 0,
                  "--serve: a count out of range");
    fuzz::require(s.process == "poisson" || s.process == "periodic", "--serve: unknown --process");
  } else if (req.kind == Kind::Bundle) {
    fuzz::require(!req.bundle.bundle.empty() && req.bundle.samples >= 0 && req.bundle.rounds >= 1,
                  "bundle run: a value out of range");
  } else {
    fuzz::require(!req.model.model.empty() && req.model.repeat >= 0 && req.model.batch >= 1,
                  "model run: a value out of range");
    for (const auto& in : req.model.inputs) fuzz::require(!in.first.empty(), "model run: an --input without a name");
  }
  return 0;
}
