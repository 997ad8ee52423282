#include "libplan/artifacts/latency_model_json.h"

#include <set>

#include "libplan/util/file.h"
#include "libplan/util/json_reader.h"
#include "libplan/util/validate.h"

namespace zp::artifacts {

std::string formatLatencyModel(const std::vector<estimate::TaskLatencyModel>& tasks) {
  Json j{{"schema_version", 1}, {"tasks", Json::array()}};
  for (const auto& t : tasks) {
    Json tj{{"name", t.task}, {"positions", t.positions}, {"boundary_bytes", Json::array()},
            {"subgraph_ms", Json::array()}, {"overhead_ms", Json::object()}, {"transitions", Json::array()}};
    for (double b : t.boundaryBytes) tj["boundary_bytes"].push_back(static_cast<int64_t>(b));
    for (const auto& [key, ms] : t.model.subgraphs()) {
      const auto& [position, variant, processor] = key;
      tj["subgraph_ms"].push_back(Json{{"position", position}, {"variant", variant}, {"processor", processor}, {"ms", ms}});
    }
    for (const auto& [processor, ms] : t.model.overheads()) tj["overhead_ms"][processor] = ms;
    for (const auto& [pair, cost] : t.model.transitions())
      tj["transitions"].push_back(
          Json{{"from", pair.first}, {"to", pair.second}, {"fixed_ms", cost.fixedMs}, {"ms_per_byte", cost.msPerByte}});
    j["tasks"].push_back(std::move(tj));
  }
  return canonicalJsonExact(j);
}

namespace {

Expected<estimate::TaskLatencyModel> parseTask(const JsonAt& t) {
  ZP_TRY(t.onlyKeys({"name", "positions", "boundary_bytes", "subgraph_ms", "overhead_ms", "transitions"}));
  estimate::TaskLatencyModel m;
  ZP_ASSIGN_OR_RETURN(m.task, t.id("name"));
  ZP_ASSIGN_OR_RETURN(int64_t positions, t.integer("positions", 1, 1'000'000));
  m.positions = static_cast<int>(positions);
  ZP_ASSIGN_OR_RETURN(auto bytes, t.array("boundary_bytes"));
  if (bytes.size() + 1 != static_cast<size_t>(m.positions))
    return t.error(fmt::format("boundary_bytes: {} entries for {} positions (expected positions - 1)", bytes.size(),
                               m.positions));
  for (const auto& b : bytes) {
    ZP_ASSIGN_OR_RETURN(int64_t v, b.integer(0, kMaxBytes));
    m.boundaryBytes.push_back(static_cast<double>(v));
  }
  ZP_ASSIGN_OR_RETURN(auto subgraphs, t.array("subgraph_ms"));
  std::set<std::tuple<int, std::string, std::string>> seen;
  for (const auto& s : subgraphs) {
    ZP_TRY(s.onlyKeys({"position", "variant", "processor", "ms"}));
    ZP_ASSIGN_OR_RETURN(int64_t pos, s.integer("position", 0, m.positions - 1));
    ZP_ASSIGN_OR_RETURN(std::string variant, s.id("variant"));
    ZP_ASSIGN_OR_RETURN(std::string processor, s.id("processor"));
    ZP_ASSIGN_OR_RETURN(double ms, s.number("ms", 0, kMaxLatencyMs));
    if (!seen.insert({static_cast<int>(pos), variant, processor}).second)
      return s.error(fmt::format("position {} variant '{}' on '{}' given twice", pos, variant, processor));
    m.model.setSubgraph(static_cast<int>(pos), variant, processor, ms);
  }
  ZP_ASSIGN_OR_RETURN(JsonAt overheads, t.at("overhead_ms"));
  ZP_ASSIGN_OR_RETURN(auto members, overheads.members());
  for (const auto& [processor, ms] : members) {
    if (auto p = idProblem(processor)) return ms.error(*p);
    ZP_ASSIGN_OR_RETURN(double v, ms.number(0, kMaxLatencyMs));
    m.model.setOverhead(processor, v);
  }
  ZP_ASSIGN_OR_RETURN(auto transitions, t.array("transitions"));
  for (const auto& x : transitions) {
    ZP_TRY(x.onlyKeys({"from", "to", "fixed_ms", "ms_per_byte"}));
    ZP_ASSIGN_OR_RETURN(std::string from, x.id("from"));
    ZP_ASSIGN_OR_RETURN(std::string to, x.id("to"));
    if (from == to) return x.error(fmt::format("a transition from '{}' to itself", from));
    estimate::TransitionCost c;
    ZP_ASSIGN_OR_RETURN(c.fixedMs, x.number("fixed_ms", 0, kMaxLatencyMs));
    ZP_ASSIGN_OR_RETURN(c.msPerByte, x.number("ms_per_byte", 0, kMaxLatencyMs));
    m.model.setTransition(from, to, c);
  }
  return m;
}

}  // namespace

Expected<std::vector<estimate::TaskLatencyModel>> parseLatencyModel(std::string_view text, const std::string& label) {
  ZP_ASSIGN_OR_RETURN(Json j, parseJson(text, label));
  JsonAt root(j, label);
  ZP_TRY(root.onlyKeys({"schema_version", "tasks"}));
  ZP_ASSIGN_OR_RETURN(int64_t version, root.integer("schema_version"));
  if (version != 1) return makeError("{}: $.schema_version: {} (this reader knows 1)", label, version);
  ZP_ASSIGN_OR_RETURN(auto tasks, root.array("tasks"));
  std::vector<estimate::TaskLatencyModel> out;
  std::set<std::string> names;
  for (const auto& t : tasks) {
    ZP_ASSIGN_OR_RETURN(auto m, parseTask(t));
    if (!names.insert(m.task).second) return t.error(fmt::format("task '{}' given twice", m.task));
    out.push_back(std::move(m));
  }
  return out;
}

Expected<std::vector<estimate::TaskLatencyModel>> readLatencyModel(const std::filesystem::path& path) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  return parseLatencyModel(text, path.string());
}

}  // namespace zp::artifacts
