// The factory of every operator of op_list.def: make<OpType>(BuildContext).
#pragma once
#include <memory>

#include "libplan/runtime/ops/op.h"

namespace zp::runtime::detail {

#define ZP_OP(type, family) Expected<std::unique_ptr<Op>> make##type(const BuildContext& bc);
#include "libplan/runtime/ops/op_list.def"

}  // namespace zp::runtime::detail
