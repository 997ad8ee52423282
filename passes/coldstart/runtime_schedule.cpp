#include "passes/coldstart/runtime_schedule.h"

#include <algorithm>
#include <optional>

namespace zp::coldstart {
using runtime::ColdWeights;

namespace {

Expected<std::optional<runtime::GemmLibrary>> libraryOf(const std::string& key, const std::string& where) {
  if (key.empty()) return std::optional<runtime::GemmLibrary>();
  runtime::GemmLibrary g;
  if (!runtime::parseGemmLibrary(key, &g)) return makeError("{}: unknown GEMM library '{}'", where, key);
  return std::optional<runtime::GemmLibrary>(g);
}

ColdWeights weightsOf(const std::string& w) {
  return w == "cache" ? ColdWeights::Cache : w == "transform" ? ColdWeights::Transform : ColdWeights::None;
}

}  // namespace

Expected<runtime::ColdSchedule> coldScheduleOf(const plan::ColdPlan& plan, const std::string& where) {
  runtime::ColdSchedule s;
  s.cores = plan.cores;
  s.pipelined = plan.pipelined;
  for (size_t at = 0; !plan.gemm.empty() && at <= plan.gemm.size();) {
    const size_t plus = std::min(plan.gemm.find('+', at), plan.gemm.size());
    ZP_ASSIGN_OR_RETURN(auto g, libraryOf(plan.gemm.substr(at, plus - at), where));
    if (g) s.startups.push_back(*g);
    at = plus + 1;
  }
  for (const auto& n : plan.nodes) {
    runtime::ColdStep c;
    c.node = n.node;
    c.kernel = n.kernel;
    ZP_ASSIGN_OR_RETURN(c.gemm, libraryOf(n.gemm, where));
    c.weights = weightsOf(n.weights);
    c.transformCore = n.transformCore;
    c.warmKernel = n.warmKernel;
    ZP_ASSIGN_OR_RETURN(c.warmGemm, libraryOf(n.warmGemm, where));
    c.warmWeights = weightsOf(n.warmWeights);
    c.warmCore = n.warmCore;
    s.steps.push_back(std::move(c));
  }
  return s;
}

}  // namespace zp::coldstart
