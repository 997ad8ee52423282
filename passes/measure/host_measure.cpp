#include "passes/measure/host_measure.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "libplan/graph/model_io.h"
#include "libplan/runtime/measure.h"
#include "libplan/runtime/serve/processor.h"
#include "libplan/util/stats.h"

namespace zp::measure {


runtime::SessionOptions sessionOptions(const Processor& processor) {
  runtime::SessionOptions o = runtime::serve::sessionOptions(processor);
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

Expected<double> measureRunOverhead(const Processor& config, const MeasureParams& params) {
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

}  // namespace zp::measure
