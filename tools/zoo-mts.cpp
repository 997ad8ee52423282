// zoo-mts: stitch each multitask group of a zoo (weight-shared task models)
// into one ONNX graph (MTS), writing OUT/<group>.onnx and OUT/mts.json.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "drivers/mts_flow/zoo_mts.h"
#include "libplan/graph/dims.h"
#include "libplan/util/dim_limits.h"
#include "tools/cli.h"

int main(int argc, char** argv) {
  CLI::App app{"zoo-mts: stitch weight-shared task models of a zoo's multitask groups into one graph per group (MTS)"};
  zp::mts::ZooMtsOptions options;
  bool netfuse = false;
  int64_t budget = 0;
  app.add_option("zoo", options.zoo, "zoo.json with multitask_groups")->required();
  app.add_option("-o,--out", options.out, "output directory: absent, empty or an earlier zoo-mts output, replaced atomically")
      ->required();
  app.add_option("--group", options.groups, "stitch only this group (repeatable; default: every group)");
  app.add_flag("--shared-input", options.sharedInput,
               "members with inputs of one shape read one input (one image, many tasks): shared layers run once");
  app.add_flag("--netfuse", netfuse, "the NetFuse baseline instead: no weight sharing, grouped convolutions");
  auto* budgetOption = app.add_option("--memory-budget", budget, "bytes a stitched group may hold (weights + auxiliary "
                                                                 "constants); overrides memory_budget_bytes")
                           ->check(zp::cli::integerIn(1, INT64_MAX));
  app.add_option("--batch", options.dims.batch, "batch a member's symbolic (dynamic) batch dim is bound to, as zoo-stitch binds it")
      ->capture_default_str()->check(zp::cli::integerIn(1, zp::kMaxDimValue));
  std::vector<std::string> dims;
  app.add_option("--dim", dims, "NAME=VALUE: bind a symbolic dim that is not the batch (repeatable)");
  if (auto rc = zp::cli::parse(app, argc, argv, "zoo-mts")) return *rc;
  for (const auto& d : dims) {
    auto kv = zp::graph::parseDimSpec(d);
    if (!kv.ok()) return zp::cli::printError("zoo-mts", kv.error().message), zp::cli::kOptionError;
    options.dims.named[kv->first] = kv->second;
  }
  if (netfuse) options.mode = zp::mts::StitchMode::NetFuse;
  if (budgetOption->count()) options.memoryBudgetBytes = budget;
  options.tool = "zoo-mts";

  auto manifest = zp::mts::runZooMts(options);
  if (!manifest.ok()) return zp::cli::inputError("zoo-mts", manifest.error());
  fmt::print("{}", zp::mts::mtsSummary(*manifest));
  fmt::print("wrote {}\n", (options.out / "mts.json").string());
  return 0;
}
