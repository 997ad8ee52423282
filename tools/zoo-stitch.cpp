// zoo-stitch: partition a zoo's variants at common cut points and write the
// subgraphs, stitch.json and (optionally) materialized stitched variants.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "drivers/stitch_flow/zoo_stitch.h"
#include "libplan/graph/dims.h"
#include "libplan/util/version.h"
#include "tools/cli.h"
#include "libplan/util/dim_limits.h"

int main(int argc, char** argv) {
  CLI::App app{"zoo-stitch: partition each task's variants at common cut points and stitch them"};
  zp::drivers::ZooStitchOptions options;
  std::string cuts;
  app.add_option("zoo", options.zoo, "zoo.json")->required();
  app.add_option("-o,--out", options.out, "output directory: absent, empty or an earlier zoo-stitch output, replaced atomically")->required();
  app.add_option("--subgraphs", options.params.subgraphs, "subgraphs per task (default: number of processors)")
      ->check(zp::cli::integerIn(1, zp::zoo::kMaxPositions));
  app.add_option("--cuts", cuts, "cut tensors T1,T2,... (names in the reference variant); overrides --subgraphs");
  app.add_option("--materialize", options.params.materialize, "none | all | ID,... (combination ids, or task/ID)")
      ->default_val("none");
  std::vector<std::string> dims;
  app.add_option("--batch", options.params.dims.batch,
                 "batch that symbolic (dynamic) batch dims are bound to for FLOPs, cuts and signatures")
      ->default_val(1)->check(zp::cli::integerIn(1, zp::kMaxDimValue));
  app.add_option("--dim", dims, "NAME=VALUE: bind a symbolic dim that is not the batch (repeatable)");
  if (auto rc = zp::cli::parse(app, argc, argv, "zoo-stitch")) return *rc;
  for (size_t pos = 0; !cuts.empty();) {
    size_t comma = cuts.find(',', pos);
    options.params.cuts.push_back(cuts.substr(pos, comma - pos));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  for (const auto& d : dims) {
    auto kv = zp::graph::parseDimSpec(d);
    if (!kv.ok()) return zp::cli::printError("zoo-stitch", kv.error().message), zp::cli::kOptionError;
    options.params.dims.named[kv->first] = kv->second;
  }
  options.params.tool = "zoo-stitch " + zp::zooplanVersion();

  auto manifest = zp::drivers::runZooStitch(options);
  if (!manifest.ok()) return zp::cli::inputError("zoo-stitch", manifest.error());
  fmt::print("{}", zp::drivers::stitchSummary(*manifest));
  fmt::print("wrote {}\n", (options.out / "stitch.json").string());
  return 0;
}
