#include "tools/plan_run_options.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

#include "libplan/util/dim_limits.h"
#include "libplan/util/validate.h"
#include "passes/select/served_systems.h"
#include "tools/cli.h"

namespace zp::cli {

namespace {

// Every system a bundle may carry, one line each, for --compare's help.
std::string compareHelp() {
  std::string help = "bundle: also run (or --serve) these systems after the plan's own, comma-separated, or all. "
                     "A stitch plan's:";
  for (const auto& [name, description] : select::servedSystemCatalog())
    if (name != "zooplan") help += fmt::format("\n    {}: {}", name, description);
  help += "\n  a concurrent schedule's: its baselines (<ACC>-only, naive-concurrent, mensa-like, herald-like, h2h-like; "
          "HaX-CoNN §5); an MTS plan's: mts, sequential, one-processor";
  return help;
}

}  // namespace

std::variant<PlanRunRequest, int> parsePlanRunArgs(int argc, char** argv) {
  CLI::App app{"Run an ONNX model with the zooplan runtime and measure it"};
  drivers::RunModelOptions o;
  std::string model, saveOutputs, cache, writeCache, trace;
  std::vector<std::string> inputs;
  bool json = false, serve = false;
  std::string jsonOut, sloList, compareList;
  drivers::BundleRunParams bundle;
  drivers::ServeBundleParams sp;
  app.add_option("model", model, "ONNX model, or a bundle directory written by plan-emit")->required();
  app.add_option("--slo", bundle.slo, "bundle: SLO configuration (default: per task the first feasible one)");
  app.add_option("--task", bundle.task, "bundle: run only this task");
  app.add_option("--samples", bundle.samples, "bundle: dataset inputs to check and score (default: all of the task's "
                                              "dataset; 8 random inputs without one); --serve: samples the queries cycle through")
      ->check(integerIn(1, 1000000));
  app.add_option("--input", inputs, "NAME=FILE.npy (repeatable): a model's input NAME, or a bundle's task NAME (its "
                                    "first subgraph's input); random inputs with a fixed seed otherwise");
  app.add_option("--save-outputs", saveOutputs, "directory to write every output as NAME.npy (a bundle: TASK.NAME.npy of "
                                                "its --input runs): absent, empty or an earlier --save-outputs "
                                                "directory, replaced atomically");
  app.add_option("--kernels", o.kernels,
                 "kernel policy (default, tune, naive, im2col, gemm1x1, winograd, depthwise, sparse, blas, packed1x1, "
                 "direct) or a JSON file");
  app.add_option("--gemm", o.gemm, "GEMM library: onednn (fastest warm; generates its kernels on the first product) "
                                  "or blis (compiled kernels: the faster cold start)");
  app.add_option("--cache", cache, "weight cache to map");
  app.add_option("--write-cache", writeCache, "write the transformed weights to this cache file");
  app.add_flag("--cold", o.cold, "evict model and cache from the page cache, time load + first run");
  std::string coldPlan;
  app.add_option("--cold-plan", coldPlan, "plan.json with a cold section for the model (plan-solve --mode cold): "
                                          "--write-cache writes the cache it runs from; with --cache (and --cold) "
                                          "the load follows it, reported per node");
  app.add_option("--repeat", o.repeat, "warm runs to time (0: none)")
      ->check(integerIn(0, 1000000));
  app.add_option("--threads", o.threads, "threads")->check(threadCount());
  app.add_option("--json", jsonOut, "print the report as JSON; with --serve: write it to this file")->expected(0, 1);
  app.add_flag("--serve", serve, "bundle: serve an arrival trace with the plan's choice (and --compare's systems), "
                                "measured beside predicted");
  app.add_option("--arrivals", sp.arrivals, "--serve: arrivals CSV (time_ms,task,sample); default: generated");
  app.add_option("--process", sp.process, "--serve: generated arrivals, periodic or poisson")
      ->check(CLI::IsMember({"periodic", "poisson"}));
  app.add_option("--rate", sp.rateQps, "--serve: generated arrivals per task per second")->check(CLI::Range(1e-3, 1e6));
  app.add_option("--duration-ms", sp.durationMs, "--serve: generated arrivals in [0, MS)")
      ->check(numberIn(1e-3, kMaxLatencyMs));
  app.add_option("--count", sp.count, "--serve: generated arrivals per task (default 60)")->check(integerIn(1, 10000000));
  app.add_option("--max-queue", sp.maxQueuedPerTask, "--serve: queries of one task queued or running at once; "
                                                     "one arriving beyond is dropped, counted as a violation")
      ->capture_default_str()->check(integerIn(1, 1000000));
  app.add_option("--compare", compareList, compareHelp());
  app.add_option("--budget", sp.budget, "--serve: the plan's preload set and memory budget, as planned (default: the first)");
  app.add_option("--calibration-rounds", sp.calibrationRounds,
                 "--serve: timed runs per subgraph to calibrate the prediction as serving runs it (0: the plan's latencies)")
      ->check(integerIn(0, 100000));
  app.add_option("--trace-system", sp.traceSystem, "--serve: the system whose measured timeline --trace writes");
  app.add_option("--trace", trace, "write a Chrome-trace JSON of one profiled run (with --cold: of the cold run; "
                                  "an operator-placement bundle: one track per processor; a concurrent bundle: "
                                  "of the plan's schedule)");
  app.add_option("--rounds", bundle.rounds, "concurrent bundle: rounds in which every schedule runs --repeat times "
                                            "(medians over rounds)")
      ->check(integerIn(1, 10000));
  app.add_option("--seed", o.seed, "seed of the random inputs")->check(integerIn(0, INT64_MAX));
  app.add_option("--batch", o.batch, "random inputs: size of a symbolic (dynamic) leading dim")
      ->default_val(1)->check(integerIn(1, kMaxDimValue));
  if (auto rc = parse(app, argc, argv, "plan-run")) return *rc;
  json = app.count("--json") > 0;
  const bool isBundle = std::filesystem::is_directory(model);
  if (serve) {
    if (!isBundle) {
      printError("plan-run", fmt::format("--serve: '{}' is not a bundle directory", model));
      return kOptionError;
    }
    if (app.count("--duration-ms") && app.count("--count")) {
      printError("plan-run", "--duration-ms and --count: give one of the two");
      return kOptionError;
    }
    for (const char* opt : {"--process", "--rate", "--duration-ms", "--count"})
      if (app.count("--arrivals") && app.count(opt)) {
        printError("plan-run", fmt::format("--arrivals and {}: the trace gives the arrivals; drop {}", opt, opt));
        return kOptionError;
      }
    for (const char* opt : {"--rounds"})
      if (app.count(opt)) {
        printError("plan-run", fmt::format("{} applies to a concurrent bundle's run, not --serve", opt));
        return kOptionError;
      }
    sp.bundle = model;
    sp.json = jsonOut;
    sp.trace = trace;
    sp.seed = o.seed;
    if (app.count("--samples")) sp.samples = bundle.samples;
    sp.slos = splitList(bundle.slo);
    sp.compare = splitList(compareList);
    PlanRunRequest req;
    req.kind = PlanRunRequest::Kind::Serve;
    req.serve = sp;
    return req;
  }
  for (const char* opt : {"--arrivals", "--process", "--rate", "--duration-ms", "--count", "--budget", "--trace-system",
                          "--calibration-rounds", "--max-queue"})
    if (app.count(opt)) {
      printError("plan-run", fmt::format("{} applies only with --serve", opt));
      return kOptionError;
    }
  if (!jsonOut.empty()) {
    printError("plan-run", "--json takes a file only with --serve");
    return kOptionError;
  }
  for (const char* opt : isBundle ? std::vector<const char*>{"--kernels", "--cache",
                                                             "--write-cache", "--threads", "--gemm", "--cold-plan"}
                                  : std::vector<const char*>{"--slo", "--task", "--samples", "--rounds", "--compare"}) {
    if (app.count(opt)) {
      printError("plan-run", fmt::format("{} does not apply to {}", opt, isBundle ? "a bundle" : "a single model"));
      return kOptionError;
    }
  }
  if (isBundle) {
    bundle.bundle = model;
    bundle.cold = o.cold;
    bundle.repeat = o.repeat;
    bundle.seed = o.seed;
    bundle.trace = trace;
    bundle.compare = splitList(compareList);
    bundle.saveOutputs = saveOutputs;
    for (const auto& text : inputs) {
      auto eq = text.find('=');
      if (eq == std::string::npos || eq == 0) {
        printError("plan-run", fmt::format("--input: a bundle takes TASK=FILE.npy, got '{}'", text));
        return kOptionError;
      }
      bundle.inputs.push_back({text.substr(0, eq), text.substr(eq + 1)});
    }
    PlanRunRequest req;
    req.kind = PlanRunRequest::Kind::Bundle;
    req.bundle = bundle;
    req.json = json;
    return req;
  }
  if (!coldPlan.empty() && (app.count("--kernels") || app.count("--gemm"))) {
    printError("plan-run", "--cold-plan names every node's kernel and GEMM library: not with --kernels or --gemm");
    return kOptionError;
  }
  if (!coldPlan.empty() && o.cold && cache.empty()) {
    printError("plan-run", "--cold-plan with --cold runs from the plan's weight cache: give --cache "
                                    "(written with --cold-plan and --write-cache)");
    return kOptionError;
  }
  o.coldPlan = coldPlan;
  o.model = model;
  o.saveOutputs = saveOutputs;
  o.cache = cache;
  o.writeCache = writeCache;
  o.trace = trace;
  for (const auto& s : inputs) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0) {
      printError("plan-run", fmt::format("--input: expected NAME=FILE.npy, got '{}'", s));
      return kOptionError;
    }
    o.inputs.push_back({s.substr(0, eq), s.substr(eq + 1)});
  }
  PlanRunRequest req;
  req.kind = PlanRunRequest::Kind::Model;
  req.model = o;
  req.json = json;
  return req;
}

}  // namespace zp::cli
