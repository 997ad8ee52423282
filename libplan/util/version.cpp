#include "libplan/util/version.h"

namespace zp {

const std::string& zooplanVersion() {
  static const std::string version = ZOOPLAN_VERSION;  // set for this file only, in libplan/util/CMakeLists.txt
  return version;
}

}  // namespace zp
