// Conv over 3 spatial dims (input [N, C, D, H, W]), with constant or runtime weights
// and a fused BatchNormalization and activation; the Conv factory hands these nodes
// here.
#pragma once
#include <memory>

#include "libplan/runtime/ops/op.h"

namespace zp::runtime::detail {

// True when the node's weights (or its input) have 3 spatial dims.
bool isVolumetricConv(const BuildContext& bc);
Expected<std::unique_ptr<Op>> makeVolumetricConv(const BuildContext& bc);

}  // namespace zp::runtime::detail
