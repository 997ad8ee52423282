// The zooplan version (project() in CMakeLists.txt), recorded in every plan,
// manifest and report the tools write.
#pragma once
#include <string>

namespace zp {

const std::string& zooplanVersion();

}  // namespace zp
