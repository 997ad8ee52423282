#include "libplan/runtime/serve/model_file_loader.h"

namespace zp::runtime::serve {

int64_t sessionBytes(const Session& session) {
  return static_cast<int64_t>(session.weightBytes() + session.arenaBytes() + session.scratchBytes());
}

Expected<LoadedSubgraph> ModelFileLoader::load(int slot, const ServeSlot& info, const SessionOptions& options) {
  if (slot < 0 || slot >= static_cast<int>(files_.size()))
    return makeError("subgraph '{}': no model file for slot {}", info.name, slot);
  SessionOptions o = options;
  o.cache = files_[static_cast<size_t>(slot)].cache;
  ZP_ASSIGN_OR_RETURN(auto session, Session::load(files_[static_cast<size_t>(slot)].model, o));
  const int64_t bytes = sessionBytes(*session);
  return LoadedSubgraph{std::move(session), bytes};
}

}  // namespace zp::runtime::serve
