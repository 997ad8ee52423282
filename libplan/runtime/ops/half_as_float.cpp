#include "libplan/runtime/ops/half_as_float.h"

#include <cstring>
#include <map>
#include <optional>

namespace zp::runtime::detail {
namespace {

Tensor widen(const Tensor& t) {
  Tensor w = Tensor::empty(DType::F32, t.shape);
  const uint16_t* p = t.ptr<uint16_t>();
  for (int64_t i = 0; i < t.size(); ++i) w.ptr<float>()[i] = t.dtype == DType::F16 ? halfToFloat(p[i]) : bf16ToFloat(p[i]);
  return w;
}

// Gives the inner op heap tensors for its float32 outputs; narrow() then writes them
// into the session's outputs as the half type. Other outputs go straight through.
class NarrowingContext : public ExecContext {
 public:
  NarrowingContext(ExecContext& outer, DType half) : outer_(outer), half_(half) {
    threads = outer.threads;
    gemm = outer.gemm;
    scratch = outer.scratch;
  }
  Tensor& alloc(size_t out, DType dtype, Shape shape) override {
    if (dtype != DType::F32) return outer_.alloc(out, dtype, std::move(shape));
    return held_[out] = Tensor::empty(DType::F32, std::move(shape));
  }
  void alias(size_t out, const Tensor& src, Shape shape) override {
    Tensor view = src;
    view.shape = std::move(shape);
    held_[out] = view;
  }
  void narrow() {
    for (auto& [out, t] : held_) {
      if (t.dtype != DType::F32) {
        Tensor& y = outer_.alloc(out, t.dtype, t.shape);
        if (t.bytes()) std::memcpy(y.data, t.data, t.bytes());
        continue;
      }
      Tensor& y = outer_.alloc(out, half_, t.shape);
      uint16_t* q = y.ptr<uint16_t>();
      for (int64_t i = 0; i < t.size(); ++i)
        q[i] = half_ == DType::F16 ? floatToHalf(t.ptr<float>()[i]) : floatToBf16(t.ptr<float>()[i]);
    }
  }

 private:
  ExecContext& outer_;
  DType half_;
  std::map<size_t, Tensor> held_;
};

class HalfAsFloatOp : public Op {
 public:
  explicit HalfAsFloatOp(std::unique_ptr<Op> inner) : inner_(std::move(inner)) {}

  Status run(ExecContext& ctx, const std::vector<const Tensor*>& in) override {
    std::optional<DType> half;
    for (const Tensor* t : in)
      if (t && (t->dtype == DType::F16 || t->dtype == DType::BF16)) {
        if (half && *half != t->dtype) return makeError("inputs mix float16 and bfloat16");
        half = t->dtype;
      }
    if (!half) return inner_->run(ctx, in);
    std::vector<Tensor> wide;
    wide.reserve(in.size());
    std::vector<const Tensor*> args;
    for (const Tensor* t : in) {
      if (t && t->dtype == *half) {
        wide.push_back(widen(*t));
        args.push_back(&wide.back());
      } else {
        args.push_back(t);
      }
    }
    NarrowingContext narrowing(ctx, *half);
    ZP_TRY(inner_->run(narrowing, args));
    narrowing.narrow();
    return {};
  }
  std::string kernel() const override { return inner_->kernel(); }
  const WeightInfo* weights() const override { return inner_->weights(); }

 private:
  std::unique_ptr<Op> inner_;
};

}  // namespace

std::unique_ptr<Op> computeHalvesInFloat(std::unique_ptr<Op> inner) {
  return std::make_unique<HalfAsFloatOp>(std::move(inner));
}

}  // namespace zp::runtime::detail
