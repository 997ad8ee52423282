// Gemm and MatMul: with a constant 2-D right-hand side a heavy node (kernel choice,
// packed or cached weights, fused epilogue); otherwise a product of two activations
// with numpy broadcasting of the batch dimensions.
#include <chrono>

#include "libplan/runtime/kernels/matmul_panels.h"
#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/broadcast.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"
#include "libplan/runtime/kernel_policy.h"
#include "libplan/runtime/ops/heavy_weights.h"

namespace zp::runtime::detail {
namespace {

// Gemm / MatMul with a constant 2-D right-hand side.
class ConstGemmOp : public Op {
 public:
  // isGemm: ONNX Gemm (A 2-D, transA, alpha, beta, C); else MatMul (A of any rank >= 1).
  static Expected<std::unique_ptr<Op>> make(const BuildContext& bc, bool isGemm) {
    const auto& n = *bc.node;
    const Tensor* b = bc.constInputs[1];
    if (b->dtype != DType::F32 || b->rank() != 2) return makeError("constant weight must be a float32 matrix");
    auto op = std::make_unique<ConstGemmOp>();
    op->isGemm_ = isGemm;
    const bool transB = isGemm && attrInt(n, "transB", 0) != 0;
    op->transA_ = isGemm && attrInt(n, "transA", 0) != 0;
    const float alpha = isGemm ? attrFloat(n, "alpha", 1.0f) : 1.0f;
    const float beta = isGemm ? attrFloat(n, "beta", 1.0f) : 1.0f;
    op->K_ = transB ? b->shape[1] : b->shape[0];
    op->N_ = transB ? b->shape[0] : b->shape[1];
    const Tensor* c = nullptr;
    if (!isGemm && n.input_size() > 2 && !n.input(2).empty()) {
      // A fused MatMul's bias: a constant vector of N values.
      c = bc.constInputs[2];
      if (!c || c->dtype != DType::F32 || c->size() != op->N_) return makeError("a fused MatMul's bias must be a constant of {} floats", op->N_);
    }
    if (isGemm && n.input_size() > 2 && !n.input(2).empty()) {
      c = bc.constInputs[2];
      if (c && !(c->size() == op->N_ && (c->rank() == 1 || (c->rank() == 2 && c->shape[0] == 1)))) c = nullptr;
      if (!c) { op->runtimeC_ = true; op->beta_ = beta; }
      if (c && c->dtype != DType::F32) return makeError("Gemm C must be float32");
    }
    ZP_ASSIGN_OR_RETURN(FusedParts fused, fusedParts(bc));
    if (!fused.batchNorm.empty()) return makeError("BatchNormalization cannot be fused into a {}", n.op_type());
    op->epilogue_ = fused.epilogue;
    if (op->runtimeC_ && op->epilogue_.kind != Epilogue::None)
      return makeError("internal: activation fused into a Gemm with a runtime C");
    op->info_.sources = {n.input(1)};
    if (c) op->info_.sources.push_back(n.input(2));
    ZP_ASSIGN_OR_RETURN(op->info_.zeroFraction, weightZeroFraction(bc, *b));
    ZP_ASSIGN_OR_RETURN(GemmKernel k, chooseGemmKernel(*bc.policy, n.name(), op->info_.zeroFraction));
    op->kernel_ = k;
    op->info_.packed = &op->packed_;
    ZP_TRY(op->packWeights(bc, *b, c, transB, alpha, beta));
    if (k == GemmKernel::Blas && bc.reorderForOneDnn) op->reorderForOneDnn(bc);
    return std::unique_ptr<Op>(std::move(op));
  }

  Status packWeights(const BuildContext& bc, const Tensor& b, const Tensor* c, bool transB, float alpha, float beta) {
    const GemmKernel k = kernel_;
    if (takeFromCache(bc, gemmKernelName(k), b)) return weightsFromCache(bc, gemmKernelName(k), &packed_, &info_);
    const int64_t K = K_, N = N_;
    if (k != GemmKernel::Sparse && transB && alpha == 1.0f) {
      // [N, K] is the packed layout already: use the weights in place.
      auto t0 = std::chrono::steady_clock::now();
      rejectedEarlier(bc, &info_);
      std::vector<float> bv(static_cast<size_t>(N), 0.0f);
      if (c)
        for (int64_t i = 0; i < N; ++i) bv[static_cast<size_t>(i)] = beta * c->ptr<float>()[i];
      packed_.arrays.push_back(PackedWeights::make("bias", bv, DType::F32));
      packed_.arrays.push_back(viewOf("w", b));
      info_.kernel = gemmKernelName(k);
      info_.transform = "none";
      info_.transformMs = msSince(t0);
      return {};
    }
    uint32_t crc = crcOf(crcOf(0, &b), c);
    resolveWeights(bc, gemmKernelName(k), gemmTransformName(k), crc, [&]() {
      return transformGemmWeights(k, K, N, b.ptr<float>(), transB, c ? c->ptr<float>() : nullptr, alpha, beta);
    }, &packed_, &info_);
    return {};
  }

