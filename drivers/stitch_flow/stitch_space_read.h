// The stitch flow's plan-solve input: reads PROFILE_DIR/{report.json,
// profile.csv, accuracy.csv, latency_model.json} — each checked against the
// hash report.json recorded — and the stitch directory report.json names,
// into the space the selection pass chooses from.
#pragma once
#include <filesystem>

#include "libplan/util/error.h"
#include "passes/select/stitch_space.h"

namespace zp::drivers {

Expected<select::StitchSpace> readStitchSpace(const std::filesystem::path& profileDir);

}  // namespace zp::drivers
