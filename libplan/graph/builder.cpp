#include "libplan/graph/builder.h"

#include <algorithm>
#include <map>
#include <set>

#include "libplan/graph/tensor.h"

namespace zp::graph {

namespace {

onnx::ValueInfoProto valueInfo(const std::string& name, const TensorInfo& info) {
  onnx::ValueInfoProto vi;
  vi.set_name(name);
  auto* tt = vi.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(info.elemType);
  if (info.hasShape) {
    auto* shape = tt->mutable_shape();
    for (size_t i = 0; i < info.shape.size(); ++i) {
      auto* dim = shape->add_dim();
      // A symbolic dim keeps its name, so a subgraph of a dynamic-batch model runs at any batch.
      if (info.shape[i] >= 0) dim->set_dim_value(info.shape[i]);
      else if (i < info.dimParams.size() && !info.dimParams[i].empty()) dim->set_dim_param(info.dimParams[i]);
    }
  }
  return vi;
}

void copyModelHeader(const onnx::ModelProto& from, onnx::ModelProto& to) {
  to.set_ir_version(from.ir_version());
  *to.mutable_opset_import() = from.opset_import();
  to.set_producer_name("zooplan");
}

}  // namespace

Expected<onnx::ModelProto> extractSubgraph(const GraphView& view, const std::vector<std::string>& inputs,
                                           const std::vector<std::string>& outputs, const std::string& graphName) {
  const std::set<std::string> stop(inputs.begin(), inputs.end());
  std::set<int> keep;
  std::set<std::string> usedInitializers;
  std::vector<std::string> work(outputs.begin(), outputs.end());
  std::set<std::string> visited;
  while (!work.empty()) {
    std::string t = work.back();
    work.pop_back();
    if (t.empty() || !visited.insert(t).second || stop.count(t)) continue;
    if (view.isInitializer(t)) {
      usedInitializers.insert(t);
      continue;
    }
    int p = view.producer(t);
    if (p < 0) {
      if (view.isGraphInput(t))
        return makeError("subgraph '{}': needs graph input '{}' that is not among its boundary inputs", graphName, t);
      return makeError("subgraph '{}': tensor '{}' has no producer", graphName, t);
    }
    if (!keep.insert(p).second) continue;
    for (const auto& in : view.node(p).input()) work.push_back(in);
  }

  onnx::ModelProto model;
  copyModelHeader(view.model(), model);
  auto* g = model.mutable_graph();
  g->set_name(graphName);
  for (const auto& name : inputs) {
    auto info = view.tensorInfo(name);
    if (!info) return makeError("subgraph '{}': boundary input '{}' has no type information", graphName, name);
    *g->add_input() = valueInfo(name, *info);
  }
  for (const auto& name : outputs) {
    auto info = view.tensorInfo(name);
    if (!info) return makeError("subgraph '{}': boundary output '{}' has no type information", graphName, name);
    *g->add_output() = valueInfo(name, *info);
  }
  std::set<std::string> boundary(inputs.begin(), inputs.end());
  boundary.insert(outputs.begin(), outputs.end());
  for (int i : view.topoOrder()) {
    if (!keep.count(i)) continue;
    *g->add_node() = view.node(i);
    for (const auto& out : view.node(i).output()) {
      if (out.empty() || boundary.count(out)) continue;
      if (auto info = view.tensorInfo(out)) *g->add_value_info() = valueInfo(out, *info);
    }
  }
  for (const auto& t : view.graph().initializer())
    if (usedInitializers.count(t.name())) *g->add_initializer() = t;
  return model;
}

Expected<onnx::ModelProto> chainModels(const std::vector<const onnx::ModelProto*>& parts, const std::string& graphName) {
  if (parts.empty()) return makeError("stitch '{}': no parts to chain", graphName);
  onnx::ModelProto model;
  copyModelHeader(*parts.front(), model);
  // Highest opset per domain across the parts.
  std::map<std::string, int64_t> opsets;
  int64_t ir = 0;
  for (const auto* p : parts) {
    ir = std::max<int64_t>(ir, p->ir_version());
    for (const auto& o : p->opset_import()) opsets[o.domain()] = std::max(opsets[o.domain()], o.version());
  }
  model.set_ir_version(ir);
  model.clear_opset_import();
  for (const auto& [domain, version] : opsets) {
    auto* o = model.add_opset_import();
    o->set_domain(domain);
    o->set_version(version);
  }
  auto* g = model.mutable_graph();
  g->set_name(graphName);

  std::set<std::string> usedNames;        // tensor names in the chained graph
  std::set<std::string> usedNodeNames;
  std::map<std::string, std::string> initByHash;  // content hash -> chained name
  std::vector<std::string> previousOutputs;

  for (size_t k = 0; k < parts.size(); ++k) {
    const auto& pg = parts[k]->graph();
    const std::string prefix = "p" + std::to_string(k) + "/";
    std::map<std::string, std::string> rename;
    auto fresh = [&](const std::string& name) {
      std::string n = usedNames.count(name) ? prefix + name : name;
      while (usedNames.count(n)) n = prefix + n;
      usedNames.insert(n);
      return n;
    };

    if (k == 0) {
      for (const auto& in : pg.input()) {
        rename[in.name()] = fresh(in.name());
        auto vi = in;
        vi.set_name(rename[in.name()]);
        *g->add_input() = vi;
      }
    } else {
      if (pg.input_size() != static_cast<int>(previousOutputs.size()))
        return makeError("stitch '{}': part {} takes {} inputs but part {} gives {} outputs", graphName, k,
                         pg.input_size(), k - 1, previousOutputs.size());
      for (int i = 0; i < pg.input_size(); ++i) rename[pg.input(i).name()] = previousOutputs[static_cast<size_t>(i)];
    }
    for (const auto& t : pg.initializer()) {
      std::string h = contentHash(t);
      auto it = initByHash.find(h);
      if (it != initByHash.end()) {
        rename[t.name()] = it->second;
        continue;
      }
      std::string n = fresh(t.name());
      rename[t.name()] = n;
      initByHash[h] = n;
      auto copy = t;
      copy.set_name(n);
      *g->add_initializer() = copy;
    }
    auto mapped = [&](const std::string& name) -> std::string {
      if (name.empty()) return name;
      auto it = rename.find(name);
      if (it != rename.end()) return it->second;
      return rename[name] = fresh(name);
    };
    for (const auto& n : pg.node()) {
      auto copy = n;
      for (auto& in : *copy.mutable_input()) in = mapped(in);
      for (auto& out : *copy.mutable_output()) out = mapped(out);
      std::string nodeName = n.name();
      while (usedNodeNames.count(nodeName)) nodeName = prefix + nodeName;
      usedNodeNames.insert(nodeName);
      copy.set_name(nodeName);
      *g->add_node() = copy;
    }
    for (const auto& vi : pg.value_info()) {
      auto copy = vi;
      copy.set_name(mapped(vi.name()));
      *g->add_value_info() = copy;
    }
    previousOutputs.clear();
    const bool last = k + 1 == parts.size();
    for (const auto& out : pg.output()) {
      std::string n = mapped(out.name());
      previousOutputs.push_back(n);
      auto copy = out;
      copy.set_name(n);
      if (last) *g->add_output() = copy;
      else *g->add_value_info() = copy;
    }
  }
  return model;
}

}  // namespace zp::graph
