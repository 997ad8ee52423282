#include "libplan/runtime/serve/model_file_loader.h"

#include <algorithm>
#include <cassert>

namespace zp::runtime::serve {

int64_t sessionBytes(const Session& session) {
  return static_cast<int64_t>(session.weightBytes() + session.arenaBytes() + session.scratchBytes());
}

int64_t placedBytes(const PlacedProgram& program) {
  int64_t bytes = static_cast<int64_t>(program.arenaBytes());
  for (int p = 0; p < program.processors(); ++p)
    bytes += static_cast<int64_t>(program.session(p).weightBytes() + program.session(p).scratchBytes());
  return bytes;
}

Expected<std::vector<int>> stepPlacement(const Session& session, const OperatorPlacement& op,
                                         const std::string& label) {
  const auto& nodeProcessor = op.nodeProcessor;
  std::vector<int> placement;
  for (const auto& n : session.nodes()) {
    auto it = nodeProcessor.find(n.name);
    if (it == nodeProcessor.end())
      return makeError("{}: the runtime runs node '{}', which the plan does not place (plan made for another model?)",
                       label, n.name);
    if (it->second < 0 || it->second >= static_cast<int>(op.processors.size()))
      return makeError("{}: node '{}' is placed on processor {}, of {}", label, n.name, it->second,
                       op.processors.size());
    placement.push_back(it->second);
  }
  if (!op.placesGraphNodes && placement.size() != nodeProcessor.size())
    return makeError("{}: the plan places {} nodes, the runtime runs {} (plan made for another model?)", label,
                     nodeProcessor.size(), placement.size());
  return placement;
}

namespace {

// The part of each step: the longest `parts` entry its name starts with ("PART/"), -1 for none.
std::vector<int> partOfSteps(const std::vector<NodeInfo>& nodes, const std::vector<std::string>& parts) {
  std::vector<int> part(nodes.size(), -1);
  for (size_t s = 0; s < nodes.size(); ++s) {
    size_t longest = 0;
    for (size_t k = 0; k < parts.size(); ++k)
      if (parts[k].size() + 1 > longest && nodes[s].name.rfind(parts[k] + "/", 0) == 0)
        part[s] = static_cast<int>(k), longest = parts[k].size() + 1;
  }
  return part;
}

// (step, earlier step) pairs: a following part's first step on each processor
// waits for the followed part's last step on each processor.
Expected<std::vector<std::pair<int, int>>> partWaits(const Session& session, const std::vector<int>& placement,
                                                     const OperatorPlacement& op, const std::string& label) {
  std::vector<std::string> parts;
  for (const auto& [a, b] : op.partAfter)
    for (const auto* name : {&a, &b})
      if (std::find(parts.begin(), parts.end(), *name) == parts.end()) parts.push_back(*name);
  const auto partOf = partOfSteps(session.nodes(), parts);
  const size_t procs = op.processors.size();
  std::vector<std::vector<int>> first(parts.size(), std::vector<int>(procs, -1)), last = first;
  for (size_t s = 0; s < placement.size(); ++s) {
    if (partOf[s] < 0) continue;
    auto& f = first[static_cast<size_t>(partOf[s])][static_cast<size_t>(placement[s])];
    if (f < 0) f = static_cast<int>(s);
    last[static_cast<size_t>(partOf[s])][static_cast<size_t>(placement[s])] = static_cast<int>(s);
  }
  std::vector<std::pair<int, int>> waits;
  for (const auto& [a, b] : op.partAfter) {
    const auto pa = static_cast<size_t>(std::find(parts.begin(), parts.end(), a) - parts.begin());
    const auto pb = static_cast<size_t>(std::find(parts.begin(), parts.end(), b) - parts.begin());
    if (std::all_of(first[pa].begin(), first[pa].end(), [](int s) { return s < 0; }) ||
        std::all_of(last[pb].begin(), last[pb].end(), [](int s) { return s < 0; }))
      return makeError("{}: part '{}' follows '{}', but one of them names no step", label, a, b);
    for (int s : first[pa])
      for (int t : last[pb]) {
        if (s >= 0 && t >= 0 && t < s) waits.emplace_back(s, t);  // a later step waits for an earlier one only
      }
  }
  return waits;
}

Expected<std::unique_ptr<PlacedExecutor>> placedProgram(std::vector<std::unique_ptr<Session>> sessions,
                                                        const OperatorPlacement& placement, const std::string& label) {
  if (sessions.empty()) return makeError("{}: an operator placement on no processors", label);
  ZP_ASSIGN_OR_RETURN(auto steps, stepPlacement(*sessions.front(), placement,
                                                placement.source.empty() ? label : placement.source));
  PlacedProgramParams pp;
  pp.exclusive = sharedCorePairs(placement.processors);  // e.g. a processor with all cores beside single-core ones
  ZP_ASSIGN_OR_RETURN(pp.orderAfter, partWaits(*sessions.front(), steps, placement, label));
  ZP_ASSIGN_OR_RETURN(auto program, PlacedProgram::create(std::move(sessions), std::move(steps), pp));
  return PlacedExecutor::start(std::move(program), placement.processors);
}

}  // namespace

Expected<std::unique_ptr<PlacedExecutor>> loadPlaced(const std::filesystem::path& model,
                                                     const OperatorPlacement& placement,
                                                     std::vector<std::string>* warnings) {
  std::vector<std::unique_ptr<Session>> sessions;
  for (size_t p = 0; p < placement.processors.size(); ++p) {
    SessionOptions o = sessionOptions(placement.processors[p]);
    if (p < placement.caches.size()) o.cache = placement.caches[p];
    ZP_ASSIGN_OR_RETURN(auto s, Session::load(model, o));
    if (warnings)
      for (const auto& w : s->warnings())
        if (std::find(warnings->begin(), warnings->end(), w) == warnings->end()) warnings->push_back(w);
    sessions.push_back(std::move(s));
  }
  return placedProgram(std::move(sessions), placement, model.string());
}

Expected<std::unique_ptr<PlacedExecutor>> loadPlaced(const onnx::ModelProto& model, const std::string& label,
                                                     const OperatorPlacement& placement) {
  assert(placement.caches.empty() && "a model built in memory has no weight caches");
  std::vector<std::unique_ptr<Session>> sessions;
  for (const auto& p : placement.processors) {
    ZP_ASSIGN_OR_RETURN(auto s, Session::fromModel(model, label, sessionOptions(p)));
    sessions.push_back(std::move(s));
  }
  return placedProgram(std::move(sessions), placement, label);
}

Expected<LoadedSubgraph> ModelFileLoader::load(int slot, const ServeSlot& info, const SessionOptions& options) {
  if (slot < 0 || slot >= static_cast<int>(files_.size()))
    return makeError("subgraph '{}': no model file for slot {}", info.name, slot);
  return loadUnit(files_[static_cast<size_t>(slot)], options);
}

Expected<LoadedSubgraph> loadUnit(const SubgraphFiles& f, const SessionOptions& options) {
  if (f.placement) {
    ZP_ASSIGN_OR_RETURN(auto placed, loadPlaced(f.model, *f.placement));
    const int64_t bytes = placedBytes(placed->program());
    return LoadedSubgraph{std::move(placed), bytes};
  }
  SessionOptions o = options;
  o.cache = f.cache;
  if (f.coldSchedule) {
    o.coldSchedule = f.coldSchedule;
    o.cacheIsForModel = true;  // plan-emit wrote the cold cache from this very model
  }
  ZP_ASSIGN_OR_RETURN(auto session, Session::load(f.model, o));
  const int64_t bytes = sessionBytes(*session);
  return LoadedSubgraph{std::move(session), bytes};
}

}  // namespace zp::runtime::serve
