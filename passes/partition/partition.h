// The partition pass: align a task's variants, find the cut points common to
// all of them, and choose where to cut (FLOPs-balanced, or where the user says).
#pragma once
#include <string>
#include <vector>

#include "libplan/graph/analysis.h"
#include "libplan/util/error.h"
#include "passes/partition/cut_points.h"

namespace zp::partition {

struct VariantGraph {
  std::string id;
  const graph::GraphView* view;
};

// A cut present in every variant: at the same main position, with each
// variant's own crossing tensor.
struct CommonCut {
  int after = 0;
  std::vector<CutPoint> perVariant;  // indexed like the variants
};

struct Alignment {
  std::vector<MainSequence> sequences;  // indexed like the variants
  std::vector<CommonCut> cuts;
};

// Aligns variants position by position over their main sequences: nodes match
// by name, or, where names differ, by op type (Q/DQ nodes are transparent).
// Fails naming the first node where the variants diverge.
Expected<Alignment> alignVariants(const std::vector<VariantGraph>& variants, const std::string& task);

struct PartitionParams {
  int subgraphs = 0;                    // S; 0 means "use default" (callers set it)
  std::vector<std::string> cutTensors;  // explicit cuts, named by the reference variant's tensors
};

struct Partition {
  std::vector<int> cuts;            // indices into Alignment::cuts, increasing
  std::vector<double> partFlops;    // reference variant's FLOPs per part
};

// FLOPs of each main position of a variant (its Q/DQ nodes included).
std::vector<double> flopsPerPosition(const graph::GraphView& view, const MainSequence& seq);

// With cutTensors: those cuts. Otherwise the S-1 common cuts minimising the
// largest part's FLOPs in the reference variant (exact DP), ties broken by the
// smallest sum of squared part FLOPs (exact DP under the optimal maximum).
Expected<Partition> choosePartition(const Alignment& alignment, const std::vector<VariantGraph>& variants,
                                    size_t reference, const PartitionParams& params, const std::string& task);

// The min-max / min-sum-of-squares split of `weights` at allowed boundaries;
// exposed for tests. `allowed[k]` says whether a cut may lie after item k.
// Returns the chosen `after` positions, or empty when parts > allowed cuts + 1.
std::vector<int> balancedSplit(const std::vector<double>& weights, const std::vector<int>& allowedAfter, int parts);

}  // namespace zp::partition