  // With the rows known at build, the [N, K] weights reordered for oneDNN's matmul
  // (matmul_panels.h); its time counts as the node's transform. One row stays on
  // the matrix-vector path, which reads the weights once.
  void reorderForOneDnn(const BuildContext& bc) {
    const auto& shape = bc.inputShapes.empty() ? std::nullopt : bc.inputShapes[0];
    if (!shape || shape->empty() || runtimeC_) return;
    for (int64_t d : *shape)
      if (d <= 0) return;
    if (isGemm_ && shape->size() != 2) return;
    const int64_t rows = isGemm_ ? (*shape)[transA_ ? 1 : 0] : numel(*shape) / K_;
    if (rows <= 1) return;
    auto t0 = std::chrono::steady_clock::now();
    panels_ = MatmulPanels::make(packed_.get("w").as<float>(), K_, N_, rows);
    info_.transformMs += msSince(t0);
    info_.libraryBytes = panels_ ? panels_->bytes() : 0;
  }

  Status run(ExecContext& ctx, const std::vector<const Tensor*>& in) override {
    const Tensor& a = *in[0];
    if (a.dtype != DType::F32) return makeError("input must be float32");
    const float* pa = a.ptr<float>();
    int64_t rows;
    Shape os;
    if (isGemm_) {
      if (a.rank() != 2) return makeError("Gemm input A must be 2-D, got {}", shapeString(a.shape));
      const int64_t ak = transA_ ? a.shape[0] : a.shape[1];
      if (ak != K_) return makeError("A {} does not match K={}", shapeString(a.shape), K_);
      rows = transA_ ? a.shape[1] : a.shape[0];
      if (transA_) {
        float* t = ctx.scratch->floats(static_cast<size_t>(a.size()), 2);
        for (int64_t i = 0; i < a.shape[0]; ++i)
          for (int64_t j = 0; j < a.shape[1]; ++j) t[j * a.shape[0] + i] = pa[i * a.shape[1] + j];
        pa = t;
      }
      os = {rows, N_};
    } else {
      if (a.rank() < 1 || a.shape.back() != K_) return makeError("A {} does not match K={}", shapeString(a.shape), K_);
      rows = a.size() / K_;
      os = a.shape;
      if (a.rank() == 1) os = {N_};
      else os.back() = N_;
    }
    Tensor& y = ctx.alloc(0, DType::F32, os);
    if (panels_ && ctx.gemm == GemmLibrary::OneDnn && rows == panels_->rows())
      panels_->run(pa, packed_.get("bias").as<float>(), epilogue_, y.ptr<float>(), ctx.threads);
    else
      runGemm(kernel_, K_, N_, packed_, pa, rows, y.ptr<float>(), epilogue_, ctx.threads, ctx.gemm);
    if (runtimeC_) {
      const Tensor& c = *in[2];
      ZP_ASSIGN_OR_RETURN(Shape bs, broadcastShapes({os, c.shape}));
      if (bs != os) return makeError("C {} does not broadcast to {}", shapeString(c.shape), shapeString(os));
      Broadcast br = makeBroadcast(os, {os, c.shape});
      float* py = y.ptr<float>();
      const float* pc = c.ptr<float>();
      const float beta = beta_;
      forEachRow(br, [&](int64_t o, const int64_t* offs, int64_t len, const int64_t* st) {
        for (int64_t i = 0; i < len; ++i) py[o + i] += beta * pc[offs[1] + i * st[1]];
      });
    }
    return {};
  }

  std::string kernel() const override { return gemmKernelName(kernel_); }
  const WeightInfo* weights() const override { return &info_; }

