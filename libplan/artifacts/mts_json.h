// mts.json: what zoo-mts wrote for each stitched group (file, hash, members'
// inputs and outputs in the stitched graph, byte and FLOP counts).
#pragma once
#include <filesystem>
#include <string>

#include "libplan/util/error.h"
#include "libplan/util/json.h"
#include "libplan/zoo/mts_manifest.h"

namespace zp::artifacts {

Json mtsManifestToJson(const zoo::MtsManifest& m);
Expected<zoo::MtsManifest> parseMtsManifest(const std::string& text, const std::string& label);
Expected<zoo::MtsManifest> loadMtsManifest(const std::filesystem::path& path);

}  // namespace zp::artifacts
