// float16 and bfloat16 for ops written for float32: a wrapper that widens half
// inputs to float32, runs the op, and narrows its float32 outputs back to the half
// type (rounding to nearest even). Inputs of other types pass through untouched.
#pragma once
#include <memory>

#include "libplan/runtime/ops/op.h"

namespace zp::runtime::detail {

std::unique_ptr<Op> computeHalvesInFloat(std::unique_ptr<Op> inner);

}  // namespace zp::runtime::detail
