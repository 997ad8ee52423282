// The zoo-mts driver: reads zoo.json and its multitask groups, stitches each
// group (passes/mts) and writes OUT/<group>.onnx and OUT/mts.json through the
// guarded output directory. Nothing is written unless every group succeeded.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "libplan/graph/dims.h"
#include "libplan/util/error.h"
#include "libplan/zoo/mts_manifest.h"
#include "libplan/zoo/multitask_group.h"
#include "libplan/zoo/zoo.h"
#include "passes/mts/mts_stitch.h"

namespace zp::mts {

struct ZooMtsOptions {
  std::filesystem::path zoo;
  std::filesystem::path out;
  std::vector<std::string> groups;              // empty: every group of the zoo
  StitchMode mode = StitchMode::Mts;
  std::optional<int64_t> memoryBudgetBytes;     // overrides the groups' own budgets
  bool sharedInput = false;                     // as if every group declared shared_input
  graph::DimBinding dims;                       // members' symbolic dims bound as zoo-stitch binds them (--batch, --dim)
  std::string tool = "zoo-mts";
};

// The members' models of `group` (loaded, checked, shape-inferred) and task names.
struct GroupModels {
  std::vector<onnx::ModelProto> models;
  std::vector<std::string> tasks;
};
// Symbolic dims (a dynamic batch axis) are bound by `dims`.
Expected<GroupModels> loadGroupModels(const zoo::Zoo& zoo, const zoo::MultitaskGroup& group,
                                      const graph::DimBinding& dims = {});

// Stitches one group; errors read "<zoo.json>: group 'NAME': <problem>",
// including a stitched graph whose weights and auxiliary constants exceed `budget`.
Expected<StitchedGroup> stitchZooGroup(const zoo::Zoo& zoo, const zoo::MultitaskGroup& group, StitchMode mode,
                                       std::optional<int64_t> budget, const graph::DimBinding& dims = {});

// Every group of `groups` stitched (stitchZooGroup), before anything is written.
Expected<std::vector<StitchedGroup>> stitchZooGroups(const zoo::Zoo& zoo, const std::vector<zoo::MultitaskGroup>& groups,
                                                     StitchMode mode, std::optional<int64_t> budget,
                                                     const graph::DimBinding& dims = {});

// Writes the stitched groups into `staged` (an output directory being staged
// that will become `dir`): <group>.onnx and mts.json, which names the zoo
// relative to `dir`.
Expected<zoo::MtsManifest> writeStitchedGroups(const zoo::Zoo& zoo, const std::vector<zoo::MultitaskGroup>& groups,
                                               const std::vector<StitchedGroup>& stitched, StitchMode mode,
                                               const std::filesystem::path& staged, const std::filesystem::path& dir,
                                               const std::string& tool);

Expected<zoo::MtsManifest> runZooMts(const ZooMtsOptions& options);

// One line per group: members, bytes (shared / exclusive / auxiliary), FLOPs.
std::string mtsSummary(const zoo::MtsManifest& manifest);

}  // namespace zp::mts
