#include "passes/measure/node_profile.h"

#include <algorithm>
#include <array>
#include <map>

#include "libplan/graph/analysis.h"
#include "libplan/graph/dims.h"
#include "libplan/graph/tensor.h"
#include "libplan/util/stats.h"

namespace zp::measure {
namespace {

int64_t intAttr(const onnx::NodeProto& n, const char* name, int64_t fallback) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.type() == onnx::AttributeProto::INTS ? (a.ints_size() ? a.ints(0) : fallback) : a.i();
  return fallback;
}

std::vector<int64_t> intsAttr(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return {a.ints().begin(), a.ints().end()};
  return {};
}

// NCHW of a shape, unknown dimensions as 0 and missing trailing ones as 1.
std::array<int64_t, 4> nchw(const std::vector<int64_t>& s) {
  std::array<int64_t, 4> d = {1, 1, 1, 1};
  for (size_t i = 0; i < std::min<size_t>(4, s.size()); ++i) d[i] = std::max<int64_t>(s[i], 0);
  return d;
}

double zeroFraction(const runtime::Tensor& t) {
  if (t.dtype != runtime::DType::F32 || t.size() == 0) return 0;
  const float* p = t.ptr<float>();
  int64_t zeros = 0;
  for (int64_t i = 0; i < t.size(); ++i) zeros += p[i] == 0.0f;
  return static_cast<double>(zeros) / static_cast<double>(t.size());
}

// From each output of executed node i, the single consumers that are not executed
// (fused into it): the tensor each chain ends in, and the nodes on the chains.
std::vector<std::string> followFused(const graph::GraphView& view, const std::set<std::string>& executedNames, int i,
                                     std::vector<int>* fused) {
  std::vector<std::string> tensors;
  for (const auto& t0 : view.node(i).output()) {
    std::string t = t0;
    for (int hops = 0; hops < view.numNodes(); ++hops) {
      const auto& cons = view.consumers(t);
      if (cons.size() != 1 || view.isGraphOutput(t)) break;
      const auto& c = view.node(cons[0]);
      if (executedNames.count(c.name()) || c.output_size() != 1) break;
      if (fused) fused->push_back(cons[0]);
      t = c.output(0);
    }
    tensors.push_back(t);
  }
  return tensors;
}

}  // namespace

std::map<int, std::vector<std::string>> executedOutputs(const graph::GraphView& view,
                                                        const std::set<std::string>& executedNames) {
  std::map<int, std::vector<std::string>> out;
  for (int i = 0; i < view.numNodes(); ++i)
    if (executedNames.count(view.node(i).name())) out[i] = followFused(view, executedNames, i, nullptr);
  return out;
}

std::map<int, std::vector<std::string>> executedInputs(const graph::GraphView& view,
                                                       const std::set<std::string>& executedNames) {
  std::map<int, std::vector<std::string>> out;
  for (int i = 0; i < view.numNodes(); ++i) {
    if (!executedNames.count(view.node(i).name())) continue;
    std::vector<int> fused;
    followFused(view, executedNames, i, &fused);
    std::set<std::string> inside(view.node(i).output().begin(), view.node(i).output().end());
    for (int f : fused) inside.insert(view.node(f).output(0));
    std::vector<std::string> ins(view.node(i).input().begin(), view.node(i).input().end());
    for (int f : fused)
      for (const auto& t : view.node(f).input())
        if (!inside.count(t)) ins.push_back(t);
    out[i] = std::move(ins);
  }
  return out;
}

estimate::OpFeatures staticOpFeatures(const graph::GraphView& view, int index) {
  const auto& n = view.node(index);
  estimate::OpFeatures f;
  f.opType = n.op_type();
  const auto stats = view.nodeStats(index);
  f.flops = stats.flops;
  f.weightSparsity = stats.weightElems ? static_cast<double>(stats.weightZeros) / static_cast<double>(stats.weightElems) : 0.0;
  double bytes = static_cast<double>(stats.weightBytes);
  bool haveInput = false;
  for (const auto& in : n.input()) {
    if (in.empty() || view.isConstantTensor(in)) continue;
    auto ti = view.tensorInfo(in);
    if (!ti) continue;
    if (ti->numElements() > 0) bytes += static_cast<double>(ti->numElements() * graph::elementSize(ti->elemType));
    if (!haveInput) {
      auto d = nchw(ti->shape);
      f.batch = d[0], f.inChannels = d[1], f.inH = d[2], f.inW = d[3];
      haveInput = true;
    }
  }
  std::array<int64_t, 4> out = {0, 0, 0, 0};
  for (int o = 0; o < n.output_size(); ++o)
    if (auto ti = view.tensorInfo(n.output(o))) {
      if (ti->numElements() > 0) bytes += static_cast<double>(ti->numElements() * graph::elementSize(ti->elemType));
      if (o == 0) out = nchw(ti->shape);
    }
  f.outChannels = out[1];
  f.bytes = bytes;
  auto kernel = intsAttr(n, "kernel_shape");
  if (kernel.empty() && f.opType == "Conv" && n.input_size() > 1)
    if (auto w = view.tensorInfo(n.input(1)); w && w->shape.size() == 4) kernel = {w->shape[2], w->shape[3]};
  if (!kernel.empty()) {
    f.kernelH = kernel[0];
    f.kernelW = kernel.size() > 1 ? kernel[1] : 1;
    f.stride = intAttr(n, "strides", 1);
  }
  if (f.opType == "Conv" || f.opType == "ConvTranspose") f.groups = intAttr(n, "group", 1);
  // SparOA Eq. 2 for convolutions; FLOPs elsewhere.
  f.intensity = f.opType == "Conv" ? static_cast<double>(f.kernelH * f.kernelW * f.inChannels * f.outChannels * out[2] * out[3])
                                   : f.flops;
  return f;
}

