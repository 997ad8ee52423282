#include "passes/mts/emitter.h"

#include <fmt/format.h>

namespace zp::mts {

std::string Emitter::fresh(const std::string& base) {
  int n = used_[base]++;
  return n == 0 ? base : fmt::format("{}_{}", base, n);
}

std::string Emitter::floats(const std::string& base, const std::vector<int64_t>& dims,
                            const std::vector<float>& values, bool auxiliary) {
  auto* t = graph_->add_initializer();
  t->set_name(fresh(base));
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  if (auxiliary) auxBytes_ += static_cast<int64_t>(values.size() * sizeof(float));
  return t->name();
}

std::string Emitter::int64s(const std::string& base, const std::vector<int64_t>& values) {
  auto* t = graph_->add_initializer();
  t->set_name(fresh(base));
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t)));
  auxBytes_ += static_cast<int64_t>(values.size() * sizeof(int64_t));
  return t->name();
}

onnx::NodeProto& Emitter::node(const std::string& op, const std::vector<std::string>& inputs,
                               const std::string& base, const std::string& output) {
  auto* n = graph_->add_node();
  n->set_op_type(op);
  std::string out = output.empty() ? fresh(base) : output;
  n->set_name(out);
  for (const auto& i : inputs) n->add_input(i);
  n->add_output(out);
  return *n;
}

void Emitter::setInt(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void Emitter::setInts(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

std::string Emitter::slice(const std::string& data, int64_t axis, int64_t begin, int64_t end,
                           const std::string& base) {
  std::string starts = int64s(base + "/starts", {begin});
  std::string ends = int64s(base + "/ends", {end});
  std::string axes = int64s(base + "/axes", {axis});
  return node("Slice", {data, starts, ends, axes}, base).output(0);
}

std::string Emitter::gather(const std::string& data, const std::vector<int64_t>& indices, const std::string& base,
                            int64_t axis) {
  auto& n = node("Gather", {data, int64s(base + "/indices", indices)}, base);
  setInt(n, "axis", axis);
  return n.output(0);
}

// Zeros come from ConstantOfShape (folded at load, not stored in the file).
std::string Emitter::padZeros(const std::string& data, std::vector<int64_t> dims, int64_t axis, int64_t before,
                              int64_t after, const std::string& base) {
  std::vector<std::string> parts;
  auto zeros = [&](int64_t n, const std::string& name) {
    dims[static_cast<size_t>(axis)] = n;
    return node("ConstantOfShape", {int64s(name + "/shape", dims)}, name).output(0);
  };
  if (before > 0) parts.push_back(zeros(before, base + "/zeros_before"));
  parts.push_back(data);
  if (after > 0) parts.push_back(zeros(after, base + "/zeros_after"));
  if (parts.size() == 1) return data;
  auto& n = node("Concat", parts, base);
  setInt(n, "axis", axis);
  return n.output(0);
}

std::string Emitter::selectColumns(const std::string& data, int64_t width, const std::vector<int64_t>& indices,
                                   const std::string& base) {
  bool contiguous = !indices.empty();
  for (size_t j = 1; j < indices.size() && contiguous; ++j) contiguous = indices[j] == indices[0] + static_cast<int64_t>(j);
  if (contiguous && indices[0] == 0 && static_cast<int64_t>(indices.size()) == width) return data;
  if (contiguous) return slice(data, 1, indices[0], indices[0] + static_cast<int64_t>(indices.size()), base);
  return gather(data, indices, base);
}

}  // namespace zp::mts
