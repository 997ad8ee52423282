#include "libplan/artifacts/cold_run_json.h"

#include "libplan/util/json_reader.h"

namespace zp::artifacts {
namespace fs = std::filesystem;

namespace {

constexpr double kMaxMs = 1e9;

Expected<profile::Span> readSpan(const JsonAt& j) {
  profile::Span s;
  ZP_ASSIGN_OR_RETURN(s.startMs, j.number("start_ms", 0, kMaxMs));
  ZP_ASSIGN_OR_RETURN(s.endMs, j.number("end_ms", s.startMs, kMaxMs));
  return s;
}

// A span that may be null (the node had no such task) or not done (it failed).
Expected<std::optional<profile::Span>> optionalSpan(const JsonAt& node, std::string_view key) {
  if (!node.has(key) || node.json()[key].is_null()) return std::optional<profile::Span>{};
  ZP_ASSIGN_OR_RETURN(JsonAt j, node.at(key));
  if (j.has("done")) {
    ZP_ASSIGN_OR_RETURN(bool done, j.boolean("done"));
    if (!done) return std::optional<profile::Span>{};
  }
  ZP_ASSIGN_OR_RETURN(profile::Span s, readSpan(j));
  return std::optional<profile::Span>{s};
}

Expected<profile::MeasuredColdNode> readNode(const JsonAt& j, int index) {
  profile::MeasuredColdNode n;
  ZP_ASSIGN_OR_RETURN(int64_t step, j.integer("step", index, index));
  n.step = static_cast<int>(step);
  ZP_ASSIGN_OR_RETURN(n.node, j.string("node"));
  if (n.node.empty()) return j.error("node: empty name");
  ZP_ASSIGN_OR_RETURN(n.kernel, j.string("kernel"));
  ZP_ASSIGN_OR_RETURN(n.gemm, j.string("gemm"));
  ZP_ASSIGN_OR_RETURN(n.weights, j.string("weights"));
  if (n.weights != "none" && n.weights != "cache" && n.weights != "transform")
    return j.error(fmt::format("weights: '{}' is not none, cache or transform", n.weights));
  if ((n.weights == "none") != n.kernel.empty()) return j.error("a node has heavy weights exactly when it names a kernel");
  ZP_ASSIGN_OR_RETURN(n.read, optionalSpan(j, "read"));
  ZP_ASSIGN_OR_RETURN(n.transform, optionalSpan(j, "transform"));
  ZP_ASSIGN_OR_RETURN(JsonAt e, j.at("execute"));
  ZP_ASSIGN_OR_RETURN(n.execute, readSpan(e));
  return n;
}

// A cold-run start-up that finished; none for the warm kernels' or one not done.
Expected<std::optional<profile::MeasuredStartup>> readStartup(const JsonAt& j) {
  profile::MeasuredStartup s;
  ZP_ASSIGN_OR_RETURN(s.library, j.string("library"));
  if (s.library.empty()) return j.error("library: empty");
  bool warm = false, done = true;
  if (j.has("warm")) {
    ZP_ASSIGN_OR_RETURN(warm, j.boolean("warm"));
  }
  if (j.has("done")) {
    ZP_ASSIGN_OR_RETURN(done, j.boolean("done"));
  }
  if (warm || !done) return std::optional<profile::MeasuredStartup>{};
  ZP_ASSIGN_OR_RETURN(s.span, readSpan(j));
  return std::optional<profile::MeasuredStartup>{std::move(s)};
}

}  // namespace

Expected<profile::MeasuredColdRun> parseColdRunReport(const Json& doc, const std::string& label) {
  JsonAt top(doc, label);
  JsonAt root = top;
  if (top.has("cold_plan_run")) {
    ZP_ASSIGN_OR_RETURN(root, top.at("cold_plan_run"));
  } else if (!top.has("nodes")) {
    return top.error("no 'cold_plan_run' section: not the report of plan-run --cold --json");
  }
  profile::MeasuredColdRun r;
  ZP_ASSIGN_OR_RETURN(r.configuration, root.string("configuration"));
  ZP_ASSIGN_OR_RETURN(int64_t cores, root.integer("cores", 1, 4096));
  r.cores = static_cast<int>(cores);
  ZP_ASSIGN_OR_RETURN(r.runEndMs, root.number("run_end_ms", 0, kMaxMs));
  if (root.has("setup_ms")) {  // reports before setup was calibrated may lack it
    ZP_ASSIGN_OR_RETURN(r.setupMs, root.number("setup_ms", 0, kMaxMs));
  }
  ZP_ASSIGN_OR_RETURN(auto nodes, root.array("nodes"));
  if (nodes.empty()) return root.error("nodes: empty");
  for (size_t i = 0; i < nodes.size(); ++i) {
    ZP_ASSIGN_OR_RETURN(profile::MeasuredColdNode n, readNode(nodes[i], static_cast<int>(i)));
    r.nodes.push_back(std::move(n));
  }
  if (root.has("gemm_startups")) {  // reports before start-ups were recorded lack it
    ZP_ASSIGN_OR_RETURN(auto startups, root.array("gemm_startups"));
    for (const JsonAt& s : startups) {
      ZP_ASSIGN_OR_RETURN(std::optional<profile::MeasuredStartup> m, readStartup(s));
      if (m) r.startups.push_back(std::move(*m));
    }
  }
  return r;
}

Expected<profile::MeasuredColdRun> readColdRunReport(const fs::path& path) {
  ZP_ASSIGN_OR_RETURN(Json doc, readJsonFile(path));
  return parseColdRunReport(doc, path.string());
}

Json coldRunReportJson(const profile::MeasuredColdRun& run) {
  auto span = [](const profile::Span& s) { return Json{{"start_ms", s.startMs}, {"end_ms", s.endMs}}; };
  auto optional = [&](const std::optional<profile::Span>& s) { return s ? span(*s) : Json(nullptr); };
  Json nodes = Json::array();
  for (const auto& n : run.nodes)
    nodes.push_back(Json{{"step", n.step}, {"node", n.node}, {"kernel", n.kernel}, {"gemm", n.gemm},
                         {"weights", n.weights}, {"read", optional(n.read)}, {"transform", optional(n.transform)},
                         {"execute", span(n.execute)}});
  Json startups = Json::array();
  for (const auto& s : run.startups)
    startups.push_back(Json{{"library", s.library}, {"start_ms", s.span.startMs}, {"end_ms", s.span.endMs}});
  return Json{{"configuration", run.configuration}, {"cores", run.cores}, {"setup_ms", run.setupMs},
              {"run_end_ms", run.runEndMs},
              {"nodes", std::move(nodes)}, {"gemm_startups", std::move(startups)}};
}

}  // namespace zp::artifacts
