#include "libplan/graph/shape_data.h"

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "libplan/graph/model_io.h"
#include "libplan/graph/tensor.h"

namespace zp::graph {

namespace {

using Ints = std::vector<int64_t>;

// Fixed shapes of every tensor whose type gives one (dims all numbers).
std::map<std::string, Ints> knownShapes(const onnx::GraphProto& g) {
  std::map<std::string, Ints> shapes;
  auto note = [&](const onnx::ValueInfoProto& vi) {
    const auto& t = vi.type().tensor_type();
    if (!t.has_shape()) return;
    Ints s;
    for (const auto& d : t.shape().dim()) {
      if (!d.has_dim_value()) return;
      s.push_back(d.dim_value());
    }
    shapes[vi.name()] = s;
  };
  for (const auto& vi : g.input()) note(vi);
  for (const auto& vi : g.value_info()) note(vi);
  for (const auto& vi : g.output()) note(vi);
  for (const auto& t : g.initializer()) shapes[t.name()] = Ints(t.dims().begin(), t.dims().end());
  return shapes;
}

const onnx::AttributeProto* attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

std::optional<Ints> arithmetic(const std::string& op, const Ints& a, const Ints& b) {
  if (a.size() != b.size() && a.size() != 1 && b.size() != 1) return std::nullopt;
  Ints out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t x = a[a.size() == 1 ? 0 : i], y = b[b.size() == 1 ? 0 : i];
    if (op == "Add") out[i] = x + y;
    else if (op == "Sub") out[i] = x - y;
    else if (op == "Mul") out[i] = x * y;
    else if (y == 0) return std::nullopt;
    else out[i] = x / y;
  }
  return out;
}

// The value of node `n`'s first output, when its inputs' values are known.
std::optional<Ints> evaluate(const onnx::NodeProto& n, const std::map<std::string, Ints>& values,
                             const std::map<std::string, Ints>& shapes) {
  const std::string& op = n.op_type();
  auto in = [&](int i) -> const Ints* {
    if (i >= n.input_size()) return nullptr;
    auto it = values.find(n.input(i));
    return it == values.end() ? nullptr : &it->second;
  };
  if (op == "Constant") {
    const auto* v = attr(n, "value");
    if (v && v->has_t() && v->t().data_type() == onnx::TensorProto::INT64) return toInt64s(v->t());
    return std::nullopt;
  }
  if (op == "Shape") {
    auto it = shapes.find(n.input(0));
    if (it == shapes.end()) return std::nullopt;
    const auto rank = static_cast<int64_t>(it->second.size());
    int64_t start = 0, end = rank;
    if (const auto* a = attr(n, "start")) start = a->i() < 0 ? a->i() + rank : a->i();
    if (const auto* a = attr(n, "end")) end = a->i() < 0 ? a->i() + rank : a->i();
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    return Ints(it->second.begin() + start, it->second.begin() + end);
  }
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Cast" || op == "Identity") return in(0) ? *in(0) : std::optional<Ints>();
  if (op == "Gather") {
    const auto* a = attr(n, "axis");
    if ((a && a->i() != 0) || !in(0) || !in(1)) return std::nullopt;
    Ints out;
    const auto size = static_cast<int64_t>(in(0)->size());
    for (int64_t i : *in(1)) {
      if (i < 0) i += size;
      if (i < 0 || i >= size) return std::nullopt;
      out.push_back((*in(0))[static_cast<size_t>(i)]);
    }
    return out;
  }
  if (op == "Concat") {
    Ints out;
    for (int i = 0; i < n.input_size(); ++i) {
      if (!in(i)) return std::nullopt;
      out.insert(out.end(), in(i)->begin(), in(i)->end());
    }
    return out;
  }
  if ((op == "Add" || op == "Sub" || op == "Mul" || op == "Div") && in(0) && in(1))
    return arithmetic(op, *in(0), *in(1));
  return std::nullopt;
}

// Reshape's output shape from its input shape and target (0 copies, -1 is inferred).
std::optional<Ints> reshaped(const Ints& input, const Ints& target) {
  Ints out = target;
  int64_t known = 1, total = 1;
  int inferred = -1;
  for (int64_t d : input) total *= d;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && i < input.size()) out[i] = input[i];
    if (out[i] == -1) {
      if (inferred >= 0) return std::nullopt;
      inferred = static_cast<int>(i);
    } else if (out[i] < 0) {
      return std::nullopt;
    } else {
      known *= out[i];
    }
  }
  if (inferred >= 0) {
    if (known == 0 || total % known) return std::nullopt;
    out[static_cast<size_t>(inferred)] = total / known;
  }
  return out;
}

// One pass: value_info for every Reshape output it can now compute. Returns how many.
int resolveReshapes(onnx::GraphProto& g) {
  const auto shapes = knownShapes(g);
  std::map<std::string, int32_t> elemTypes;
  for (const auto* list : {&g.input(), &g.value_info(), &g.output()})
    for (const auto& vi : *list) elemTypes[vi.name()] = vi.type().tensor_type().elem_type();
  std::map<std::string, Ints> values;
  for (const auto& t : g.initializer())
    if (t.data_type() == onnx::TensorProto::INT64 && numElements(t) <= 64) values[t.name()] = toInt64s(t);
  int resolved = 0;
  for (const auto& n : g.node()) {  // ONNX graphs are stored in topological order
    if (n.op_type() == "Reshape" && n.input_size() >= 2 && !shapes.count(n.output(0))) {
      auto in = shapes.find(n.input(0));
      auto target = values.find(n.input(1));
      if (in == shapes.end() || target == values.end()) continue;
      auto out = reshaped(in->second, target->second);
      if (!out) continue;
      onnx::ValueInfoProto* vi = g.add_value_info();
      vi->set_name(n.output(0));
      auto* tt = vi->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(elemTypes.count(n.input(0)) ? elemTypes.at(n.input(0)) : onnx::TensorProto::FLOAT);
      for (int64_t d : *out) tt->mutable_shape()->add_dim()->set_dim_value(d);
      ++resolved;
      continue;
    }
    if (n.output_size() == 1)
      if (auto v = evaluate(n, values, shapes); v && v->size() <= 64) values[n.output(0)] = *v;
  }
  return resolved;
}

}  // namespace

Expected<bool> completeReshapeShapes(onnx::ModelProto& model, const std::string& label) {
  bool changed = false;
  // Each round can reveal the input shape of a later Reshape.
  for (int round = 0; round < 16; ++round) {
    auto* g = model.mutable_graph();
    // Output shapes recorded on graph outputs count as known already.
    if (resolveReshapes(*g) == 0) break;
    changed = true;
    ZP_TRY(inferShapes(model, label));
  }
  return changed;
}

}  // namespace zp::graph
