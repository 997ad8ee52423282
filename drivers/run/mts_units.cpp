#include "drivers/run/mts_units.h"

#include <algorithm>

#include <fmt/format.h>

namespace zp::drivers {
namespace fs = std::filesystem;
using runtime::TensorMap;

namespace {

Status readUnits(Bundle& bundle, MtsBundleUnits& c) {
  for (const auto& g : c.mts->units) {
    ZP_ASSIGN_OR_RETURN(const plan::Unit* unit, bundle.unit(plan::UnitId::group(g.group)));
    c.groups.push_back(unit);
    std::vector<const plan::Unit*> members;
    for (const auto& b : g.members) {
      ZP_ASSIGN_OR_RETURN(const plan::Unit* mu, bundle.unit(plan::UnitId::model(g.group + "/" + b.task)));
      members.push_back(mu);
    }
    c.members.push_back(std::move(members));
  }
  return {};
}

// One member's samples, as its own model's input.
Expected<Dataset> memberSamples(Bundle& bundle, const plan::MtsPlanMember& b, const plan::Unit& unit, int limit,
                                int randomCount, uint64_t seed) {
  ZP_ASSIGN_OR_RETURN(const fs::path model, bundle.model(unit));
  runtime::SessionOptions so;
  so.checkModel = false;
  ZP_ASSIGN_OR_RETURN(auto session, runtime::Session::load(model, so));
  const auto& ins = session->inputs();
  auto io = std::find_if(ins.begin(), ins.end(), [&](const runtime::IoInfo& i) { return i.name == b.input; });
  if (io == ins.end()) return makeError("{}: has no input '{}' (task '{}')", model.string(), b.input, b.task);
  return bundle.samples(b.task, *io, limit, randomCount, seed);
}

}  // namespace

Expected<MtsBundleUnits> readMtsUnits(Bundle& bundle, int limit, int randomCount, uint64_t seed,
                                      bool wholeSplits) {
  MtsBundleUnits c;
  c.mts = &*bundle.plan().mts;
  ZP_ASSIGN_OR_RETURN(c.processors, bundle.processors(c.mts->processors));
  ZP_TRY(readUnits(bundle, c));
  for (size_t u = 0; u < c.mts->units.size(); ++u) {
    const auto& g = c.mts->units[u];
    MtsGroupSamples s;
    size_t n = SIZE_MAX;
    for (size_t k = 0; k < g.members.size(); ++k) {
      ZP_ASSIGN_OR_RETURN(Dataset d, memberSamples(bundle, g.members[k], *c.members[u][k], limit, randomCount, seed));
      n = std::min(n, d.samples.size());
      std::vector<TensorMap> ms;
      for (auto& x : d.samples) ms.push_back(TensorMap{{g.members[k].input, std::move(x)}});
      s.members.push_back(std::move(ms));
      s.labels.push_back(std::move(d.labels));
      s.sources.push_back(d.source);
    }
    if (!wholeSplits) {
      for (auto& ms : s.members) ms.resize(n);
      for (auto& ls : s.labels)
        if (ls.size() > n) ls.resize(n);
    }
    // Members that share the stitched input read the first one's sample.
    for (size_t i = 0; i < n; ++i) {
      TensorMap in;
      for (size_t k = 0; k < g.members.size(); ++k)
        in.emplace(g.members[k].stitchedInput, s.members[k][i].at(g.members[k].input));
      s.stitched.push_back(std::move(in));
    }
    c.samples.push_back(std::move(s));
  }
  return c;
}

}  // namespace zp::drivers
