#include "passes/coldstart/pipeline.h"

#include <algorithm>
#include <cassert>

namespace zp::coldstart {

bool needsCore(const Option& o) { return o.transforms() && o.transformMs > 0; }

bool usesGemm(const Problem& p, const Choice& c) {
  for (size_t i = 0; i < p.steps.size(); ++i)
    if (p.steps[i].options[c[i].option].usesGemm) return true;
  return false;
}

Timeline simulate(const Problem& p, const Choice& c) {
  assert(c.size() == p.steps.size());
  Timeline t;
  t.gemmStartup = usesGemm(p, c);
  t.coreFree.assign(p.cores, p.setupMs);
  double gemmReady = p.setupMs;
  if (t.gemmStartup) {
    gemmReady += p.gemmStartupMs;
    t.coreFree[p.cores - 1] = gemmReady;
  }
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
    s.execStart = std::max({execEnd, ready, t.coreFree[0], o.usesGemm ? gemmReady : 0.0});
    s.execEnd = execEnd = t.coreFree[0] = s.execStart + o.execMs;
    t.steps.push_back(s);
  }
  t.latencyMs = execEnd;
  t.diskFree = disk;
  return t;
}

Timeline simulateSerial(const Problem& p, const Choice& c) {
  Timeline t;
  t.gemmStartup = usesGemm(p, c);
  double now = p.setupMs + (t.gemmStartup ? p.gemmStartupMs : 0);
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