namespace {

// The cache context of every row (rows in execution order; `anchor` the ONNX
// node each stands for, -1 if none): bytes moved between an activation's write
// and each read, and per run.
void setCacheContext(const graph::GraphView& view, const std::vector<int>& anchor,
                     const std::map<int, std::vector<std::string>>& written,
                     const std::map<int, std::vector<std::string>>& read, std::vector<artifacts::NodeProfileRow>& rows) {
  std::vector<double> before(rows.size() + 1, 0.0);  // bytes moved by the steps before step s
  for (size_t s = 0; s < rows.size(); ++s) before[s + 1] = before[s] + rows[s].features.bytes;
  const double perRun = before.back();
  std::map<std::string, size_t> producer;
  for (size_t s = 0; s < rows.size(); ++s)
    if (anchor[s] >= 0)
      for (const auto& t : written.at(anchor[s])) producer[t] = s;
  for (size_t s = 0; s < rows.size(); ++s) {
    auto& f = rows[s].features;
    f.modelBytes = perRun;
    if (anchor[s] < 0) continue;
    for (const auto& in : read.at(anchor[s])) {
      if (in.empty() || view.isConstantTensor(in)) continue;
      const auto p = producer.find(in);
      const double between = p != producer.end() && p->second < s ? before[s] - before[p->second + 1] : perRun;
      f.inputReuseBytes = std::max(f.inputReuseBytes, between);
    }
  }
}

}  // namespace

Expected<std::vector<artifacts::NodeProfileRow>> profileNodes(const onnx::ModelProto& model, const std::string& modelName,
                                                              const Processor& config, const runtime::TensorMap& inputs,
                                                              const MeasureParams& params) {
  ZP_ASSIGN_OR_RETURN(auto session, runtime::Session::fromModel(model, modelName, sessionOptions(config)));
  // FLOPs and bytes need fixed shapes: the model bound to the shapes it runs at
  // here (a symbolic batch or dim takes the inputs' size).
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& [name, t] : inputs) shapes[name] = t.shape;
  ZP_ASSIGN_OR_RETURN(const auto bound, graph::bindInputShapes(model, shapes, modelName));
  graph::GraphView view(bound);
  std::map<std::string, int> byName;
  for (int i = 0; i < view.numNodes(); ++i) byName.emplace(view.node(i).name(), i);
  std::set<std::string> executed;
  for (const auto& info : session->nodes()) executed.insert(info.name);
  const auto written = executedOutputs(view, executed);

  for (int i = 0; i < params.warmup; ++i) ZP_TRY(session->run(inputs));
  std::vector<std::vector<double>> ms(session->nodes().size());
  runtime::RunOptions timed;
  timed.onNode = [&](const runtime::NodeEvent& e) { ms[static_cast<size_t>(e.step)].push_back(e.durMs); };
  for (int i = 0; i < params.repeat; ++i) ZP_TRY(session->run(inputs, timed));

  // One more run for the zero fractions of every node's outputs, by tensor name.
  std::map<std::string, double> zeros;
  for (const auto& [name, t] : inputs) zeros[name] = zeroFraction(t);
  runtime::RunOptions sparsity;
  sparsity.onNode = [&](const runtime::NodeEvent& e) {
    auto it = byName.find(e.info.name);
    if (it == byName.end()) return;
    const auto& names = written.at(it->second);
    for (size_t o = 0; o < e.outputs.size() && o < names.size(); ++o)
      if (e.outputs[o]) zeros[names[o]] = zeroFraction(*e.outputs[o]);
  };
  ZP_TRY(session->run(inputs, sparsity));

  std::vector<artifacts::NodeProfileRow> rows;
  std::vector<int> anchor;
  for (size_t s = 0; s < session->nodes().size(); ++s) {
    const auto& info = session->nodes()[s];
    artifacts::NodeProfileRow r{modelName, config.policy, config.threads, info.name, {}, 0, 0, 0};
    auto it = byName.find(info.name);
    anchor.push_back(it != byName.end() ? it->second : -1);
    if (it != byName.end()) {
      r.features = staticOpFeatures(view, it->second);
      const auto& n = view.node(it->second);
      for (const auto& in : n.input())
        if (!in.empty() && !view.isConstantTensor(in)) {
          if (auto z = zeros.find(in); z != zeros.end()) r.features.inputSparsity = z->second;
          break;
        }
      const auto& names = written.at(it->second);
      if (!names.empty())
        if (auto z = zeros.find(names[0]); z != zeros.end()) r.features.outputSparsity = z->second;
    }
    r.features.opType = info.opType;
    r.features.kernel = info.kernel;
    r.features.activation = info.activation;
    std::vector<double> odd, even;
    for (size_t i = 0; i < ms[s].size(); ++i) (i % 2 ? odd : even).push_back(ms[s][i]);
    r.ms = median(ms[s]);
    r.msOdd = odd.empty() ? r.ms : median(odd);
    r.msEven = even.empty() ? r.ms : median(even);
    rows.push_back(std::move(r));
  }
  setCacheContext(view, anchor, written, executedInputs(view, executed), rows);
  return rows;
}

}  // namespace zp::measure
