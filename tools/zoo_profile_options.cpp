#include "tools/zoo_profile_options.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <string>

#include "libplan/util/dim_limits.h"
#include "libplan/util/version.h"
#include "tools/cli.h"

namespace zp::cli {

std::variant<ZooProfileRequest, int> parseZooProfileArgs(int argc, char** argv) {
  CLI::App app{"zoo-profile: profile a zoo-stitch directory and estimate every stitched variant"};
  ZooProfileRequest req;
  std::string stitchDir, outDir;
  std::vector<std::string> processors, imports;
  drivers::ProfileParams& params = req.params;
  std::string shard;
  std::vector<std::string> mergeDirs;
  app.add_option("stitch_dir", stitchDir, "output directory of zoo-stitch (not with --merge)");
  app.add_option("--shard", shard, "K/N: measure only shard K (from 0) of N of the run; -o gets shard.json");
  app.add_option("--merge", mergeDirs, "SHARD_DIR...: merge every shard of one run into the profile a single run writes")
      ->expected(1, -1);
  app.add_option("-o,--out", outDir, "profile directory: absent, empty or an earlier zoo-profile output, replaced atomically")
      ->required();
  app.add_option("--processor", processors, "NAME=host[:POLICY[@THREADS]]: measure NAME on the host");
  app.add_option("--import", imports, "NAME=FORMAT:FILE[@TASK/VARIANT]: NAME's rows from a profiler output");
  app.add_option("--repeat", params.repeat, "timed runs per measurement")->default_val(20)->check(integerIn(1, 1000000));
  app.add_option("--warmup", params.warmup, "untimed runs before timing")->default_val(3)->check(integerIn(0, 1000000));
  app.add_option("--jobs", params.jobs, "threads for accuracy evaluation")->default_val(1)->check(threadCount());
  app.add_option("--training-fraction", params.trainingFraction, "share of stitched variants measured to train the accuracy estimator")
      ->default_val(0.15)->check(numberIn(0.0, 1.0));
  app.add_option("--accuracy-estimator", params.accuracyEstimator,
                 "features: SparseLoom's XGBoost estimator; contested: composed from the samples the sources disagree on")
      ->default_val("contested")->check(CLI::IsMember({"features", "contested"}));
  app.add_option("--audit-fraction", params.auditFraction,
                 "contested: share of the samples every source variant gets right that a stitched variant also runs on")
      ->default_val(0.03)->check(numberIn(0.0, 1.0));
  app.add_option("--active-top", params.activeTop,
                 "contested: measure on every sample the stitched variants predicted in this top that are not measured "
                 "yet, until the predicted top is all measured or the budget is spent (0: none)")
      ->default_val(10)->check(integerIn(0, 1000000));
  app.add_option("--accuracy-budget", params.accuracyBudget,
                 "contested: the accuracy work's share of the exhaustive subgraph runs that --active-top may fill")
      ->default_val(0.15)->check(numberIn(0.0, 1.0));
  app.add_option("--exhaustive-limit", params.exhaustiveLimit, "measure every stitched variant when it takes fewer subgraph runs")
      ->default_val(4000000)->check(integerIn(0, INT64_MAX));
  app.add_option("--latency-validation", params.latencyValidation, "stitched variants per task measured end to end")
      ->default_val(24)->check(integerIn(0, 1000000));
  app.add_option("--seed", params.seed, "seed of every sample drawn")->default_val(0)->check(integerIn(0, INT64_MAX));
  app.add_option("--batch", params.batch,
                 "batch a symbolic (dynamic) batch dim runs at when measuring latency (default: the one zoo-stitch bound)")
      ->check(integerIn(1, kMaxDimValue));
  app.add_flag("--force", params.force, "re-measure even when the inputs are unchanged");
  app.add_flag("--cold-profile", params.coldProfile,
               "also write cold_profile.csv: every subgraph under every kernel and GEMM library (cold costs)");
  app.add_option("--cold-warm-repeat", params.coldWarmRepeat, "cold profile: warm runs per kernel")
      ->default_val(3)->check(integerIn(1, 1000000));
  app.add_option("--xgb-rounds", params.xgb.rounds, "accuracy estimator: boosting rounds")->default_val(params.xgb.rounds)
      ->check(integerIn(1, 100000));
  app.add_option("--xgb-depth", params.xgb.maxDepth, "accuracy estimator: tree depth")->default_val(params.xgb.maxDepth)
      ->check(integerIn(1, 64));
  app.add_option("--xgb-objective", params.xgb.objective, "accuracy estimator: XGBoost objective")->default_val(params.xgb.objective);
  app.add_option("--xgb-eta", params.xgb.eta, "accuracy estimator: learning rate")->default_val(params.xgb.eta)
      ->check(numberIn(1e-6, 1.0));
  if (auto rc = parse(app, argc, argv, "zoo-profile")) return *rc;
  params.tool = "zoo-profile " + zooplanVersion();
  for (const auto& p : processors) {
    auto o = drivers::parseHostOverride(p);
    if (!o.ok()) return printError("zoo-profile", o.error().message), kOptionError;
    params.hostOverrides.push_back(*o);
  }
  for (const auto& i : imports) {
    auto s = drivers::parseImportSpec(i);
    if (!s.ok()) return printError("zoo-profile", s.error().message), kOptionError;
    params.imports.push_back(*s);
  }
  if (mergeDirs.empty() == stitchDir.empty())
    return printError("zoo-profile", "give a stitch directory, or --merge with shard directories"),
           kOptionError;
  if (!mergeDirs.empty()) {
    // A merge runs with the shards' parameters: measurement options would be ignored.
    for (const char* o : {"--shard", "--processor", "--import", "--repeat", "--warmup", "--training-fraction", "--audit-fraction", "--active-top", "--accuracy-budget",
                          "--accuracy-estimator",
                          "--exhaustive-limit", "--latency-validation", "--seed", "--batch", "--cold-profile",
                          "--xgb-rounds", "--xgb-depth", "--xgb-objective", "--xgb-eta"})
      if (app.count(o))
        return printError("zoo-profile", fmt::format("{}: not with --merge (the shards' parameters are used)", o)),
               kOptionError;
  }
  if (!shard.empty()) {
    auto spec = drivers::parseShardSpec(shard);
    if (!spec.ok()) return printError("zoo-profile", spec.error().message), kOptionError;
    req.shard = *spec;
  }
  req.stitchDir = stitchDir;
  req.outDir = outDir;
  req.mergeDirs.assign(mergeDirs.begin(), mergeDirs.end());
  return req;
}

}  // namespace zp::cli
