// plan-solve: thin CLI. Parses options and dispatches on --mode to one library
// entry point per mode (the default SparseLoom mode is added beside "concurrent").
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "passes/schedule/concurrent.h"

int main(int argc, char** argv) {
  CLI::App app{"plan-solve: compute an execution plan"};
  std::string mode;
  zp::schedule::ConcurrentCliParams cc;
  std::string objective, solver = "exact";
  std::string workload, output, trace, stats;
  app.add_option("--mode", mode, "planning mode (concurrent)")->required();
  app.add_option("input", workload, "input file (concurrent: WORKLOAD.json)")->required();
  app.add_option("-o,--output", output, "plan JSON to write")->required();
  app.add_option("--objective", objective, "latency | throughput (default: the workload's)")
      ->check(CLI::IsMember({"latency", "throughput"}));
  app.add_option("--solver", solver, "exact | z3")->check(CLI::IsMember({"exact", "z3"}));
  app.add_option("--max-transitions", cc.solve.maxTransitionsPerDnn,
                 "transitions per DNN in the search space (-1: unrestricted)");
  app.add_option("--time-limit", cc.solve.timeLimitS, "solver time limit, seconds")->check(CLI::PositiveNumber);
  app.add_flag("--anytime", cc.anytime, "print each improving schedule with its timestamp");
  app.add_flag("--cross-check", cc.solve.crossCheckZ3, "also solve with Z3 in the same space and compare");
  app.add_option("--trace", trace, "write a Chrome-trace / Perfetto JSON of the schedule");
  app.add_option("--stats", stats, "write solve times (non-deterministic) to this JSON file");
  app.add_option("--seed", cc.solve.seed, "random seed (recorded in the plan; seeds Z3)");
  CLI11_PARSE(app, argc, argv);

  if (mode != "concurrent") {
    std::cerr << "plan-solve: --mode " << mode << ": unknown mode (available: concurrent)\n";
    return 2;
  }
  cc.workload = workload;
  cc.output = output;
  cc.trace = trace;
  cc.stats = stats;
  if (!objective.empty())
    cc.solve.objective = objective == "latency" ? zp::sim::Objective::Latency : zp::sim::Objective::Throughput;
  cc.solve.solver = solver == "z3" ? zp::schedule::SolverKind::Z3 : zp::schedule::SolverKind::Exact;
  zp::Status st = zp::schedule::runConcurrentCli(cc, std::cout);
  if (!st.ok()) {
    std::cerr << st.error().message << "\n";
    return 1;
  }
  return 0;
}
