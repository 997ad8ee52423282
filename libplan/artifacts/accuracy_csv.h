// accuracy.csv, its reader and writer: one row per valid stitched variant,
//   task,combination,kind,measured_accuracy,predicted_accuracy,in_training_sample
// kind is "original" or "stitched"; measured_accuracy is empty when the variant
// was not measured; accuracies are fractions in [0, 1]; in_training_sample 0 or 1.
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "libplan/util/error.h"

namespace zp::artifacts {

inline constexpr std::string_view kAccuracyCsvHeader =
    "task,combination,kind,measured_accuracy,predicted_accuracy,in_training_sample";

struct AccuracyRow {
  bool original = false;
  std::optional<double> measured;
  double predicted = 0;
  bool inTrainingSample = false;
  bool operator==(const AccuracyRow&) const = default;
};

// One line of the file: a row with its key, in the order zoo-profile writes them
// (tasks in manifest order, combinations in enumeration order).
struct AccuracyCsvRow {
  std::string task, combination;
  AccuracyRow row;
  bool operator==(const AccuracyCsvRow&) const = default;
};

// (task, combination) -> row. Errors name the file and line:
// "accuracy.csv:3: column 'measured_accuracy': 'nan' is not a number in [0, 1]".
using AccuracyTable = std::map<std::pair<std::string, std::string>, AccuracyRow>;
Expected<AccuracyTable> parseAccuracyCsv(std::string_view text, const std::string& label);
// The rows in file order (the same checks).
Expected<std::vector<AccuracyCsvRow>> parseAccuracyCsvRows(std::string_view text, const std::string& label);
Expected<AccuracyTable> readAccuracyCsv(const std::filesystem::path& path);

// The header and one line per row, in the given order: "digits,dense+u50,stitched,,0.9125,0".
std::string formatAccuracyCsv(const std::vector<AccuracyCsvRow>& rows);

}  // namespace zp::artifacts
