#include "libplan/runtime/serve/arrivals.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "libplan/util/validate.h"

namespace zp::runtime::serve {

namespace {
// splitmix64: independent, reproducible streams per task from one seed.
uint64_t mixSeed(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Exponential gap from 53 random bits: std::exponential_distribution's output is
// left to the standard library, this is the same on every platform.
double exponentialGapMs(std::mt19937_64& rng, double rateQps) {
  const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1)
  return -std::log1p(-u) / rateQps * 1000.0;
}

Status checkParams(const ArrivalParams& p) {
  if (p.tasks.empty()) return makeError("arrivals: no tasks");
  if ((p.durationMs > 0) == (p.count > 0)) return makeError("arrivals: give either a duration or a count per task");
  if (auto problem = numberProblem(p.durationMs, 0, kMaxLatencyMs)) return makeError("arrivals: duration {}", *problem);
  if (p.count < 0) return makeError("arrivals: count {} is negative", p.count);
  std::set<std::string> names;
  for (const auto& t : p.tasks) {
    if (auto problem = idProblem(t.task)) return makeError("arrivals: task '{}': {}", t.task, *problem);
    if (!names.insert(t.task).second) return makeError("arrivals: task '{}' is listed twice", t.task);
    if (auto problem = numberProblem(t.rateQps, 1e-6, 1e6))
      return makeError("arrivals: task '{}': rate {}", t.task, *problem);
    if (t.samples < 1) return makeError("arrivals: task '{}': no dataset samples", t.task);
  }
  return {};
}
}  // namespace

Expected<ArrivalTrace> generateArrivals(const ArrivalParams& p) {
  ZP_TRY(checkParams(p));
  struct Keyed {
    Arrival a;
    int k;
  };
  std::vector<Keyed> all;
  ArrivalTrace trace;
  for (size_t i = 0; i < p.tasks.size(); ++i) {
    const auto& t = p.tasks[i];
    trace.tasks.push_back(t.task);
    std::mt19937_64 rng(mixSeed(p.seed ^ mixSeed(i)));
    const double periodMs = 1000.0 / t.rateQps;
    double time = t.process == ArrivalProcess::Periodic ? 0.0 : exponentialGapMs(rng, t.rateQps);
    for (int k = 0; p.count > 0 ? k < p.count : time < p.durationMs; ++k) {
      all.push_back({{time, static_cast<int>(i), k % t.samples}, k});
      time = t.process == ArrivalProcess::Periodic ? (k + 1) * periodMs : time + exponentialGapMs(rng, t.rateQps);
    }
  }
  std::sort(all.begin(), all.end(), [](const Keyed& x, const Keyed& y) {
    if (x.a.timeMs != y.a.timeMs) return x.a.timeMs < y.a.timeMs;
    return x.a.task != y.a.task ? x.a.task < y.a.task : x.k < y.k;
  });
  for (const auto& k : all) trace.arrivals.push_back(k.a);
  // Serving nothing would report no violations: a duration shorter than every first gap is a mistake.
  if (trace.arrivals.empty())
    return makeError("arrivals: no query arrives within {:g} ms at these rates; lengthen the duration", p.durationMs);
  return trace;
}

}  // namespace zp::runtime::serve
