#include "passes/measure/placed_handoff.h"

#include <fmt/format.h>

#include <algorithm>

#include "libplan/graph/model_io.h"
#include "libplan/runtime/measure.h"
#include "libplan/runtime/serve/placed_executor.h"

namespace zp::measure {
namespace {


std::string chainText(int64_t floats, int chain) {
  const std::string shape = fmt::format("[{}]", floats);
  std::string body, prev = "x";
  for (int i = 0; i < chain; ++i) {
    const std::string out = i + 1 == chain ? "y" : fmt::format("h{}", i);
    body += "  " + out + " = Relu (" + prev + ")\n";
    prev = out;
  }
  return "<ir_version: 8, opset_import: [\"\" : 13]>\nchain (float" + shape + " x) => (float" + shape + " y)\n{\n" +
         body + "}\n";
}

// Median latency of the chain with step s on processors[placement[s]].
Expected<double> chainMs(const onnx::ModelProto& model, const std::vector<Processor>& processors,
                         std::vector<int> placement, const MeasureParams& params) {
  std::vector<std::unique_ptr<runtime::Session>> sessions;
  for (const auto& p : processors) {
    ZP_ASSIGN_OR_RETURN(auto s, runtime::Session::fromModel(model, "hand-off chain", runtime::serve::sessionOptions(p)));
    sessions.push_back(std::move(s));
  }
  const auto inputs = runtime::randomInputs(*sessions.front(), 0);
  runtime::PlacedProgramParams pp;
  pp.exclusive = runtime::serve::sharedCorePairs(processors);
  ZP_ASSIGN_OR_RETURN(auto program, runtime::PlacedProgram::create(std::move(sessions), std::move(placement), pp));
  ZP_ASSIGN_OR_RETURN(auto exec, runtime::serve::PlacedExecutor::start(std::move(program), processors));
  ZP_ASSIGN_OR_RETURN(auto stats, exec->measure(inputs, params.warmup, params.repeat));
  return stats.medianMs;
}

}  // namespace

void fitHandOff(HandOffFit& fit) {
  const auto& pts = fit.points;
  fit.fixedMs = fit.msPerByte = 0;
  if (pts.empty()) return;
  const double n = static_cast<double>(pts.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& p : pts) {
    const double x = static_cast<double>(p.bytes);
    sx += x;
    sy += p.perEdgeMs;
    sxx += x * x;
    sxy += x * p.perEdgeMs;
  }
  const double den = n * sxx - sx * sx;
  double slope = den > 0 ? (n * sxy - sx * sy) / den : 0;
  double icept = (sy - slope * sx) / n;
  if (slope < 0) {  // flat: the mean
    slope = 0;
    icept = sy / n;
  }
  if (icept < 0) {  // through the origin
    icept = 0;
    slope = sxx > 0 ? std::max(0.0, sxy / sxx) : 0;
  }
  fit.fixedMs = icept;
  fit.msPerByte = slope;
}

Expected<HandOffFit> measurePlacedHandOff(const Processor& a, const Processor& b,
                                          const HandOffParams& params) {
  HandOffFit fit;
  const std::vector<Processor> processors = {a, b};
  const int n = std::max(2, params.chain);
  std::vector<int> alternating, same(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) alternating.push_back(i % 2);
  for (int64_t bytes : params.bytes) {
    ZP_ASSIGN_OR_RETURN(auto model, graph::parseModelText(chainText(std::max<int64_t>(1, bytes / 4), n)));
    HandOffPoint p;
    p.bytes = bytes;
    ZP_ASSIGN_OR_RETURN(p.alternatingMs, chainMs(model, processors, alternating, params.measure));
    ZP_ASSIGN_OR_RETURN(p.sameMs, chainMs(model, processors, same, params.measure));
    p.perEdgeMs = std::max(0.0, (p.alternatingMs - p.sameMs) / (n - 1));
    fit.points.push_back(p);
  }
  fitHandOff(fit);
  return fit;
}

}  // namespace zp::measure
