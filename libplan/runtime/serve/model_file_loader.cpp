#include "libplan/runtime/serve/model_file_loader.h"

#include <algorithm>

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

Expected<std::vector<int>> stepPlacement(const Session& session, const std::map<std::string, int>& nodeProcessor,
                                         const std::string& label) {
  std::vector<int> placement;
  for (const auto& n : session.nodes()) {
    auto it = nodeProcessor.find(n.name);
    if (it == nodeProcessor.end())
      return makeError("{}: the runtime runs node '{}', which the plan does not place (plan made for another model?)",
                       label, n.name);
    placement.push_back(it->second);
  }
  if (placement.size() != nodeProcessor.size())
    return makeError("{}: the plan places {} nodes, the runtime runs {} (plan made for another model?)", label,
                     nodeProcessor.size(), placement.size());
  return placement;
}

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
  if (sessions.empty()) return makeError("{}: an operator placement on no processors", model.string());
  ZP_ASSIGN_OR_RETURN(auto steps, stepPlacement(*sessions.front(), placement.nodeProcessor,
                                                placement.source.empty() ? model.string() : placement.source));
  PlacedProgramParams pp;
  pp.exclusive = sharedCorePairs(placement.processors);  // e.g. a processor with all cores beside single-core ones
  ZP_ASSIGN_OR_RETURN(auto program, PlacedProgram::create(std::move(sessions), std::move(steps), pp));
  return PlacedExecutor::start(std::move(program), placement.processors);
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
