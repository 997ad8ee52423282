// Helpers shared by the profile tests.
#pragma once
#include "tests/common/temp_dir.h"
#include "tests/common/test_paths.h"
#include <unistd.h>

#include <filesystem>
#include <string>

namespace zp::profile::testing {

// A fresh scratch directory private to this process: ctest runs tests in parallel
// processes, so a fixed name would be shared between them.
inline std::filesystem::path scratchDir(const std::string& name) {
  return zp::testing::uniqueTempDir(name);
}

// A file under the checkout's testdata/.
inline std::filesystem::path data(const std::string& rel) {
  return std::filesystem::path(zp::testing::kSourceDir) / "testdata" / rel;
}

}  // namespace zp::profile::testing
