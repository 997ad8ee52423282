#include "tests/onnx_conformance/tolerance.h"

namespace zp::conformance {

Tolerance toleranceFor(const std::string& caseName) {
  Tolerance t;
  (void)caseName;
  return t;
}

}  // namespace zp::conformance
