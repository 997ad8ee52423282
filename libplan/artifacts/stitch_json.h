// stitch.json: its reader (types, ranges and shape checked before anything is
// enumerated) and its writer.
#pragma once
#include <filesystem>
#include <string>

#include "libplan/util/error.h"
#include "libplan/util/json.h"
#include "libplan/zoo/stitch_manifest.h"

namespace zp::artifacts {

Json toJson(const zoo::StitchManifest& m);
Expected<zoo::StitchManifest> stitchManifestFromJson(const Json& j, const std::string& label);
// DIR/stitch.json.
Expected<zoo::StitchManifest> loadStitchManifest(const std::filesystem::path& dir);
Status writeStitchManifest(const zoo::StitchManifest& m, const std::filesystem::path& dir);

}  // namespace zp::artifacts
