// Einsum: an equation ("bhqd,bhkd->bhqk", "...ii->...i", "ij->") parsed against
// the operands' shapes into labelled dims, evaluated either as batched GEMMs (two
// float32 operands, every label in both operands' batch, row, column or contracted
// dims) or by the naive definition (any equation: diagonals, sums over one
// operand's labels, three or more operands, float64 and integers).
#pragma once
#include <string>
#include <vector>

#include "libplan/runtime/kernels/gemm.h"
#include "libplan/runtime/tensor.h"
#include "libplan/util/error.h"

namespace zp::runtime::detail {

struct EinsumPlan {
  std::string equation;
  int labels = 0;                        // distinct labels, output ones first
  int outputLabels = 0;                  // labels [0, outputLabels) are the output's, in its order
  std::vector<int64_t> size;             // per label
  std::vector<std::vector<int>> operand; // per operand, the label of each dim
  Shape outputShape;
};

// An error naming the equation when it is malformed or does not fit the shapes.
Expected<EinsumPlan> planEinsum(const std::string& equation, const std::vector<Shape>& shapes);

// Both write y (outputShape, the operands' type); the GEMM form needs canUseGemm.
Status einsumNaive(const EinsumPlan& p, const std::vector<const Tensor*>& in, Tensor& y);
bool canUseGemm(const EinsumPlan& p, const std::vector<const Tensor*>& in);
void einsumGemm(const EinsumPlan& p, const std::vector<const Tensor*>& in, Tensor& y, int threads, GemmLibrary gemm);

}  // namespace zp::runtime::detail
