#include "libplan/runtime/constant_fold.h"

#include "libplan/runtime/ops/op.h"

namespace zp::runtime {
namespace {

// Allocation for constant folding: every output on the heap.
class FoldContext : public ExecContext {
 public:
  explicit FoldContext(size_t outputs) : outs(outputs) {}
  Tensor& alloc(size_t out, DType dtype, Shape shape) override {
    outs[out] = Tensor::empty(dtype, std::move(shape));
    return outs[out];
  }
  void alias(size_t out, const Tensor& src, Shape shape) override {
    outs[out] = src;
    outs[out].shape = std::move(shape);
    if (!outs[out].owner) outs[out] = outs[out].clone();
  }
  std::vector<Tensor> outs;
};

bool foldable(const graph::GraphView& view, const onnx::NodeProto& n, const ValueTable& values, bool shapeOfStatic) {
  for (const auto& o : n.output())
    if (view.isGraphOutput(o)) return false;
  if (shapeOfStatic) return true;
  for (const auto& in : n.input())
    if (!in.empty() && !values.constant(in)) return false;
  return true;
}

Status foldNode(const onnx::NodeProto& n, bool shapeOfStatic, const StaticShapes& shapes, const FoldEnvironment& env,
                ValueTable& values) {
  static const KernelPolicy foldPolicy;
  for (const auto& in : n.input()) {
    const int v = in.empty() ? -1 : values.find(in);
    if (v >= 0 && values.stripped[static_cast<size_t>(v)] && !shapeOfStatic)
      return makeError("{}: node '{}' would fold initializer '{}', which the skeleton leaves to the cache", env.label,
                       n.name(), in);
  }
  BuildContext bc;
  bc.node = &n;
  bc.opset = env.opset;
  bc.policy = &foldPolicy;
  std::vector<const Tensor*> ins;
  for (const auto& in : n.input()) {
    bc.constInputs.push_back(values.constant(in));
    ins.push_back(values.constant(in));
  }
  Tensor shapeHolder;
  if (shapeOfStatic) {
    // Shape only needs the input's shape: hand it a zero-size stand-in with that shape.
    shapeHolder.shape = *shapes.of(n.input(0));
    ins[0] = &shapeHolder;
  }
  auto op = createOp(bc);
  if (!op.ok()) return makeError("{}: {}", env.label, op.error().message);
  FoldContext fc(static_cast<size_t>(n.output_size()));
  fc.scratch = env.scratch;
  fc.gemm = env.gemm;
  Status r = (*op)->run(fc, ins);
  if (!r.ok()) return makeError("{}: node '{}' ({}): {}", env.label, n.name(), n.op_type(), r.error().message);
  for (int k = 0; k < n.output_size(); ++k) {
    if (n.output(k).empty()) continue;
    const size_t v = static_cast<size_t>(values.id(n.output(k)));
    values.vals[v] = std::move(fc.outs[static_cast<size_t>(k)]);
    values.isConst[v] = true;
  }
  return {};
}

}  // namespace

Expected<std::vector<int>> foldConstants(const graph::GraphView& view, const StaticShapes& shapes,
                                         const FoldEnvironment& env, ValueTable& values) {
  std::vector<int> live;
  for (int i : view.topoOrder()) {
    const auto& n = view.node(i);
    const bool shapeOfStatic = n.op_type() == "Shape" && shapes.of(n.input(0)).has_value();
    if (!foldable(view, n, values, shapeOfStatic)) {
      live.push_back(i);
      continue;
    }
    ZP_TRY(foldNode(n, shapeOfStatic, shapes, env, values));
  }
  return live;
}

}  // namespace zp::runtime