 private:
  bool isGemm_ = false, transA_ = false, runtimeC_ = false;
  float beta_ = 1.0f;
  int64_t K_ = 0, N_ = 0;
  Epilogue epilogue_;
  GemmKernel kernel_ = GemmKernel::Blas;
  PackedWeights packed_;
  std::unique_ptr<MatmulPanels> panels_;
  WeightInfo info_;
};

// MatMul of two activations with numpy broadcasting of batch dimensions.
Expected<Tensor*> matmulDynamic(ExecContext& ctx, const Tensor& A, const Tensor& B, float alpha, bool transA, bool transB) {
  if (A.dtype != DType::F32 || B.dtype != DType::F32) return makeError("MatMul supports float32 only");
  Shape as = A.shape, bs = B.shape;
  const bool aVec = as.size() == 1, bVec = bs.size() == 1;
  if (aVec) as.insert(as.begin(), 1);
  if (bVec) bs.push_back(1);
  const int64_t M = transA ? as[as.size() - 1] : as[as.size() - 2];
  const int64_t K = transA ? as[as.size() - 2] : as[as.size() - 1];
  const int64_t K2 = transB ? bs[bs.size() - 1] : bs[bs.size() - 2];
  const int64_t N = transB ? bs[bs.size() - 2] : bs[bs.size() - 1];
  if (K != K2) return makeError("MatMul shapes {} and {} do not match", shapeString(A.shape), shapeString(B.shape));
  Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  ZP_ASSIGN_OR_RETURN(Shape batch, broadcastShapes({ab, bb}));
  Shape os = batch;
  if (!aVec) os.push_back(M);
  if (!bVec) os.push_back(N);
  Tensor& y = ctx.alloc(0, DType::F32, os);
  const int64_t nb = numel(batch);
  Broadcast br = makeBroadcast(batch, {ab, bb});
  std::vector<std::pair<int64_t, int64_t>> offs;
  offs.reserve(static_cast<size_t>(nb));
  if (batch.empty()) offs.push_back({0, 0});
  else
    forEachRow(br, [&](int64_t, const int64_t* o, int64_t len, const int64_t* st) {
      for (int64_t i = 0; i < len; ++i) offs.push_back({o[0] + i * st[0], o[1] + i * st[1]});
    });
  const int64_t nBatch = static_cast<int64_t>(offs.size());
  const bool batchParallel = ctx.threads > 1 && nBatch >= ctx.threads;
  parallelForEach(batchParallel ? ctx.threads : 1, nBatch, [&](int64_t i, int) {
    const float* pa = A.ptr<float>() + offs[static_cast<size_t>(i)].first * M * K;
    const float* pb = B.ptr<float>() + offs[static_cast<size_t>(i)].second * K * N;
    sgemmRowMajor(transA, transB, M, N, K, alpha, pa, transA ? M : K, pb, transB ? K : N, 0.0f,
                  y.ptr<float>() + i * M * N, N, batchParallel ? 1 : ctx.threads, ctx.gemm);
  });
  return &y;
}

}  // namespace

Expected<std::unique_ptr<Op>> makeGemm(const BuildContext& bc) {
  if (bc.constInputs.size() > 1 && bc.constInputs[1] && bc.constInputs[1]->rank() == 2) return ConstGemmOp::make(bc, true);
  const auto& n = *bc.node;
  if (n.domain() == graph::kFusedDomain) return makeError("a fused Gemm needs a constant matrix B");
  const bool tA = attrInt(n, "transA", 0) != 0, tB = attrInt(n, "transB", 0) != 0;
  const float alpha = attrFloat(n, "alpha", 1.0f), beta = attrFloat(n, "beta", 1.0f);
  return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    if (in[0]->rank() != 2 || in[1]->rank() != 2) return makeError("Gemm inputs must be 2-D");
    ZP_ASSIGN_OR_RETURN(Tensor * y, matmulDynamic(ctx, *in[0], *in[1], alpha, tA, tB));
    if (in.size() > 2 && in[2]) {
      const Tensor& c = *in[2];
      ZP_ASSIGN_OR_RETURN(Shape bs, broadcastShapes({y->shape, c.shape}));
      if (bs != y->shape) return makeError("C {} does not broadcast to {}", shapeString(c.shape), shapeString(y->shape));
      Broadcast br = makeBroadcast(y->shape, {y->shape, c.shape});
      float* py = y->ptr<float>();
      forEachRow(br, [&](int64_t o, const int64_t* offs, int64_t len, const int64_t* st) {
        for (int64_t i = 0; i < len; ++i) py[o + i] += beta * c.ptr<float>()[offs[1] + i * st[1]];
      });
    }
    return {};
  });
}

Expected<std::unique_ptr<Op>> makeMatMul(const BuildContext& bc) {
  if (bc.constInputs.size() > 1 && bc.constInputs[1] && bc.constInputs[1]->rank() == 2 &&
      bc.constInputs[1]->dtype == DType::F32)
    return ConstGemmOp::make(bc, false);
  if (bc.node->domain() == graph::kFusedDomain) return makeError("a fused MatMul needs a constant float32 matrix B");
  return fnOp([](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    auto y = matmulDynamic(ctx, *in[0], *in[1], 1.0f, false, false);
    if (!y.ok()) return y.error();
    return {};
  });
}

}  // namespace zp::runtime::detail
