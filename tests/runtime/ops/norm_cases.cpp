// BatchNormalization (inference) and LayerNormalization.
#include "tests/runtime/ops/op_case.h"

namespace zp::runtime::testing {

std::vector<OpCase> normCases() {
  std::vector<OpCase> c;
  c.push_back({"BatchNormalization", "NCHW", "y = BatchNormalization <epsilon=0.001> (x, s, b, m, v)",
               {in("x", {2, 3, 4, 5}), init("s", {3}, Fill::Positive), init("b", {3}), init("m", {3}),
                init("v", {3}, Fill::Positive)}});
  c.push_back({"BatchNormalization", "NC, parameters as inputs", "y = BatchNormalization (x, s, b, m, v)",
               {in("x", {4, 6}), in("s", {6}, Fill::Positive), in("b", {6}), in("m", {6}), in("v", {6}, Fill::Positive)}});
  c.push_back({"LayerNormalization", "last axis", "y = LayerNormalization (x, g, b)",
               {in("x", {2, 3, 8}, Fill::Wide), init("g", {8}, Fill::Positive), init("b", {8})}, {"float y"}, 17});
  c.push_back({"LayerNormalization", "from axis 1, no bias", "y = LayerNormalization <axis=1, epsilon=0.01> (x, g)",
               {in("x", {3, 2, 5}), in("g", {2, 5})}, {"float y"}, 17});
  return c;
}

}  // namespace zp::runtime::testing
