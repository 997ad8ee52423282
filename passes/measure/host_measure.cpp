#include "passes/measure/host_measure.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>

#include "libplan/graph/analysis.h"
#include "libplan/graph/model_io.h"
#include "libplan/graph/tensor.h"
#include "libplan/runtime/measure.h"
#include "libplan/util/stats.h"

namespace zp::measure {


runtime::SessionOptions sessionOptions(const HostConfig& config) {
  runtime::SessionOptions o;
  o.threads = config.threads;
  o.kernels.policy = config.policy;
  o.gemm = config.gemm;
  o.checkModel = false;  // zoo-stitch checked every subgraph it wrote
  return o;
}

Expected<LatencyMeasurement> measureLatency(runtime::Session& session, const runtime::TensorMap& inputs,
                                            const MeasureParams& params) {
  for (int i = 0; i < params.warmup; ++i) ZP_TRY(session.run(inputs));
  ZP_ASSIGN_OR_RETURN(auto warm, runtime::measureWarm(session, inputs, params.repeat, false));
  LatencyMeasurement m;
  m.medianMs = warm.medianMs;
  m.p90Ms = warm.p90Ms;
  m.runs = warm.runs;
  m.memoryBytes = static_cast<int64_t>(session.arenaBytes() + session.weightBytes() + session.scratchBytes());
  return m;
}

Expected<double> measureRunOverhead(const HostConfig& config, const MeasureParams& params) {
  ZP_ASSIGN_OR_RETURN(auto model, graph::parseModelText(R"(<ir_version: 8, opset_import: ["" : 13]>
    overhead (float[1,1] x) => (float[1,1] y) { y = Relu (x) })"));
  ZP_ASSIGN_OR_RETURN(auto session, runtime::Session::fromModel(model, "<run overhead probe>", sessionOptions(config)));
  auto inputs = runtime::randomInputs(*session, 0);
  // More repeats than a subgraph gets: the quantity is tiny and noisy.
  MeasureParams p = params;
  p.repeat = std::max(200, params.repeat * 10);
  ZP_ASSIGN_OR_RETURN(auto m, measureLatency(*session, inputs, p));
  return m.medianMs;
}

double measureCopyMs(int64_t bytes, const MeasureParams& params) {
  std::vector<char> a(static_cast<size_t>(std::max<int64_t>(bytes, 1)), 1), b(a.size());
  std::vector<double> t;
  for (int i = 0; i < params.warmup + std::max(params.repeat, 50); ++i) {
    auto t0 = SteadyClock::now();
    std::memcpy(b.data(), a.data(), a.size());
    // Keep the copy observable so it is not optimised away.
    a[static_cast<size_t>(i) % a.size()] = b[(static_cast<size_t>(i) * 7) % b.size()];
    if (i >= params.warmup) t.push_back(msSince(t0));
  }
  return median(std::move(t));
}

Expected<std::vector<NodeFeatures>> nodeFeatures(runtime::Session& session, const onnx::ModelProto& model,
                                                 const std::vector<runtime::TensorMap>& calibration,
                                                 std::vector<runtime::TensorMap>* outputs) {
  graph::GraphView view(model);
  std::map<std::string, int> byName;
  for (int i = 0; i < view.numNodes(); ++i) byName[view.node(i).name()] = i;

  struct Acc {
    int64_t zeros = 0, elems = 0;
    std::vector<double> ms;
  };
  std::vector<Acc> acc(session.nodes().size());
  runtime::RunOptions ro;
  ro.onNode = [&](const runtime::NodeEvent& e) {
    auto& a = acc[static_cast<size_t>(e.step)];
    a.ms.push_back(e.durMs);
    for (const auto* t : e.outputs) {
      if (!t || t->dtype != runtime::DType::F32) continue;
      const float* p = t->ptr<float>();
      const int64_t n = t->size();
      for (int64_t i = 0; i < n; ++i) a.zeros += p[i] == 0.0f;
      a.elems += n;
    }
  };
  for (const auto& in : calibration) {
    ZP_ASSIGN_OR_RETURN(auto out, session.run(in, ro));
    if (outputs) outputs->push_back(std::move(out));
  }

  std::vector<NodeFeatures> features;
  for (size_t s = 0; s < session.nodes().size(); ++s) {
    const auto& info = session.nodes()[s];
    NodeFeatures f;
    f.node = info.name;
    f.opType = info.opType;
    f.kernel = info.kernel;
    f.activationSparsity = acc[s].elems ? static_cast<double>(acc[s].zeros) / static_cast<double>(acc[s].elems) : 0.0;
    f.ms = median(acc[s].ms);
    auto it = byName.find(info.name);
    if (it != byName.end()) {
      const int i = it->second;
      auto stats = view.nodeStats(i);
      f.flops = stats.flops;
      f.weightSparsity = stats.weightElems ? static_cast<double>(stats.weightZeros) / static_cast<double>(stats.weightElems) : 0.0;
      double bytes = static_cast<double>(stats.weightBytes);
      for (const auto& in : view.node(i).input())
        if (!in.empty() && !view.isConstantTensor(in))
          if (auto ti = view.tensorInfo(in); ti && ti->numElements() > 0)
            bytes += static_cast<double>(ti->numElements() * graph::elementSize(ti->elemType));
      for (const auto& out : view.node(i).output())
        if (auto ti = view.tensorInfo(out); ti && ti->numElements() > 0)
          bytes += static_cast<double>(ti->numElements() * graph::elementSize(ti->elemType));
      f.intensity = bytes > 0 ? f.flops / bytes : 0.0;
    }
    features.push_back(std::move(f));
  }
  return features;
}

}  // namespace zp::measure
