// The measured cold run in plan-run's JSON report (`plan-run MODEL --cold --json`,
// its `cold_plan_run` section; libplan/profile/cold_run.h):
//   {"configuration": "K+C+P", "cores": 2, "run_end_ms": 41.2, "nodes": [
//     {"step": 0, "node": "/conv1/Conv", "kernel": "im2col", "gemm": "blis", "weights": "cache",
//      "read": {"start_ms": 1.2, "end_ms": 1.9}, "transform": null,
//      "execute": {"start_ms": 2.0, "end_ms": 4.1}}, ...]}
// plan-run adds scheduling details to these objects (cores, steals, the plan's
// predicted spans); the reader ignores them, and a span with "done": false (its task
// failed) counts as absent.
#pragma once
#include <filesystem>
#include <string>

#include "libplan/profile/cold_run.h"
#include "libplan/util/error.h"
#include "libplan/util/json.h"

namespace zp::artifacts {

// `doc`: plan-run's whole report, or its `cold_plan_run` section.
Expected<profile::MeasuredColdRun> parseColdRunReport(const Json& doc, const std::string& label);
Expected<profile::MeasuredColdRun> readColdRunReport(const std::filesystem::path& path);
// The `cold_plan_run` section's measured part (the inverse of parseColdRunReport).
Json coldRunReportJson(const profile::MeasuredColdRun& run);

}  // namespace zp::artifacts
