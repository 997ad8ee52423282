#include "libplan/graph/variant_facts.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "libplan/graph/analysis.h"
#include "libplan/graph/tensor.h"

namespace zp::graph {

namespace {

struct WeightStats {
  int64_t elems = 0, zeros = 0, sliceZeros = 0;
  bool int8 = false, fp16 = false;
};

// The constant tensor behind `name`: an initializer, a Constant node's value,
// or what a DequantizeLinear, Cast or Identity of one reads.
const onnx::TensorProto* constantBehind(const GraphView& view, const std::string& name, bool* quantized, int depth = 0) {
  if (const auto* init = view.initializer(name)) return init;
  const int p = view.producer(name);
  if (p < 0 || depth > 4) return nullptr;
  const auto& n = view.node(p);
  if (n.op_type() == "Constant") {
    const auto* value = findAttr(n, "value");
    return value && value->has_t() ? &value->t() : nullptr;
  }
  if ((n.op_type() == "DequantizeLinear" || n.op_type() == "Cast" || n.op_type() == "Identity") && n.input_size() > 0) {
    if (n.op_type() == "DequantizeLinear") *quantized = true;
    return constantBehind(view, n.input(0), quantized, depth + 1);
  }
  return nullptr;
}

// Zeros in whole slices of dimension `axis` (all-zero output or input channels).
int64_t zerosInWholeSlices(const std::vector<float>& v, const google::protobuf::RepeatedField<int64_t>& dims, int axis) {
  if (dims.size() < 2) return 0;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= dims[d];
  for (int d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  const int64_t n = dims[axis];
  int64_t zeros = 0;
  for (int64_t k = 0; k < n; ++k) {
    bool all = true;
    for (int64_t o = 0; o < outer && all; ++o)
      for (int64_t i = 0; i < inner && all; ++i) all = v[static_cast<size_t>((o * n + k) * inner + i)] == 0.0f;
    if (all) zeros += outer * inner;
  }
  return zeros;
}

WeightStats weightStats(const onnx::ModelProto& model) {
  GraphView view(model);
  WeightStats s;
  std::set<const onnx::TensorProto*> seen;
  static const std::set<std::string> kWeighted = {"Conv", "ConvTranspose", "Gemm", "MatMul"};
  for (int i : view.topoOrder()) {
    const auto& n = view.node(i);
    if (!kWeighted.count(n.op_type()) || n.input_size() < 2) continue;
    bool quantized = false;
    const onnx::TensorProto* w = constantBehind(view, n.input(1), &quantized);
    if (!w || w->dims_size() < 2 || !seen.insert(w).second) continue;
    const auto v = toFloats(*w);
    s.elems += static_cast<int64_t>(v.size());
    s.zeros += std::count(v.begin(), v.end(), 0.0f);
    s.sliceZeros += std::max(zerosInWholeSlices(v, w->dims(), 0), zerosInWholeSlices(v, w->dims(), 1));
    s.int8 |= quantized || w->data_type() == onnx::TensorProto::INT8 || w->data_type() == onnx::TensorProto::UINT8;
    s.fp16 |= w->data_type() == onnx::TensorProto::FLOAT16;
  }
  return s;
}

}  // namespace

VariantFacts variantFacts(const onnx::ModelProto& model, const onnx::ModelProto* reference) {
  const WeightStats s = weightStats(model);
  GraphView view(model);
  VariantFacts f;
  f.weightElems = s.elems;
  f.weightZeros = s.zeros;
  f.sliceZeros = s.sliceZeros;
  const bool int8 = s.int8 || view.precision() == Precision::Int8;
  f.precision = int8 ? "int8" : s.fp16 || view.precision() == Precision::Fp16 ? "fp16" : "fp32";
  const double zeroShare = s.elems > 0 ? static_cast<double>(s.zeros) / static_cast<double>(s.elems) : 0.0;
  const int64_t refElems = reference ? weightStats(*reference).elems : 0;
  if (int8) {
    f.kind = "quantized";
    f.sparsity = zeroShare;
    f.evidence = "int8 weights or QuantizeLinear/DequantizeLinear nodes";
  } else if (refElems > 0 && s.elems < refElems) {
    f.kind = "structured";
    f.sparsity = 1.0 - static_cast<double>(s.elems) / static_cast<double>(refElems);
    f.evidence = fmt::format("{} weights against the reference's {}: channels cut away", s.elems, refElems);
  } else if (zeroShare < kDenseBelowSparsity) {
    f.kind = "dense";
    f.sparsity = 0;
    f.evidence = fmt::format("{:.2f}% of its {} weights are zero", 100 * zeroShare, s.elems);
  } else {
    const bool channels = static_cast<double>(s.sliceZeros) >= kStructuredZeroShare * static_cast<double>(s.zeros);
    f.kind = channels ? "structured" : "unstructured";
    f.sparsity = zeroShare;
    f.evidence = fmt::format("{:.1f}% of its weights are zero, {:.1f}% of those in whole channels", 100 * zeroShare,
                             s.zeros ? 100.0 * static_cast<double>(s.sliceZeros) / static_cast<double>(s.zeros) : 0.0);
  }
  return f;
}

}  // namespace zp::graph
