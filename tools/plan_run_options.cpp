#include "tools/plan_run_options.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

#include "libplan/runtime/kernels/simd_target.h"
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

// Every option's value as given, before the run it makes is chosen.
struct Given {
  drivers::RunModelOptions o;
  std::string model, saveOutputs, cache, writeCache, trace, coldPlan;
  std::vector<std::string> inputs, alongside, servingOrders;
  bool serve = false, planes = false;
  std::string jsonOut, compareList, simdTarget = "best";
  drivers::BundleRunParams bundle;
  drivers::ServeBundleParams sp;
};

void addOptions(CLI::App& app, Given& g) {
  auto& [o, model, saveOutputs, cache, writeCache, trace, coldPlan, inputs, alongside, servingOrders, serve, planes,
         jsonOut, compareList, simdTarget, bundle, sp] = g;
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
                 "direct, onednn, direct_rows) or a JSON file");
  app.add_option("--gemm", o.gemm, "GEMM library: onednn (fastest warm; generates its kernels on the first product) "
                                  "or blis (compiled kernels: the faster cold start)");
  app.add_flag("--planes", planes, "pass every value in planes (NCHW), also between pointwise and depthwise convs "
                                   "(else channel-blocked there, with the kernels that suit blocks): for comparing speed");
  app.add_option("--cache", cache, "weight cache to map");
  app.add_option("--write-cache", writeCache, "write the transformed weights to this cache file");
  app.add_flag("--cold", o.cold, "evict model and cache from the page cache, time load + first run");
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
  app.add_option("--rate", sp.rateQps, "--serve: generated arrivals per task per second (default: the rates the plan was made for, else 20)")->check(CLI::Range(1e-3, 1e6));
  app.add_option("--duration-ms", sp.durationMs, "--serve: generated arrivals in [0, MS)")
      ->check(numberIn(1e-3, kMaxLatencyMs));
  app.add_option("--count", sp.count, "--serve: generated arrivals per task (default 60)")->check(integerIn(1, 10000000));
  app.add_option("--max-queue", sp.maxQueuedPerTask, "--serve: queries of one task queued or running at once; "
                                                     "one arriving beyond is dropped, counted as a violation")
      ->capture_default_str()->check(integerIn(1, 1000000));
  app.add_option("--serving-order", servingOrders,
                 "--serve: ORDER (first-come or earliest-deadline): every system's processors take queued queries in "
                 "this order instead of the one its plan names (what an order gains, measured); NAME=ORDER "
                 "(repeatable): the system NAME's only, e.g. a --with system serving this bundle's choice in the "
                 "other order");
  app.add_option("--compare", compareList, compareHelp());
  app.add_option("--with", alongside, "--serve: NAME=BUNDLE: also serve another bundle's plan choice (a stitch plan "
                                      "of the same zoo and workload, e.g. plan-solve --only) as the system NAME, on "
                                      "the same trace in the same rounds (repeatable)");
  app.add_option("--budget", sp.budget, "--serve: the plan's preload set and memory budget, as planned (default: the first)");
  app.add_option("--calibration-rounds", sp.calibrationRounds,
                 "--serve: timed runs per subgraph to calibrate the prediction as serving runs it, spread over --rounds "
                 "(a piece before each of a system's segments; 0: the plan's latencies)")
      ->check(integerIn(0, 100000));
  app.add_option("--trace-system", sp.traceSystem, "--serve: the system whose measured timeline --trace writes");
  app.add_option("--trace", trace, "write a Chrome-trace JSON of one profiled run (with --cold: of the cold run; "
                                  "an operator-placement bundle: one track per processor; a concurrent bundle: "
                                  "of the plan's schedule)");
  app.add_option("--rounds", bundle.rounds, "concurrent bundle: rounds in which every schedule runs --repeat times "
                                            "(medians over rounds); --serve: the trace in this many segments, "
                                            "every system serving each in turn (default 1)")
      ->check(integerIn(1, 10000));
  // Every target the build names (the help is the same on every host); one this CPU lacks is refused when used.
  std::vector<std::string> targets = runtime::simdTargetsOfThisBuild();
  app.add_option("--simd", simdTarget,
                 fmt::format("SIMD target of the runtime's kernels, and oneDNN's instruction-set cap: {} (best first; "
                             "those this CPU runs) or best (the default); a narrower one measures the path a smaller CPU "
                             "runs",
                             fmt::join(targets, ", ")))
      ->check(CLI::IsMember([&] { targets.push_back("best"); return targets; }()));
  app.add_option("--seed", o.seed, "seed of the random inputs")->check(integerIn(0, INT64_MAX));
  app.add_option("--batch", o.batch, "random inputs: size of a symbolic (dynamic) leading dim")
      ->default_val(1)->check(integerIn(1, kMaxDimValue));
}

