// A planted stitch space for the choice tests: one task "digits" of two
// positions, variants "dense" and "u90", on processors cpu and gpu (the same
// latencies on both, hand-overs free). Combination k: position 0's variant is
// k / 2, position 1's k % 2 (0 dense, 1 u90).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "passes/select/select.h"

namespace zp::select::testing {

// accuracy[k] = {predicted, measured (-1: not measured)}; ms[position][variant];
// bytes[variant]: each subgraph's memory (empty: 1000 each).
// Adds `ts` (two positions, its latencies set) to `sp` as on processors cpu and
// gpu with free hand-overs of a 1 KB boundary.
void addCpuGpuTask(StitchSpace& sp, TaskSpace ts);

// A task of two positions with one variant, "dense", on cpu and gpu: each
// position `ms` and `bytes`, accuracy `accuracy` (measured). Its stitch entry is
// added to sp.manifest (reserve room first: the task points into it).
TaskSpace plainTask(StitchSpace& sp, const std::string& name, double ms, int64_t bytes, double accuracy);

StitchSpace plantedSpace(const std::vector<std::pair<double, double>>& accuracy,
                         const std::vector<std::vector<double>>& ms, const std::vector<int64_t>& bytes = {});

}  // namespace zp::select::testing
