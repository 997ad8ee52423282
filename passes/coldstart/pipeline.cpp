#include "passes/coldstart/pipeline.h"

#include <algorithm>
#include <cassert>

namespace zp::coldstart {

bool needsCore(const Option& o) { return o.transforms() && o.transformMs > 0; }

unsigned librariesUsed(const Problem& p, const Choice& c) {
  unsigned used = 0;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const Option& o = p.steps[i].options[c[i].option];
    if (o.usesGemm()) used |= 1u << o.gemm;
  }
  return used;
}

namespace {

// The used libraries' start-ups one after another from `from`; returns when the last ends.
double startLibraries(const Problem& p, unsigned used, double from, Timeline& t) {
  t.libraryReady.assign(p.libraries.size(), p.setupMs);
  double at = from;
  for (size_t l = 0; l < p.libraries.size(); ++l) {
    if (!(used >> l & 1u)) continue;
    at += p.libraries[l].startupMs;
    t.libraryReady[l] = at;
    t.startups.push_back(static_cast<int>(l));
  }
  return at;
}

}  // namespace

Timeline simulate(const Problem& p, const Choice& c) {
  assert(c.size() == p.steps.size());
  Timeline t;
  t.coreFree.assign(p.cores, p.setupMs);
  const double startupsEnd = startLibraries(p, librariesUsed(p, c), p.setupMs, t);
  if (!t.startups.empty()) t.coreFree[p.cores - 1] = startupsEnd;
  double disk = p.setupMs, execEnd = p.setupMs;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const Option& o = p.steps[i].options[c[i].option];
    StepTimes s;
    s.readStart = disk;
    s.readEnd = disk = disk + o.readMs;
    double ready = s.readEnd;
    s.transformStart = s.transformEnd = ready;
    if (needsCore(o)) {
      assert(c[i].core >= 0 && c[i].core < p.cores);
      double& free = t.coreFree[c[i].core];
      s.transformStart = std::max(ready, free);
      s.transformEnd = free = s.transformStart + o.transformMs;
      ready = s.transformEnd;
    }
    s.execStart = std::max({execEnd, ready, t.coreFree[0], o.usesGemm() ? t.libraryReady[o.gemm] : 0.0});
    s.execEnd = execEnd = t.coreFree[0] = s.execStart + o.execMs;
    t.steps.push_back(s);
  }
  t.latencyMs = execEnd;
  t.diskFree = disk;
  return t;
}

Timeline simulateSerial(const Problem& p, const Choice& c) {
  Timeline t;
  double now = startLibraries(p, librariesUsed(p, c), p.setupMs, t);
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const Option& o = p.steps[i].options[c[i].option];
    StepTimes s;
    s.readStart = now;
    s.readEnd = now += o.readMs;
    s.transformStart = now;
    s.transformEnd = now += o.transforms() ? o.transformMs : 0;
    t.steps.push_back(s);
  }
  for (size_t i = 0; i < p.steps.size(); ++i) {
    t.steps[i].execStart = now;
    t.steps[i].execEnd = now += p.steps[i].options[c[i].option].execMs;
  }
  t.latencyMs = now;
  t.diskFree = now;
  t.coreFree.assign(p.cores, now);
  return t;
}

}  // namespace zp::coldstart
