// zoo-profile's report.json records the content hash of every file written
// beside it (profile.csv, accuracy.csv, ...) and of the stitch.json it profiled;
// a reader checks the files it reads against that record, so files of two runs
// are never used together.
#pragma once
#include <filesystem>
#include <optional>
#include <string_view>

#include "libplan/util/error.h"
#include "libplan/util/json.h"

namespace zp::artifacts {

// report.json: {file name: sha256} of the files beside it.
inline constexpr const char* kReportFilesKey = "files_sha256";
// report.json: $.inputs.stitch_json_sha256, the stitch.json profiled.
inline constexpr const char* kReportStitchKey = "stitch_json_sha256";
// report.json: $.inputs.groups_mts_json_sha256, the stitch directory's groups/mts.json profiled (when it has one).
inline constexpr const char* kReportGroupsKey = "groups_mts_json_sha256";

// `bytes`, read from `file` beside `reportPath`, is the file the report recorded.
Status checkRecordedFile(const Json& report, const std::filesystem::path& reportPath,
                         const std::filesystem::path& file, std::string_view bytes);

// `bytes`, read from the stitch directory's stitch.json, is the one the report profiled.
Status checkRecordedStitch(const Json& report, const std::filesystem::path& reportPath,
                           const std::filesystem::path& stitchJson, std::string_view bytes);

// The stitch directory's groups/mts.json (`bytes`; none: it has none) is the
// one the report profiled.
Status checkRecordedGroups(const Json& report, const std::filesystem::path& reportPath,
                           const std::filesystem::path& mtsJson, const std::optional<std::string>& bytes);

}  // namespace zp::artifacts
