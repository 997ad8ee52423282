// features.csv, its reader and writer: per executed node of every subgraph,
// the placement features of SparOA (§2.1, §3.1), measured by zoo-profile on
// the first host configuration:
//   task,position,variant,node,op_type,kernel,flops,weight_sparsity,activation_sparsity,intensity,ms
// Sparsities are fractions in [0, 1]; flops, intensity (FLOPs per byte moved)
// and ms (median per-node time) are finite and non-negative.
// No stage reads it: per-operator placement (plan-solve --mode opplace) reads
// node_profile.csv instead, which profiles whole models under every processor.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "libplan/util/error.h"

namespace zp::artifacts {

inline constexpr std::string_view kFeaturesCsvHeader =
    "task,position,variant,node,op_type,kernel,flops,weight_sparsity,activation_sparsity,intensity,ms";

struct FeatureRow {
  std::string task;
  int position = 0;
  std::string variant, node, opType, kernel;
  double flops = 0, weightSparsity = 0, activationSparsity = 0, intensity = 0, ms = 0;
  bool operator==(const FeatureRow&) const = default;
};

// Errors name the file and line: "features.csv:4: column 'ms': '-1' is not a number in [0, 10000000]".
Expected<std::vector<FeatureRow>> parseFeaturesCsv(std::string_view text, const std::string& label);
Expected<std::vector<FeatureRow>> readFeaturesCsv(const std::filesystem::path& path);
std::string formatFeaturesCsv(const std::vector<FeatureRow>& rows);

}  // namespace zp::artifacts
