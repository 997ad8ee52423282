// zoo-init: write zoo.json from a folder of ONNX exports, one folder per task.
#include <iostream>

#include <CLI/CLI.hpp>

#include "drivers/stitch_flow/zoo_init.h"
#include "libplan/util/dim_limits.h"
#include "libplan/zoo/stitch_manifest.h"
#include "tools/cli.h"

int main(int argc, char** argv) {
  CLI::App app{"zoo-init: write zoo.json from DIR/<task>/<variant>.onnx (each task's test split in "
               "DIR/<task>/data/inputs.npy and labels.npy); each variant's kind, sparsity and precision are read "
               "from its weights, the processors are this machine's cores unless --processors names others, and every variant is checked to stitch"};
  zp::drivers::ZooInitOptions o;
  app.add_option("dir", o.dir, "folder of task folders")->required();
  app.add_option("-o,--out", o.out, "zoo.json to write (default DIR/zoo.json)");
  app.add_option("--name", o.name, "the zoo's name (default: the folder's)");
  app.add_option("--inputs", o.inputs, "each task's samples, relative to its folder")->default_val(o.inputs);
  app.add_option("--labels", o.labels, "each task's labels, relative to its folder")->default_val(o.labels);
  app.add_option("--reference", o.reference, "the reference variant's id in every task (default: dense, else the "
                                             "fp32 one with the fewest zero weights)");
  app.add_option("--processors", o.processors, "FILE: use the processors of another zoo.json (or of a file holding "
                                               "{\"processors\": [...]} in its form) instead of this machine's cores");
  app.add_option("--subgraphs", o.subgraphs, "subgraphs per task the stitch check cuts (default: the processors')")
      ->check(zp::cli::integerIn(1, zp::zoo::kMaxPositions));
  app.add_option("--batch", o.dims.batch, "the batch a symbolic batch dim is bound to, as zoo-stitch --batch")
      ->default_val(1)->check(zp::cli::integerIn(1, zp::kMaxDimValue));
  app.add_option("--group-min-share", o.groupMinShare,
                 "tasks whose reference models hold at least this share of the smaller one's weights in common "
                 "(a frozen backbone under several heads) become a weight-shared group (zoo.json's "
                 "multitask_groups) when MTS stitches them as one; 0: no groups")
      ->default_val(o.groupMinShare)->check(CLI::Range(0.0, 1.0));
  app.add_flag("--leave-out", o.leaveOut, "write zoo.json without the variants that do not stitch (default: refuse)");
  app.add_flag("--force", o.force, "replace an existing zoo.json");
  if (auto rc = zp::cli::parse(app, argc, argv, "zoo-init")) return *rc;
  if (o.out.empty()) o.out = o.dir / "zoo.json";
  auto r = zp::drivers::runZooInit(o);
  if (!r.ok()) return zp::cli::inputError("zoo-init", r.error());
  std::cout << zp::drivers::zooInitSummary(*r);
  for (const auto& v : r->variants)
    if (!v.problem.empty())
      std::cerr << (r->written ? "warning: left out " : "zoo-init: error: ") << v.task << "/" << v.variant << ": "
                << v.problem << "\n";
  if (!r->written) {
    std::cerr << "zoo-init: nothing written; --leave-out writes " << o.out.string() << " without those variants\n";
    return 1;
  }
  std::cout << "wrote " << o.out.string() << "\n";
  return 0;
}
