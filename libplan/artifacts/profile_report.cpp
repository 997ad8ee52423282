#include "libplan/artifacts/profile_report.h"

#include "libplan/util/hash.h"

namespace zp::artifacts {
namespace fs = std::filesystem;

Status checkRecordedFile(const Json& report, const fs::path& reportPath, const fs::path& file, std::string_view bytes) {
  const std::string name = file.filename().string();
  const Json* files = report.is_object() && report.contains(kReportFilesKey) ? &report[kReportFilesKey] : nullptr;
  if (!files || !files->is_object())
    return makeError("{}: records no hashes of the files beside it (written by an older zoo-profile?); run zoo-profile again",
                     reportPath.string());
  if (!files->contains(name) || !(*files)[name].is_string())
    return makeError("{}: not recorded in {} (written by another run?)", file.string(), reportPath.string());
  if ((*files)[name].get<std::string>() != sha256Hex(bytes))
    return makeError("{}: does not match the hash {} recorded (written by another run?)", file.string(),
                     reportPath.string());
  return {};
}

Status checkRecordedStitch(const Json& report, const fs::path& reportPath, const fs::path& stitchJson,
                           std::string_view bytes) {
  const Json* inputs = report.is_object() && report.contains("inputs") ? &report["inputs"] : nullptr;
  if (!inputs || !inputs->is_object() || !inputs->contains(kReportStitchKey) || !(*inputs)[kReportStitchKey].is_string())
    return makeError("{}: records no hash of the stitch.json it profiled; run zoo-profile again", reportPath.string());
  if ((*inputs)[kReportStitchKey].get<std::string>() != sha256Hex(bytes))
    return makeError("{}: does not match the hash {} recorded (zoo-stitch ran again since zoo-profile?)",
                     stitchJson.string(), reportPath.string());
  return {};
}

Status checkRecordedGroups(const Json& report, const fs::path& reportPath, const fs::path& mtsJson,
                           const std::optional<std::string>& bytes) {
  const Json* inputs = report.is_object() && report.contains("inputs") ? &report["inputs"] : nullptr;
  const Json* recorded = inputs && inputs->is_object() && inputs->contains(kReportGroupsKey) ? &(*inputs)[kReportGroupsKey] : nullptr;
  if (!bytes && !recorded) return {};
  if (!bytes)
    return makeError("{}: profiled {}, which is gone (zoo-stitch ran again since zoo-profile?); run zoo-profile again",
                     reportPath.string(), mtsJson.string());
  if (!recorded || !recorded->is_string())
    return makeError("{}: was not profiled (the profile in {} predates it); run zoo-profile again", mtsJson.string(),
                     reportPath.string());
  if (recorded->get<std::string>() != sha256Hex(*bytes))
    return makeError("{}: does not match the hash {} recorded (zoo-stitch ran again since zoo-profile?)",
                     mtsJson.string(), reportPath.string());
  return {};
}

}  // namespace zp::artifacts
