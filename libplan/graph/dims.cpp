#include "libplan/graph/dims.h"

#include <charconv>
#include <set>

#include "libplan/graph/model_io.h"
#include "libplan/graph/shape_data.h"

namespace zp::graph {

namespace {

bool isSymbolic(const onnx::TensorShapeProto::Dimension& d) { return !d.has_dim_value(); }

std::set<std::string> initializerNames(const onnx::GraphProto& g) {
  std::set<std::string> names;
  for (const auto& t : g.initializer()) names.insert(t.name());
  return names;
}

// Names of the leading dims of the graph inputs: these are the batch.
std::set<std::string> batchNames(const onnx::GraphProto& g, const std::set<std::string>& inits) {
  std::set<std::string> names;
  for (const auto& vi : g.input()) {
    if (inits.count(vi.name()) || !vi.type().tensor_type().has_shape()) continue;
    const auto& shape = vi.type().tensor_type().shape();
    if (shape.dim_size() > 0 && shape.dim(0).has_dim_param() && !shape.dim(0).has_dim_value())
      names.insert(shape.dim(0).dim_param());
  }
  return names;
}

// The value of symbolic dim `index` (named `param`, maybe empty) of input `input`.
Expected<int64_t> dimValue(const DimBinding& binding, const std::set<std::string>& batch, const std::string& label,
                           const std::string& input, int index, const std::string& param) {
  if (!param.empty()) {
    if (auto it = binding.named.find(param); it != binding.named.end()) return it->second;
    if (batch.count(param)) return binding.batch;
  }
  if (index == 0) return binding.batch;
  if (param.empty())
    return makeError("{}: input '{}' dimension {} has no fixed size and no name, so it cannot be bound; export the "
                     "model with that dimension fixed or named", label, input, index);
  return makeError("{}: input '{}' dimension {} is symbolic ('{}') and not the batch; bind it with --dim {}=VALUE",
                   label, input, index, param, param);
}

}  // namespace

bool hasSymbolicInputs(const onnx::ModelProto& model) {
  const auto inits = initializerNames(model.graph());
  for (const auto& vi : model.graph().input()) {
    if (inits.count(vi.name()) || !vi.type().tensor_type().has_shape()) continue;
    for (const auto& d : vi.type().tensor_type().shape().dim())
      if (isSymbolic(d)) return true;
  }
  return false;
}

bool leadingDimSymbolic(const onnx::ModelProto& model, const std::string& name) {
  for (const auto& vi : model.graph().input()) {
    if (vi.name() != name || !vi.type().tensor_type().has_shape()) continue;
    const auto& shape = vi.type().tensor_type().shape();
    return shape.dim_size() > 0 && isSymbolic(shape.dim(0));
  }
  return false;
}

Expected<onnx::ModelProto> bindInputShapes(const onnx::ModelProto& model,
                                           const std::map<std::string, std::vector<int64_t>>& shapes,
                                           const std::string& label) {
  onnx::ModelProto bound = model;
  auto* g = bound.mutable_graph();
  std::map<std::string, int64_t> values;  // named dims given a value, for the outputs
  for (auto& vi : *g->mutable_input()) {
    auto it = shapes.find(vi.name());
    if (it == shapes.end() || !vi.type().tensor_type().has_shape()) continue;
    auto* shape = vi.mutable_type()->mutable_tensor_type()->mutable_shape();
    if (static_cast<size_t>(shape->dim_size()) != it->second.size())
      return makeError("{}: input '{}' has rank {}, not the {} dims given", label, vi.name(), shape->dim_size(),
                       it->second.size());
    for (int i = 0; i < shape->dim_size(); ++i) {
      auto* d = shape->mutable_dim(i);
      if (!isSymbolic(*d)) continue;
      if (d->has_dim_param()) values[d->dim_param()] = it->second[static_cast<size_t>(i)];
      d->set_dim_value(it->second[static_cast<size_t>(i)]);
    }
  }
  // Outputs: a dim named like a bound one takes its value; any other symbolic
  // dim is left for shape inference to fill in.
  for (auto& vi : *g->mutable_output()) {
    if (!vi.type().tensor_type().has_shape()) continue;
    for (auto& d : *vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (!isSymbolic(d)) continue;
      auto it = values.find(d.dim_param());
      if (it != values.end()) d.set_dim_value(it->second);
      else d.clear_dim_param();
    }
  }
  g->clear_value_info();
  ZP_TRY(inferShapes(bound, label));
  ZP_TRY(completeReshapeShapes(bound, label));
  return bound;
}

Expected<onnx::ModelProto> bindDims(const onnx::ModelProto& model, const DimBinding& binding, const std::string& label,
                                    std::map<std::string, int64_t>* applied) {
  if (!hasSymbolicInputs(model)) {
    onnx::ModelProto copy = model;
    ZP_TRY(completeReshapeShapes(copy, label));
    return copy;
  }
  const auto& g = model.graph();
  const auto inits = initializerNames(g);
  const auto batch = batchNames(g, inits);
  std::map<std::string, std::vector<int64_t>> shapes;
  std::map<std::string, int64_t> named;  // non-batch dims bound by name
  for (const auto& vi : g.input()) {
    if (inits.count(vi.name()) || !vi.type().tensor_type().has_shape()) continue;
    auto& s = shapes[vi.name()];
    const auto& shape = vi.type().tensor_type().shape();
    for (int i = 0; i < shape.dim_size(); ++i) {
      const auto& d = shape.dim(i);
      if (!isSymbolic(d)) {
        s.push_back(d.dim_value());
        continue;
      }
      ZP_ASSIGN_OR_RETURN(int64_t v, dimValue(binding, batch, label, vi.name(), i, d.dim_param()));
      if (d.has_dim_param() && binding.named.count(d.dim_param())) named[d.dim_param()] = v;
      s.push_back(v);
    }
  }
  ZP_ASSIGN_OR_RETURN(auto bound, bindInputShapes(model, shapes, label));
  if (applied) applied->insert(named.begin(), named.end());
  return bound;
}

Expected<std::pair<std::string, int64_t>> parseDimSpec(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    return makeError("--dim '{}': expected NAME=VALUE (a symbolic dim's name and a positive integer)", spec);
  const std::string name = spec.substr(0, eq), value = spec.substr(eq + 1);
  int64_t v = 0;
  auto r = std::from_chars(value.data(), value.data() + value.size(), v);
  if (r.ec != std::errc() || r.ptr != value.data() + value.size() || value.empty())
    return makeError("--dim '{}': '{}' is not an integer", spec, value);
  if (v < 1 || v > kMaxDimValue) return makeError("--dim '{}': {} is outside [1, {}]", spec, v, kMaxDimValue);
  return std::make_pair(name, v);
}

}  // namespace zp::graph
