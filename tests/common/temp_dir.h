// A fresh temporary directory private to the caller (mkdtemp): tests run in
// parallel under ctest, and a fixed name would be shared between them.
#pragma once
#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace zp::testing {

inline std::filesystem::path uniqueTempDir(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / ("zp_" + prefix + "_XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
  return pattern;
}

}  // namespace zp::testing
