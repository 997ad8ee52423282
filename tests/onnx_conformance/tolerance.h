// How close an output of an ONNX node test case must be to the expected one.
#pragma once
#include <string>

#include "libplan/runtime/tensor.h"

namespace zp::conformance {

// |ours - expected| <= atol + rtol * |expected|, element by element.
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

// The tolerance for output `dtype` of case `caseName`.
Tolerance toleranceFor(const std::string& caseName, runtime::DType dtype);

}  // namespace zp::conformance
