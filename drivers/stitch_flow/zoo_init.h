// zoo-init's driver: a folder of exports (DIR/<task>/<variant>.onnx, each
// task's test split in DIR/<task>/data/) -> zoo.json. Each variant's kind,
// sparsity and precision are read from its weights (libplan/graph/variant_facts.h),
// the processors default to this machine's cores, and every variant is
// checked to align and stitch with its task's reference before anything is
// written; one that cannot is named with why and what to do. Tasks whose
// reference models share weights by content become a weight-shared group when
// MTS stitches them as one.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/graph/dims.h"
#include "libplan/graph/variant_facts.h"
#include "libplan/util/error.h"
#include "libplan/zoo/multitask_group.h"
#include "libplan/zoo/zoo.h"

namespace zp::drivers {

struct ZooInitOptions {
  std::filesystem::path dir;
  std::filesystem::path out;          // zoo.json to write
  std::string name;                   // the zoo's name (default: the folder's)
  std::string inputs = "data/inputs.npy", labels = "data/labels.npy";  // per task, relative to its folder
  std::string reference;              // the reference variant's id (default: "dense", else the densest fp32 one)
  std::filesystem::path processors;   // a zoo.json (or {"processors": [...]}) whose processors to use (default: this machine's cores)
  int subgraphs = 0;                  // the stitch check's subgraphs per task (default: the processors')
  graph::DimBinding dims;             // symbolic dims as zoo-stitch binds them (--batch)
  bool leaveOut = false;              // write zoo.json without the variants that cannot stitch
  // Tasks whose reference models hold at least this share of the smaller one's
  // weights in common (a frozen backbone under several heads) become a weight-shared
  // group, when they stitch as one (0: no groups). Low, as the early layers a
  // backbone shares are few bytes but most of the compute; whether the group's
  // unit answers its members is the planner's choice, per workload.
  double groupMinShare = 0.1;
  bool force = false;                 // replace an existing zoo.json
};

struct VariantReport {
  std::string task, variant;
  graph::VariantFacts facts;
  bool reference = false;
  std::string problem;                // empty: it aligns and stitches with the reference
};

struct ZooInitResult {
  zoo::Zoo zoo;                       // as written (without left-out variants)
  std::vector<VariantReport> variants;
  std::vector<zoo::MultitaskGroup> groups;  // weight-shared groups found and stitched (zoo.json's multitask_groups)
  std::vector<std::string> notes;     // datasets found or not, processors chosen
  bool written = false;
};

// Errors: the folder holds no task, a name zoo.json cannot hold, an unreadable
// model or dataset, or (without leaveOut) a variant that does not stitch.
Expected<ZooInitResult> runZooInit(const ZooInitOptions& options);

std::string zooInitSummary(const ZooInitResult& result);

}  // namespace zp::drivers
