// A product with a constant right-hand side through oneDNN's matmul primitive, its
// weights reordered once into the primitive's own blocked layout. dnnl_sgemm packs
// the whole right-hand side on every call: on ViT's and ConvNeXt's MLP products
// (a few hundred rows) that is 5-30% of the call. The columns are cut into panels of
// at most kMatmulPanel, each its own primitive: the panels are the unit of work for
// the runtime's threads, fixed by N alone, so the result does not depend on the
// thread count (the same holds for the blocks of rows); and one primitive over all of ConvNeXt's first-stage columns (3136
// rows, 384 columns) ran 1.4x slower than panels of 192.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "libplan/runtime/kernels/kernels.h"

namespace zp::runtime {

constexpr int64_t kMatmulPanel = 192;
// Rows are cut into blocks of at most this many, so that a product of a few wide
// columns (ConvNeXt's 3136 x 96 outputs) still gives every thread work.
constexpr int64_t kMatmulRowBlock = 256;

class MatmulPanels {
 public:
  // For x of `rows` rows and w [N, K] row-major (the weights as B^T); null when oneDNN
  // has no optimised implementation for it on this CPU. w is read only here.
  static std::unique_ptr<MatmulPanels> make(const float* w, int64_t K, int64_t N, int64_t rows);
  ~MatmulPanels();

  int64_t rows() const { return rows_; }
  size_t bytes() const;  // the reordered weights
  // y[rows, N] = x[rows, K] * w^T + bias, then the epilogue, per panel on `threads`.
  void run(const float* x, const float* bias, const Epilogue& e, float* y, int threads) const;

 private:
  struct Panel;
  struct RowBlock {
    int64_t r0 = 0, height = 0;
    int height_index = 0;  // into heights_
  };
  MatmulPanels() = default;
  void cutRows();
  bool addPanel(const float* w, int64_t n0, int64_t width);

  int64_t rows_ = 0, K_ = 0, N_ = 0;
  std::vector<int64_t> heights_;  // the distinct heights of rowBlocks_
  std::vector<RowBlock> rowBlocks_;
  std::vector<std::unique_ptr<Panel>> panels_;
};

}  // namespace zp::runtime
