// Pooling in general: 1 to 3 spatial dims, every element type MaxPool takes, and
// MaxPool's Indices output. pool.cpp keeps its fast 1-D/2-D float32 path and hands
// everything else here.
#pragma once
#include <memory>

#include "libplan/runtime/ops/op.h"

namespace zp::runtime::detail {

Expected<std::unique_ptr<Op>> makeGeneralPool(const BuildContext& bc, bool isMax);

}  // namespace zp::runtime::detail
