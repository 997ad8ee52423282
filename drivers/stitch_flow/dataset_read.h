// A task's dataset as zoo.json names it: .npy files of samples (first axis =
// samples) and of labels, read into batch-1 tensors for the measure pass.
#pragma once
#include <cstddef>
#include <filesystem>
#include <vector>

#include "libplan/runtime/tensor.h"
#include "libplan/util/error.h"
#include "passes/measure/accuracy_eval.h"

namespace zp::drivers {

// Reads INPUTS.npy and LABELS.npy, reshaping each sample to `sampleShape` (the
// model input, batch 1; a symbolic leading dim, -1, counts as 1). The files
// may hold any number of samples along their first axis, each with the values
// of one sample in any shape. `limit` 0 = all. Errors name the file.
Expected<measure::Dataset> readDataset(const std::filesystem::path& inputs, const std::filesystem::path& labels,
                                       const std::vector<int64_t>& sampleShape, size_t limit = 0);
// Inputs only (calibration sets have no labels).
Expected<std::vector<runtime::Tensor>> readSamples(const std::filesystem::path& inputs,
                                                   const std::vector<int64_t>& sampleShape, size_t limit = 0);

}  // namespace zp::drivers
