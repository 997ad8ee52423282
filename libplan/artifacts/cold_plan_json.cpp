// plan.json's cold-start section (libplan/plan/cold_plan.h).
#include <limits>
#include <set>

#include "libplan/runtime/kernels/gemm.h"

#include "libplan/artifacts/plan_json.h"
#include "libplan/util/json_reader.h"
#include "libplan/util/validate.h"

namespace zp::artifacts {
using namespace plan;

namespace {

Json nodeJson(const ColdNodePlan& n) {
  return Json{{"step", n.step},
              {"node", n.node},
              {"kernel", n.kernel},
              {"gemm", n.gemm},
              {"weights", n.weights},
              {"transform_core", n.transformCore},
              {"read_ms", Json::array({n.readStartMs, n.readEndMs})},
              {"transform_ms", Json::array({n.transformStartMs, n.transformEndMs})},
              {"exec_ms", Json::array({n.execStartMs, n.execEndMs})},
              {"warm_kernel", n.warmKernel},
              {"warm_gemm", n.warmGemm},
              {"warm_weights", n.warmWeights},
              {"warm_core", n.warmCore},
              {"warm_ready_ms", n.warmReadyMs}};
}

Expected<std::pair<double, double>> interval(const JsonAt& j, std::string_view key) {
  ZP_ASSIGN_OR_RETURN(auto a, j.array(key));
  if (a.size() != 2) return j.error(fmt::format("{}: expected [start, end]", key));
  ZP_ASSIGN_OR_RETURN(double s, a[0].number(0, kMaxLatencyMs));
  ZP_ASSIGN_OR_RETURN(double e, a[1].number(s, kMaxLatencyMs));
  return std::make_pair(s, e);
}

// A GEMM library's key, or "" for none.
Expected<std::string> gemmLibrary(const JsonAt& j, std::string_view key) {
  ZP_ASSIGN_OR_RETURN(std::string g, j.string(key));
  runtime::GemmLibrary lib;
  if (!g.empty() && !runtime::parseGemmLibrary(g, &lib))
    return j.error(fmt::format("{}: '{}' is not a GEMM library (onednn, blis) or empty", key, g));
  return g;
}

// GEMM library keys '+'-joined, each at most once.
Expected<std::string> gemmLibraries(const JsonAt& j, std::string_view key) {
  ZP_ASSIGN_OR_RETURN(std::string all, j.string(key));
  std::set<std::string> seen;
  for (size_t at = 0; !all.empty() && at <= all.size();) {
    const size_t plus = std::min(all.find('+', at), all.size());
    const std::string g = all.substr(at, plus - at);
    runtime::GemmLibrary lib;
    if (!runtime::parseGemmLibrary(g, &lib) || !seen.insert(g).second)
      return j.error(fmt::format("{}: '{}' is not a '+'-joined list of distinct GEMM libraries (onednn, blis)", key, all));
    at = plus + 1;
  }
  return all;
}

Expected<std::string> weightsKind(const JsonAt& j, std::string_view key) {
  ZP_ASSIGN_OR_RETURN(std::string w, j.string(key));
  if (w != "cache" && w != "transform" && w != "none")
    return j.error(fmt::format("{}: '{}' is not cache, transform or none", key, w));
  return w;
}

Expected<ColdNodePlan> nodeFrom(const JsonAt& j, int cores) {
  ColdNodePlan n;
  ZP_ASSIGN_OR_RETURN(int64_t step, j.integer("step", 0, 10'000'000));
  n.step = static_cast<int>(step);
  ZP_ASSIGN_OR_RETURN(n.node, j.string("node"));
  ZP_ASSIGN_OR_RETURN(n.kernel, j.string("kernel"));
  ZP_ASSIGN_OR_RETURN(n.gemm, gemmLibrary(j, "gemm"));
  ZP_ASSIGN_OR_RETURN(n.weights, weightsKind(j, "weights"));
  ZP_ASSIGN_OR_RETURN(int64_t core, j.integer("transform_core", -1, cores - 1));
  n.transformCore = static_cast<int>(core);
  ZP_ASSIGN_OR_RETURN(auto r, interval(j, "read_ms"));
  ZP_ASSIGN_OR_RETURN(auto t, interval(j, "transform_ms"));
  ZP_ASSIGN_OR_RETURN(auto e, interval(j, "exec_ms"));
  std::tie(n.readStartMs, n.readEndMs) = r;
  std::tie(n.transformStartMs, n.transformEndMs) = t;
  std::tie(n.execStartMs, n.execEndMs) = e;
  ZP_ASSIGN_OR_RETURN(n.warmKernel, j.string("warm_kernel"));
  ZP_ASSIGN_OR_RETURN(n.warmGemm, gemmLibrary(j, "warm_gemm"));
  ZP_ASSIGN_OR_RETURN(n.warmWeights, weightsKind(j, "warm_weights"));
  ZP_ASSIGN_OR_RETURN(int64_t warmCore, j.integer("warm_core", -1, cores - 1));
  n.warmCore = static_cast<int>(warmCore);
  ZP_ASSIGN_OR_RETURN(n.warmReadyMs, j.number("warm_ready_ms", 0, kMaxLatencyMs));
  if (n.kernel.empty() != (n.weights == "none"))
    return j.error("a node has weights ('cache' or 'transform') exactly when it has a kernel");
  if (n.weights != "transform" && n.transformCore >= 0)
    return j.error("transform_core is set only for weights transformed at load");
  if (n.kernel.empty() && (!n.gemm.empty() || !n.warmKernel.empty() || !n.warmGemm.empty()))
    return j.error("a node without a kernel has no GEMM library and no warm kernel");
  if (!n.kernel.empty() && n.warmKernel.empty()) return j.error("warm_kernel: empty for a node with a kernel");
  if ((n.warmKernel != n.kernel) == (n.warmWeights == "none"))
    return j.error("warm_weights is 'cache' or 'transform' exactly when warm_kernel differs from kernel");
  return n;
}

Expected<ColdConfiguration> configurationFrom(const JsonAt& j) {
  ColdConfiguration c;
  ZP_ASSIGN_OR_RETURN(c.name, j.string("name"));
  ZP_ASSIGN_OR_RETURN(c.kernelSelection, j.boolean("kernel_selection"));
  ZP_ASSIGN_OR_RETURN(c.caching, j.boolean("caching"));
  ZP_ASSIGN_OR_RETURN(c.pipelining, j.boolean("pipelining"));
  ZP_ASSIGN_OR_RETURN(c.gemm, gemmLibraries(j, "gemm"));
  ZP_ASSIGN_OR_RETURN(c.predictedMs, j.number("predicted_ms", 0, kMaxLatencyMs));
  ZP_ASSIGN_OR_RETURN(c.status, j.string("status"));
  if (c.status != "optimal" && c.status != "heuristic")
    return j.error(fmt::format("status: '{}' is not optimal or heuristic", c.status));
  return c;
}

}  // namespace

Json toJson(const ColdPlan& c) {
  Json nodes = Json::array();
  for (const auto& n : c.nodes) nodes.push_back(nodeJson(n));
  Json configs = Json::array();
  for (const auto& k : c.configurations)
    configs.push_back(Json{{"name", k.name}, {"kernel_selection", k.kernelSelection}, {"caching", k.caching},
                           {"pipelining", k.pipelining}, {"gemm", k.gemm}, {"predicted_ms", k.predictedMs},
                           {"status", k.status}});
  Json j{{"unit", c.unit.str()},
              {"configuration", c.configuration},
              {"pipelined", c.pipelined},
              {"gemm", c.gemm},
              {"gemm_startup", c.gemmStartup},
              {"cores", c.cores},
              {"storage_mb_per_s", c.storageMBps},
              {"setup_ms", c.setupMs},
              {"predicted_cold_ms", c.predictedColdMs},
              {"predicted_warm_ready_ms", c.predictedWarmReadyMs},
              {"predicted_warm_ms", c.predictedWarmMs},
              {"solver", c.solver},
              {"status", c.status},
              {"search_space", c.searchSpace},
              {"lower_bound_ms", c.lowerBoundMs},
              {"states", c.states},
              {"nodes", nodes},
              {"configurations", configs}};
  if (c.calibrationRuns > 0) {
    j["calibration"] = Json{{"runs", c.calibrationRuns},
                            {"execute_factor", c.executeFactor},
                            {"transform_factor", c.transformFactor},
                            {"transform_overhead_ms", c.transformOverheadMs},
                            {"read_latency_ms", c.readLatencyMs},
                            {"startup_factor", c.startupFactor},
                            {"setup_factor", c.setupFactor},
                            {"kernel_execute_factors", Json::object()}};
    for (const auto& [kernel, f] : c.kernelExecuteFactors) j["calibration"]["kernel_execute_factors"][kernel] = f;
  }
  return j;
}

Expected<ColdPlan> coldPlanFromJson(const JsonAt& j) {
  ColdPlan c;
  ZP_ASSIGN_OR_RETURN(JsonAt unit, j.at("unit"));
  ZP_ASSIGN_OR_RETURN(std::string unitText, unit.string());
  auto id = plan::parseUnitId(unitText);
  if (!id.ok()) return unit.error(id.error().message);
  c.unit = *id;
  ZP_ASSIGN_OR_RETURN(c.configuration, j.string("configuration"));
  static const std::set<std::string> kConfigurations = {"none", "K", "C", "P", "K+C", "K+P", "C+P", "K+C+P"};
  if (!kConfigurations.count(c.configuration))
    return j.error(fmt::format("configuration: '{}' is not a knob combination (none, K, C, P, K+C, K+P, C+P, K+C+P)",
                               c.configuration));
  ZP_ASSIGN_OR_RETURN(c.pipelined, j.boolean("pipelined"));
  if (c.pipelined != (c.configuration.find('P') != std::string::npos))
    return j.error(fmt::format("pipelined: {} for configuration {}", c.pipelined, c.configuration));
  ZP_ASSIGN_OR_RETURN(c.gemm, gemmLibraries(j, "gemm"));
  ZP_ASSIGN_OR_RETURN(c.gemmStartup, j.boolean("gemm_startup"));
  ZP_ASSIGN_OR_RETURN(int64_t cores, j.integer("cores", 1, 4096));
  c.cores = static_cast<int>(cores);
  ZP_ASSIGN_OR_RETURN(c.storageMBps, j.number("storage_mb_per_s", 1e-6, 1e9));
  if (j.has("calibration")) {
    ZP_ASSIGN_OR_RETURN(JsonAt cal, j.at("calibration"));
    ZP_ASSIGN_OR_RETURN(int64_t runs, cal.integer("runs", 1, 1000000));
    c.calibrationRuns = static_cast<int>(runs);
    ZP_ASSIGN_OR_RETURN(c.executeFactor, cal.number("execute_factor", 1e-9, 1e9));
    ZP_ASSIGN_OR_RETURN(c.transformFactor, cal.number("transform_factor", 1e-9, 1e9));
    ZP_ASSIGN_OR_RETURN(c.transformOverheadMs, cal.number("transform_overhead_ms", 0, kMaxLatencyMs));
    ZP_ASSIGN_OR_RETURN(c.readLatencyMs, cal.number("read_latency_ms", 0, kMaxLatencyMs));
    if (cal.has("startup_factor")) {
      ZP_ASSIGN_OR_RETURN(c.startupFactor, cal.number("startup_factor", 1e-9, 1e9));
    }
    if (cal.has("setup_factor")) {
      ZP_ASSIGN_OR_RETURN(c.setupFactor, cal.number("setup_factor", 1e-9, 1e9));
    }
    if (cal.has("kernel_execute_factors")) {
      ZP_ASSIGN_OR_RETURN(JsonAt kernels, cal.at("kernel_execute_factors"));
      ZP_ASSIGN_OR_RETURN(auto members, kernels.members());
      for (const auto& [kernel, f] : members) {
        ZP_ASSIGN_OR_RETURN(c.kernelExecuteFactors[kernel], f.number(1e-9, 1e9));
      }
    }
  }
  ZP_ASSIGN_OR_RETURN(c.setupMs, j.number("setup_ms", 0, kMaxLatencyMs));
  ZP_ASSIGN_OR_RETURN(c.predictedColdMs, j.number("predicted_cold_ms", 0, kMaxLatencyMs));
  ZP_ASSIGN_OR_RETURN(c.predictedWarmReadyMs, j.number("predicted_warm_ready_ms", 0, kMaxLatencyMs));
  ZP_ASSIGN_OR_RETURN(c.predictedWarmMs, j.number("predicted_warm_ms", 0, kMaxLatencyMs));
  ZP_ASSIGN_OR_RETURN(c.solver, j.string("solver"));
  ZP_ASSIGN_OR_RETURN(c.status, j.string("status"));
  if (c.status != "optimal" && c.status != "heuristic")
    return j.error(fmt::format("status: '{}' is not optimal or heuristic", c.status));
  ZP_ASSIGN_OR_RETURN(c.searchSpace, j.string("search_space"));
  ZP_ASSIGN_OR_RETURN(c.lowerBoundMs, j.number("lower_bound_ms", 0, kMaxLatencyMs));
  ZP_ASSIGN_OR_RETURN(int64_t states, j.integer("states", 0));
  c.states = static_cast<uint64_t>(states);
  ZP_ASSIGN_OR_RETURN(auto nodes, j.array("nodes"));
  for (size_t i = 0; i < nodes.size(); ++i) {
    ZP_ASSIGN_OR_RETURN(auto n, nodeFrom(nodes[i], c.cores));
    if (n.step != static_cast<int>(i)) return nodes[i].error(fmt::format("step: expected {}", i));
    c.nodes.push_back(std::move(n));
  }
  ZP_ASSIGN_OR_RETURN(auto configs, j.array("configurations"));
  for (const auto& k : configs) {
    ZP_ASSIGN_OR_RETURN(auto cfg, configurationFrom(k));
    c.configurations.push_back(std::move(cfg));
  }
  return c;
}

}  // namespace zp::artifacts
