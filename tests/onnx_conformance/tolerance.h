// How close an output of an ONNX node test case must be to the expected one.
#pragma once
#include <string>

namespace zp::conformance {

// |ours - expected| <= atol + rtol * |expected|, element by element.
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

// ONNX's own backend test runner uses rtol 1e-3, atol 1e-7 for every case; the
// runtime computes in float32 what the reference computes in float64 or with other
// summation orders, so a case whose outputs cancel to near zero may need more atol.
Tolerance toleranceFor(const std::string& caseName);

}  // namespace zp::conformance
