// Helpers shared by the profile tests.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <string>

namespace zp::profile::testing {

// A fresh scratch directory private to this process: ctest runs tests in parallel
// processes, so a fixed name would be shared between them.
inline std::filesystem::path scratchDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace zp::profile::testing
