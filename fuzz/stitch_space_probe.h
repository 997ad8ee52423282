// Reads a profile directory as plan-solve does (drivers::readStitchSpace) and,
// when it is accepted, asks the space what plan-solve's optimizer asks: every
// candidate's latency with all positions on each processor, by name and
// through the dense tables, which must agree.
#pragma once
#include <filesystem>

namespace zp::fuzz {

void probeStitchSpace(const std::filesystem::path& profileDir);

}  // namespace zp::fuzz