// NAME=FILE.npy pairs; nothing (after the one-line error) when one is malformed.
std::optional<std::vector<std::pair<std::string, std::filesystem::path>>> namedFiles(
    const std::vector<std::string>& texts, const char* form, const char* option = "--input") {
  std::vector<std::pair<std::string, std::filesystem::path>> out;
  for (const auto& text : texts) {
    auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0) {
      printError("plan-run", fmt::format("{}: expected {}, got '{}'", option, form, text));
      return std::nullopt;
    }
    out.push_back({text.substr(0, eq), text.substr(eq + 1)});
  }
  return out;
}

// --serving-order, each ORDER (every system's) or NAME=ORDER (that system's);
// false after printing what is wrong.
bool servingOrders(const std::vector<std::string>& given, drivers::ServeBundleParams& sp) {
  for (const auto& text : given) {
    const auto eq = text.find('=');
    const std::string name = eq == std::string::npos ? "" : text.substr(0, eq);
    const auto order = parseServingOrder(eq == std::string::npos ? text : text.substr(eq + 1));
    if (!order || (eq != std::string::npos && name.empty())) {
      printError("plan-run", fmt::format("--serving-order {}: expected ORDER or NAME=ORDER, ORDER first-come or "
                                         "earliest-deadline", text));
      return false;
    }
    if (name.empty() ? sp.servingOrder.has_value() : sp.servingOrderOf.count(name) > 0) {
      printError("plan-run", fmt::format("--serving-order {}: given twice for {}", text,
                                         name.empty() ? "every system" : "system '" + name + "'"));
      return false;
    }
    if (name.empty()) sp.servingOrder = order;
    else sp.servingOrderOf[name] = *order;
  }
  return true;
}

// The first option of `options` given, with what is said of it; nullptr: none.
const char* firstGiven(const CLI::App& app, const std::vector<const char*>& options) {
  for (const char* opt : options)
    if (app.count(opt)) return opt;
  return nullptr;
}

std::variant<PlanRunRequest, int> serveRequest(const CLI::App& app, Given& g) {
  if (!std::filesystem::is_directory(g.model)) {
    printError("plan-run", fmt::format("--serve: '{}' is not a bundle directory", g.model));
    return kOptionError;
  }
  if (app.count("--duration-ms") && app.count("--count")) {
    printError("plan-run", "--duration-ms and --count: give one of the two");
    return kOptionError;
  }
  if (app.count("--arrivals"))
    if (const char* opt = firstGiven(app, {"--process", "--rate", "--duration-ms", "--count"})) {
      printError("plan-run", fmt::format("--arrivals and {}: the trace gives the arrivals; drop {}", opt, opt));
      return kOptionError;
    }
  if (const char* opt = firstGiven(app, {"--input", "--save-outputs", "--cold", "--repeat", "--task"})) {
    printError("plan-run", fmt::format("{} applies to a bundle's run, not --serve", opt));
    return kOptionError;
  }
  auto& sp = g.sp;
  sp.bundle = g.model;
  sp.json = g.jsonOut;
  sp.trace = g.trace;
  sp.seed = g.o.seed;
  if (app.count("--samples")) sp.samples = g.bundle.samples;
  if (app.count("--rounds")) sp.rounds = g.bundle.rounds;
  sp.planWorkload = !app.count("--rate") && !app.count("--process") && !app.count("--arrivals");
  sp.slos = splitList(g.bundle.slo);
  sp.compare = splitList(g.compareList);
  auto alongside = namedFiles(g.alongside, "NAME=BUNDLE", "--with");
  if (!alongside) return kOptionError;
  sp.alongside = *alongside;
  if (!servingOrders(g.servingOrders, sp)) return kOptionError;
  PlanRunRequest req;
  req.kind = PlanRunRequest::Kind::Serve;
  req.serve = sp;
  return req;
}

