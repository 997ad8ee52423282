// BatchNormalization (inference), LayerNormalization, InstanceNormalization, LRN and
// MeanVarianceNormalization.
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
  c.push_back({"LayerNormalization", "Mean and InvStdDev outputs", "y, mean, inv = LayerNormalization <axis=-2> (x, g, b)",
               {in("x", {2, 3, 4}, Fill::Wide), in("g", {3, 4}), in("b", {3, 4})},
               {"float y", "float mean", "float inv"}, 17});
  c.push_back({"LayerNormalization", "double", "y = LayerNormalization (x, g, b)",
               {in("x", {4, 6}, Fill::Wide, DType::F64), in("g", {6}, Fill::Uniform, DType::F64), in("b", {6}, Fill::Uniform, DType::F64)},
               {"double y"}, 17});
  c.push_back({"InstanceNormalization", "NCHW", "y = InstanceNormalization (x, s, b)",
               {in("x", {2, 3, 4, 5}, Fill::Wide), init("s", {3}), init("b", {3})}});
  c.push_back({"InstanceNormalization", "NCL, epsilon", "y = InstanceNormalization <epsilon=0.01> (x, s, b)",
               {in("x", {1, 4, 7}), in("s", {4}), in("b", {4})}});
  c.push_back({"LRN", "size 3", "y = LRN <size=3> (x)", {in("x", {2, 5, 3, 3}, Fill::Wide)}});
  c.push_back({"LRN", "size 5, attributes", "y = LRN <size=5, alpha=0.001, beta=0.5, bias=2.0> (x)", {in("x", {1, 6, 4, 2})}});
  c.push_back({"MeanVarianceNormalization", "default axes", "y = MeanVarianceNormalization (x)", {in("x", {2, 3, 4, 5}, Fill::Wide)}});
  c.push_back({"MeanVarianceNormalization", "last axes", "y = MeanVarianceNormalization <axes=[1,2]> (x)", {in("x", {3, 4, 5})}});
  return c;
}

}  // namespace zp::runtime::testing
