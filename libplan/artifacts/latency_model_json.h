// latency_model.json, its reader and writer: the calibrated latency model of
// every task, written by zoo-profile and read by plan-solve (which plans with
// exactly the model zoo-profile validated, and never rebuilds it).
//
// {"schema_version": 1,
//  "tasks": [{"name": "digits", "positions": 3, "boundary_bytes": [4096, 2048],
//             "subgraph_ms": [{"position": 0, "variant": "dense", "processor": "cpu", "ms": 0.0123}, ...],
//             "overhead_ms": {"cpu": 0.004, ...},
//             "transitions": [{"from": "cpu", "to": "gpu", "fixed_ms": 0, "ms_per_byte": 1.2e-07}, ...]}]}
//
// Numbers are written in full (canonicalJsonExact), so the reader computes with
// the doubles the writer had.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "libplan/estimate/latency_model.h"
#include "libplan/util/error.h"

namespace zp::artifacts {

std::string formatLatencyModel(const std::vector<estimate::TaskLatencyModel>& tasks);
// Errors read "<label>: $.tasks[0].subgraph_ms[3].ms: <problem>".
Expected<std::vector<estimate::TaskLatencyModel>> parseLatencyModel(std::string_view text, const std::string& label);
Expected<std::vector<estimate::TaskLatencyModel>> readLatencyModel(const std::filesystem::path& path);

}  // namespace zp::artifacts