std::variant<PlanRunRequest, int> bundleRequest(Given& g, bool json) {
  auto& bundle = g.bundle;
  bundle.bundle = g.model;
  bundle.cold = g.o.cold;
  bundle.repeat = g.o.repeat;
  bundle.seed = g.o.seed;
  bundle.trace = g.trace;
  bundle.compare = splitList(g.compareList);
  bundle.saveOutputs = g.saveOutputs;
  auto inputs = namedFiles(g.inputs, "TASK=FILE.npy for a bundle");
  if (!inputs) return kOptionError;
  bundle.inputs = *inputs;
  PlanRunRequest req;
  req.kind = PlanRunRequest::Kind::Bundle;
  req.bundle = bundle;
  req.json = json;
  return req;
}

std::variant<PlanRunRequest, int> modelRequest(const CLI::App& app, Given& g, bool json) {
  if (!g.coldPlan.empty() && (app.count("--kernels") || app.count("--gemm"))) {
    printError("plan-run", "--cold-plan names every node's kernel and GEMM library: not with --kernels or --gemm");
    return kOptionError;
  }
  if (!g.coldPlan.empty() && g.o.cold && g.cache.empty()) {
    printError("plan-run", "--cold-plan with --cold runs from the plan's weight cache: give --cache "
                           "(written with --cold-plan and --write-cache)");
    return kOptionError;
  }
  auto& o = g.o;
  o.coldPlan = g.coldPlan;
  o.model = g.model;
  o.saveOutputs = g.saveOutputs;
  o.cache = g.cache;
  o.channelBlocks = !g.planes;
  o.writeCache = g.writeCache;
  o.trace = g.trace;
  auto inputs = namedFiles(g.inputs, "NAME=FILE.npy");
  if (!inputs) return kOptionError;
  o.inputs = *inputs;
  PlanRunRequest req;
  req.kind = PlanRunRequest::Kind::Model;
  req.model = o;
  req.json = json;
  return req;
}

// A bundle's run or a model's, after the checks that hold for both.
std::variant<PlanRunRequest, int> kindRequest(const CLI::App& app, Given& g) {
  const bool json = app.count("--json") > 0;
  if (const char* opt = firstGiven(app, {"--arrivals", "--process", "--rate", "--duration-ms", "--count", "--budget",
                                         "--trace-system", "--calibration-rounds", "--max-queue",
                                         "--serving-order"})) {
    printError("plan-run", fmt::format("{} applies only with --serve", opt));
    return kOptionError;
  }
  if (!g.jsonOut.empty()) {
    printError("plan-run", "--json FILE: a file is for --serve's report; without --serve, --json alone prints the "
                           "report as JSON on stdout");
    return kOptionError;
  }
  const bool isBundle = std::filesystem::is_directory(g.model);
  if (const char* opt = firstGiven(app, isBundle ? std::vector<const char*>{"--kernels", "--cache", "--write-cache",
                                                                          "--threads", "--gemm", "--cold-plan", "--planes"}
                                                 : std::vector<const char*>{"--slo", "--task", "--samples", "--rounds",
                                                                            "--compare"})) {
    printError("plan-run", fmt::format("{} does not apply to {}", opt, isBundle ? "a bundle" : "a single model"));
    return kOptionError;
  }
  return isBundle ? bundleRequest(g, json) : modelRequest(app, g, json);
}

}  // namespace

std::variant<PlanRunRequest, int> parsePlanRunArgs(int argc, char** argv) {
  CLI::App app{"Run an ONNX model with the zooplan runtime and measure it"};
  Given g;
  addOptions(app, g);
  if (auto rc = parse(app, argc, argv, "plan-run")) return *rc;
  if (g.model.empty()) {
    printError("plan-run", "model: an empty path; give an ONNX model or a bundle directory");
    return kOptionError;
  }
  auto req = g.serve ? serveRequest(app, g) : kindRequest(app, g);
  if (auto* r = std::get_if<PlanRunRequest>(&req)) r->simdTarget = g.simdTarget;
  return req;
}

}  // namespace zp::cli

