#include "passes/coldstart/cold_problem.h"

#include <algorithm>
#include <map>

namespace zp::coldstart {

Expected<Problem> buildProblem(const profile::ColdProfile& profile, const std::string& model,
                               const std::vector<std::string>& libraries, int cores, const Knobs& knobs) {
  Problem p;
  p.model = model, p.cores = std::max(1, cores);
  auto m = std::find_if(profile.models.begin(), profile.models.end(), [&](const auto& c) { return c.model == model; });
  if (m == profile.models.end()) return makeError("cold profile: no model '{}'", model);
  p.setupMs = m->setupMs;
  for (const auto& g : libraries) {
    auto s = profile.gemmStartupMs.find(g);
    if (s == profile.gemmStartupMs.end()) return makeError("cold profile: no start-up time of GEMM library '{}'", g);
    p.libraries.push_back({g, s->second});
  }
  std::stable_sort(p.libraries.begin(), p.libraries.end(),
                   [](const Library& a, const Library& b) { return a.startupMs < b.startupMs; });
  auto libraryIndex = [&](const std::string& g) {
    for (size_t l = 0; l < p.libraries.size(); ++l)
      if (p.libraries[l].name == g) return static_cast<int>(l);
    return -2;  // not usable
  };
  std::map<int, std::vector<const profile::ColdNodeCost*>> bySteps;
  for (const auto& n : profile.nodes)
    if (n.model == model) bySteps[n.step].push_back(&n);
  const double bytesPerMs = profile.storageMBps * 1e3;
  auto readMs = [&](int64_t bytes) { return bytes > 0 ? profile.storageLatencyMs + static_cast<double>(bytes) / bytesPerMs : 0.0; };
  for (const auto& [step, rows] : bySteps) {
    Step s;
    s.node = rows.front()->node;
    std::vector<const profile::ColdNodeCost*> usable;
    for (const auto* r : rows)
      if (r->gemm.empty() || libraryIndex(r->gemm) >= 0) usable.push_back(r);
    if (usable.empty())
      return makeError("cold profile: model '{}' node '{}' has no kernel on the GEMM libraries allowed", model, s.node);
    if (!knobs.kernelSelection) {
      auto best = std::min_element(usable.begin(), usable.end(), [](const auto* a, const auto* b) {
        return a->warmExecMs < b->warmExecMs;  // ties: the first (profile order)
      });
      usable = {*best};
    }
    for (const auto* r : usable) {
      Option o{r->kernel, false, r->gemm.empty() ? -1 : libraryIndex(r->gemm), 0, 0, r->firstExecMs, r->warmExecMs};
      if (!r->heavy()) {
        s.options.push_back(o);
        continue;
      }
      o.readMs = readMs(r->rawBytes);
      o.transformMs = r->transformMs;
      s.options.push_back(o);
      if (knobs.caching) {
        Option c = o;
        c.cached = true;
        c.readMs = readMs(r->cacheBytes);
        c.transformMs = 0;
        s.options.push_back(c);
      }
    }
    p.steps.push_back(std::move(s));
  }
  if (p.steps.empty()) return makeError("cold profile: model '{}' has no node rows", model);
  return p;
}

std::optional<Problem> restrictLibraries(const Problem& p, unsigned libraries, std::vector<std::vector<int>>* index) {
  Problem r = p;
  if (index) index->assign(p.steps.size(), {});
  for (size_t i = 0; i < p.steps.size(); ++i) {
    r.steps[i].options.clear();
    for (size_t o = 0; o < p.steps[i].options.size(); ++o) {
      const Option& opt = p.steps[i].options[o];
      if (opt.usesGemm() && !(libraries >> opt.gemm & 1u)) continue;
      r.steps[i].options.push_back(opt);
      if (index) (*index)[i].push_back(static_cast<int>(o));
    }
    if (r.steps[i].options.empty()) return std::nullopt;
  }
  return r;
}

void dropDominated(Problem& p) {
  auto noWorse = [](const Option& a, const Option& b) {  // a is at least as good as b everywhere
    return a.readMs <= b.readMs && a.transformMs <= b.transformMs && a.execMs <= b.execMs &&
           (!a.usesGemm() || a.gemm == b.gemm);
  };
  for (auto& s : p.steps) {
    std::vector<Option> kept;
    for (size_t i = 0; i < s.options.size(); ++i) {
      bool dominated = false;
      for (size_t j = 0; j < s.options.size() && !dominated; ++j) {
        if (i == j || !noWorse(s.options[j], s.options[i])) continue;
        // j dominates i when strictly better somewhere, or equal and earlier.
        dominated = !noWorse(s.options[i], s.options[j]) || j < i;
      }
      if (!dominated) kept.push_back(s.options[i]);
    }
    s.options = std::move(kept);
  }
}

}  // namespace zp::coldstart
