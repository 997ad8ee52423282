// Positive infinity as a double: "no bound", "infeasible", "not yet found".
#pragma once
#include <limits>

namespace zp {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace zp
