// The concurrent flow's first step: workload.json and the files it names
// (contention CSV, group rows CSVs, ONNX models with their profiles, grouped
// into layer groups by passes/grouping) -> the scheduling problem.
#pragma once
#include <filesystem>

#include "libplan/artifacts/workload_json.h"
#include "libplan/util/error.h"
#include "passes/schedule/workload.h"

namespace zp::drivers {

// The ONNX file of a model DNN: its `model`, or its zoo variant's file.
Expected<std::filesystem::path> dnnModelFile(const artifacts::WorkloadDnn& d, const std::string& label);

// Errors are one line naming the file and the JSON path of the DNN they concern.
Expected<schedule::Workload> loadWorkload(const std::filesystem::path& path);
// The same from a parsed workload.json (`file`: where it was read from; errors name it).
Expected<schedule::Workload> resolveWorkload(const artifacts::WorkloadSpec& spec, const std::filesystem::path& file);

}  // namespace zp::drivers
