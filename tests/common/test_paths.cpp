#include "tests/common/test_paths.h"

namespace zp::testing {

const char* const kSourceDir = ZP_SOURCE_DIR;
const char* const kBinaryDir = ZP_BINARY_DIR;
const char* const kNodeExecutable = ZP_NODE_EXECUTABLE;

}  // namespace zp::testing
