#include "passes/coldstart/cold_problem.h"

#include <algorithm>
#include <map>

namespace zp::coldstart {

namespace {

// Rows of one step usable with `gemm`: measured with it, or using no GEMM library.
std::vector<const profile::ColdNodeCost*> usableRows(const std::vector<const profile::ColdNodeCost*>& rows,
                                                     const std::string& gemm, bool allowGemm) {
  std::vector<const profile::ColdNodeCost*> out;
  for (const auto* r : rows)
    if (r->gemm.empty() || (allowGemm && r->gemm == gemm)) out.push_back(r);
  return out;
}

}  // namespace

Expected<Problem> buildProblem(const profile::ColdProfile& profile, const std::string& model, const std::string& gemm,
                               int cores, const Knobs& knobs, bool allowGemm) {
  Problem p;
  p.model = model, p.gemm = gemm, p.cores = std::max(1, cores);
  auto m = std::find_if(profile.models.begin(), profile.models.end(), [&](const auto& c) { return c.model == model; });
  if (m == profile.models.end()) return makeError("cold profile: no model '{}'", model);
  p.setupMs = m->setupMs;
  if (allowGemm) {
    auto s = profile.gemmStartupMs.find(gemm);
    if (s == profile.gemmStartupMs.end()) return makeError("cold profile: no start-up time of GEMM library '{}'", gemm);
    p.gemmStartupMs = s->second;
  }
  std::map<int, std::vector<const profile::ColdNodeCost*>> bySteps;
  for (const auto& n : profile.nodes)
    if (n.model == model) bySteps[n.step].push_back(&n);
  const double bytesPerMs = profile.storageMBps * 1e3;
  for (const auto& [step, rows] : bySteps) {
    Step s;
    s.node = rows.front()->node;
    auto usable = usableRows(rows, gemm, allowGemm);
    if (usable.empty())
      return makeError("cold profile: model '{}' node '{}' has no kernel without GEMM library '{}'", model, s.node, gemm);
    if (!knobs.kernelSelection) {
      auto best = std::min_element(usable.begin(), usable.end(), [](const auto* a, const auto* b) {
        return a->warmExecMs < b->warmExecMs;  // ties: the first (profile order)
      });
      usable = {*best};
    }
    for (const auto* r : usable) {
      Option o{r->kernel, false, !r->gemm.empty(), 0, 0, r->firstExecMs, r->warmExecMs};
      if (!r->heavy()) {
        s.options.push_back(o);
        continue;
      }
      o.readMs = static_cast<double>(r->rawBytes) / bytesPerMs;
      o.transformMs = r->transformMs;
      s.options.push_back(o);
      if (knobs.caching) {
        Option c = o;
        c.cached = true;
        c.readMs = static_cast<double>(r->cacheBytes) / bytesPerMs;
        c.transformMs = 0;
        s.options.push_back(c);
      }
    }
    p.steps.push_back(std::move(s));
  }
  if (p.steps.empty()) return makeError("cold profile: model '{}' has no node rows", model);
  return p;
}

void dropDominated(Problem& p) {
  auto noWorse = [](const Option& a, const Option& b) {  // a is at least as good as b everywhere
    return a.readMs <= b.readMs && a.transformMs <= b.transformMs && a.execMs <= b.execMs && a.usesGemm <= b.usesGemm;
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
