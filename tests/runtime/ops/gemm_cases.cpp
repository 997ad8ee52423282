// Gemm and MatMul: a constant matrix under every kernel policy, and products of
// two activations with broadcast batch dimensions.
#include "tests/runtime/ops/op_case.h"

namespace zp::runtime::testing {
namespace {

OpCase heavy(OpCase c) {
  c.tolerance = 1e-4;
  c.policies = everyForcedPolicy();
  return c;
}

}  // namespace

std::vector<OpCase> gemmCases() {
  return {
      heavy({"Gemm", "constant B transposed, bias", "y = Gemm <transB=1> (x, W, C)",
             {in("x", {3, 5}), init("W", {4, 5}), init("C", {4})}}),
      heavy({"Gemm", "alpha and beta", "y = Gemm <alpha=0.5, beta=2.0> (x, W, C)",
             {in("x", {3, 5}), init("W", {5, 4}), init("C", {1, 4})}}),
      heavy({"Gemm", "transposed A", "y = Gemm <transA=1, transB=1> (x, W)", {in("x", {5, 3}), init("W", {4, 5})}}),
      heavy({"Gemm", "C of the output's shape", "y = Gemm (x, W, C)", {in("x", {3, 5}), init("W", {5, 4}), in("C", {3, 4})}}),
      heavy({"Gemm", "C of one column", "y = Gemm <beta=0.5> (x, W, C)", {in("x", {3, 5}), init("W", {5, 4}), init("C", {3, 1})}}),
      heavy({"Gemm", "pruned B", "y = Gemm <transB=1> (x, W, C)",
             {in("x", {4, 32}), init("W", {16, 32}, Fill::Pruned), init("C", {16})}}),
      {"Gemm", "two activations", "y = Gemm <transA=1, transB=1, alpha=2.0> (a, b, C)",
       {in("a", {5, 3}), in("b", {4, 5}), in("C", {4})}},
      heavy({"MatMul", "constant B, batched A", "y = MatMul (x, W)", {in("x", {2, 3, 5}), init("W", {5, 4})}}),
      heavy({"MatMul", "constant B, vector A", "y = MatMul (x, W)", {in("x", {5}), init("W", {5, 4})}}),
      heavy({"MatMul", "pruned B", "y = MatMul (x, W)", {in("x", {3, 24}), init("W", {24, 8}, Fill::Pruned)}}),
      {"MatMul", "broadcast batches", "y = MatMul (a, b)", {in("a", {2, 1, 3, 4}), in("b", {3, 4, 5})}},
      {"MatMul", "vector times batch", "y = MatMul (a, b)", {in("a", {4}), in("b", {2, 4, 3})}},
      {"MatMul", "batch times vector", "y = MatMul (a, b)", {in("a", {2, 3, 4}), in("b", {4})}},
      {"MatMul", "float16 activations", "y = MatMul (a, b)",
       {in("a", {2, 3, 4}, Fill::Uniform, DType::F16), in("b", {4, 5}, Fill::Uniform, DType::F16)}, {"float16 y"}, 13, 2e-3},
  };
}

}  // namespace zp::runtime::testing
