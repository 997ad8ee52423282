#include "libplan/runtime/kernels/matmul_panels.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstring>

#include "libplan/runtime/kernels/dnnl_context.h"
#include "libplan/runtime/kernels/gemm.h"
#include "libplan/runtime/kernels/internal.h"
#include "libplan/runtime/kernels/parallel.h"

namespace zp::runtime {

namespace {

using dt = dnnl::memory::data_type;

}  // namespace

// One panel's columns: its weights, and a primitive per row-block height.
struct MatmulPanels::Panel {
  int64_t n0 = 0, width = 0;
  dnnl::memory weights;  // in the primitives' layout
  std::vector<dnnl::matmul> primitives;  // per entry of heights_
  std::vector<dnnl::memory::desc> scratchpads;  // theirs
};

MatmulPanels::~MatmulPanels() = default;

std::unique_ptr<MatmulPanels> MatmulPanels::make(const float* w, int64_t K, int64_t N, int64_t rows) {
  if (rows <= 0 || K <= 0 || N <= 0) return nullptr;
  // A primitive keeps the thread count it was created under: one, as every product
  // here runs on one of the runtime's threads (an OpenMP team would spin on the
  // other core after each call).
  useSingleThreadedGemm();
  std::unique_ptr<MatmulPanels> mp(new MatmulPanels());
  mp->rows_ = rows;
  mp->K_ = K;
  mp->N_ = N;
  mp->cutRows();
  const int64_t count = (N + kMatmulPanel - 1) / kMatmulPanel;
  // Equal panels (a multiple of 16 wide) rather than a narrow last one.
  const int64_t width = ((N + count - 1) / count + 15) / 16 * 16;
  try {
    for (int64_t n0 = 0; n0 < N; n0 += width)
      if (!mp->addPanel(w, n0, std::min(width, N - n0))) return nullptr;
    dnnlThreadStream().wait();
  } catch (const dnnl::error&) {
    return nullptr;  // out of memory, or no implementation: the product stays on sgemm
  }
  return mp;
}

// Blocks of rows as equal as whole rows allow: at most two heights.
void MatmulPanels::cutRows() {
  const int64_t blocks = (rows_ + kMatmulRowBlock - 1) / kMatmulRowBlock;
  const int64_t base = rows_ / blocks, taller = rows_ % blocks;
  for (int64_t b = 0, r0 = 0; b < blocks; ++b) {
    const int64_t h = base + (b < taller ? 1 : 0);
    const auto it = std::find(heights_.begin(), heights_.end(), h);
    rowBlocks_.push_back({r0, h, static_cast<int>(it - heights_.begin())});
    if (it == heights_.end()) heights_.push_back(h);
    r0 += h;
  }
}

bool MatmulPanels::addPanel(const float* w, int64_t n0, int64_t width) {
  auto p = std::make_unique<Panel>();
  p->n0 = n0;
  p->width = width;
  const dnnl::memory::desc anyWeights({K_, width}, dt::f32, dnnl::memory::format_tag::any);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  for (int64_t h : heights_) {
    const dnnl::memory::desc src({h, K_}, dt::f32, dnnl::memory::dims{K_, 1});
    const dnnl::memory::desc dst({h, width}, dt::f32, dnnl::memory::dims{N_, 1});
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, anyWeights, dst), attr, dnnlEngine());
    // A reference implementation is far slower than the packed sgemm.
    if (std::strncmp(pd.impl_info_str(), "ref", 3) == 0) return false;
    // w's rows n0.. are this panel's columns: [K, width] with strides (1, K).
    const dnnl::memory::desc given({K_, width}, dt::f32, dnnl::memory::dims{1, K_});
    if (!reorderWeightsOnce(given, w + n0 * K_, pd.weights_desc(), &p->weights))
      return false;  // the heights would want the weights in two layouts
    p->primitives.push_back(dnnl::matmul(pd));
    p->scratchpads.push_back(pd.scratchpad_desc());
  }
  panels_.push_back(std::move(p));
  return true;
}

size_t MatmulPanels::bytes() const {
  size_t b = 0;
  for (const auto& p : panels_) b += p->weights.get_desc().get_size();
  return b;
}

void MatmulPanels::run(const float* x, const float* bias, const Epilogue& e, float* y, int threads) const {
  const int64_t blocks = static_cast<int64_t>(rowBlocks_.size());
  const int64_t tasks = static_cast<int64_t>(panels_.size()) * blocks;
  parallelForEach(std::min<int64_t>(threads, tasks), tasks, [&](int64_t t, int) {
    const Panel& p = *panels_[static_cast<size_t>(t / blocks)];
    const RowBlock& rb = rowBlocks_[static_cast<size_t>(t % blocks)];
    const dnnl::memory::desc src({rb.height, K_}, dt::f32, dnnl::memory::dims{K_, 1});
    const dnnl::memory::desc dst({rb.height, p.width}, dt::f32, dnnl::memory::dims{N_, 1});
    dnnl::memory srcMem(src, dnnlEngine(), const_cast<float*>(x + rb.r0 * K_));
    dnnl::memory dstMem(dst, dnnlEngine(), y + rb.r0 * N_ + p.n0);
    const auto h = static_cast<size_t>(rb.height_index);
    executeOnThisThread(p.primitives[h], {{DNNL_ARG_SRC, srcMem}, {DNNL_ARG_WEIGHTS, p.weights}, {DNNL_ARG_DST, dstMem}},
                        p.scratchpads[h]);
    for (int64_t r = rb.r0; r < rb.r0 + rb.height; ++r) biasAndActivate(y + r * N_ + p.n0, bias + p.n0, p.width, e);
  }, 1);
}

}  // namespace zp::runtime
