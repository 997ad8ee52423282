#include "passes/coldstart/calibration.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

namespace zp::coldstart {

std::string kernelKey(const std::string& kernel, const std::string& gemm) {
  return gemm.empty() ? kernel : kernel + "/" + gemm;
}

namespace {

using RowKey = std::tuple<int, std::string, std::string>;  // step, kernel, gemm

// One piece of work measured in several runs: its profiled size (bytes or ms) and
// each run's time. A piece's median over the runs is what is fitted: one run's slow
// spell (a worker preempted for 3 ms in a 0.01 ms transform) is not a trend.
struct Piece {
  double x = 0;
  std::vector<double> ms;
};
using Pieces = std::map<std::tuple<int, std::string, std::string, std::string>, Piece>;  // row key + what

struct Samples {
  Pieces reads, transforms, executes;
  std::map<std::string, Piece> startups;  // by library
};

double median(std::vector<double> v) {
  assert(!v.empty());
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

template <typename Map>
std::vector<std::pair<double, double>> medians(const Map& pieces) {
  std::vector<std::pair<double, double>> out;
  for (const auto& [key, p] : pieces) out.push_back({p.x, median(p.ms)});
  return out;
}

// y = fixed + slope * x by least squares; where that gives a negative fixed cost or
// slope, or the x are all equal, y = slope * x with the ratio of sums. Nothing
// (slope 0) when there are no points or no x.
struct Line {
  double fixed = 0, slope = 0;
};

Line fitLine(const std::vector<std::pair<double, double>>& points) {
  double sx = 0, sy = 0;
  for (const auto& [x, y] : points) sx += x, sy += y;
  if (points.empty() || sx <= 0 || sy <= 0) return {};
  const double n = static_cast<double>(points.size()), mx = sx / n, my = sy / n;
  double sxx = 0, sxy = 0;
  for (const auto& [x, y] : points) sxx += (x - mx) * (x - mx), sxy += (x - mx) * (y - my);
  if (sxx > 0) {
    const double slope = sxy / sxx, fixed = my - slope * mx;
    if (slope > 0 && fixed >= 0) return {fixed, slope};
  }
  return {0, sy / sx};
}

double ratioOfSums(const std::vector<std::pair<double, double>>& points) {
  double sx = 0, sy = 0;
  for (const auto& [x, y] : points) sx += x, sy += y;
  return sx > 0 && sy > 0 ? sy / sx : 0;
}

Status addRun(const std::map<RowKey, const profile::ColdNodeCost*>& rows, const profile::ColdProfile& profile,
              const std::string& model, const std::string& source, const profile::MeasuredColdRun& run, Samples& s) {
  for (const auto& st : run.startups) {
    auto it = profile.gemmStartupMs.find(st.library);
    if (it == profile.gemmStartupMs.end())
      return makeError("{}: GEMM library '{}' started, the cold profile has no start-up time for it", source,
                       st.library);
    Piece& p = s.startups[st.library];
    p.x = it->second;
    p.ms.push_back(st.span.ms());
  }
  for (const auto& n : run.nodes) {
    auto it = rows.find({n.step, n.kernel, n.gemm});
    if (it == rows.end())
      return makeError("{}: step {} ('{}', kernel '{}'{}) is not in the cold profile of '{}' (a run of "
                       "another model, or of a plan from another profile?)",
                       source, n.step, n.node, n.kernel, n.gemm.empty() ? "" : " on " + n.gemm, model);
    const profile::ColdNodeCost& c = *it->second;
    if (c.node != n.node)
      return makeError("{}: step {} runs '{}', the cold profile of '{}' has '{}' there", source, n.step, n.node, model,
                       c.node);
    auto add = [&](Pieces& pieces, double x, double ms) {
      Piece& p = pieces[{n.step, n.kernel, n.gemm, n.weights}];
      p.x = x;
      p.ms.push_back(ms);
    };
    if (n.read) add(s.reads, static_cast<double>(n.weights == "cache" ? c.cacheBytes : c.rawBytes), n.read->ms());
    if (n.transform && n.weights == "transform") add(s.transforms, c.transformMs, n.transform->ms());
    add(s.executes, c.firstExecMs, n.execute.ms());
  }
  return {};
}

// Per heavy kernel with at least kMinKernelNodes nodes: the ratio of sums of its
// nodes' executes (each node's median over the runs) to their profiled ones.
std::map<std::string, double> kernelFactors(const Pieces& executes) {
  std::map<std::string, std::vector<std::pair<double, double>>> byKernel;
  std::map<std::string, std::set<int>> steps;
  for (const auto& [key, p] : executes) {
    const auto& [step, kernel, gemm, weights] = key;
    if (kernel.empty()) continue;
    const std::string k = kernelKey(kernel, gemm);
    byKernel[k].push_back({p.x, median(p.ms)});
    steps[k].insert(step);
  }
  std::map<std::string, double> out;
  for (const auto& [kernel, points] : byKernel)
    if (static_cast<int>(steps[kernel].size()) >= kMinKernelNodes)
      if (const double f = ratioOfSums(points); f > 0) out[kernel] = f;
  return out;
}

// The median measured setup over the profiled one (0: no run reported its setup,
// or the profile has none). A fresh process maps, parses and builds with cold
// caches and page faults; every run pays it once, so the median is the estimate.
double setupFactor(const profile::ColdProfile& profile, const std::string& model,
                   const std::vector<profile::MeasuredColdRun>& runs) {
  double profiled = 0;
  for (const auto& m : profile.models)
    if (m.model == model) profiled = m.setupMs;
  std::vector<double> measured;
  for (const auto& r : runs)
    if (r.setupMs > 0) measured.push_back(r.setupMs);
  return profiled > 0 && !measured.empty() ? median(measured) / profiled : 0;
}

}  // namespace

Expected<Calibration> calibrate(const profile::ColdProfile& profile, const std::string& model,
                                const std::vector<profile::MeasuredColdRun>& runs,
                                const std::vector<std::string>& sources) {
  assert(sources.size() == runs.size());
  std::map<RowKey, const profile::ColdNodeCost*> rows;
  for (const auto& n : profile.nodes)
    if (n.model == model) rows[{n.step, n.kernel, n.gemm}] = &n;
  if (rows.empty()) return makeError("cold profile: no model '{}'", model);
  Samples s;
  for (size_t r = 0; r < runs.size(); ++r) ZP_TRY(addRun(rows, profile, model, sources[r], runs[r], s));
  Calibration c;
  c.runs = static_cast<int>(runs.size());
  if (c.runs == 0) return c;
  c.executeFactor = ratioOfSums(medians(s.executes));
  if (c.executeFactor <= 0) return makeError("cold runs of '{}': no node took measurable time to execute", model);
  if (const double f = ratioOfSums(medians(s.startups)); f > 0) c.startupFactor = f;
  if (const double f = setupFactor(profile, model, runs); f > 0) c.setupFactor = f;
  c.kernelExecuteFactor = kernelFactors(s.executes);
  if (const Line t = fitLine(medians(s.transforms)); t.slope > 0) c.transformFactor = t.slope, c.transformOverheadMs = t.fixed;
  if (const Line r = fitLine(medians(s.reads)); r.slope > 0) c.readMBps = 1.0 / r.slope / 1e3, c.readLatencyMs = r.fixed;
  return c;
}

profile::ColdProfile applyCalibration(const profile::ColdProfile& profile, const std::string& model,
                                      const Calibration& c) {
  profile::ColdProfile p = profile;
  if (c.runs == 0) return p;
  if (c.readMBps > 0) p.storageMBps = c.readMBps, p.storageLatencyMs = c.readLatencyMs;
  for (auto& [library, ms] : p.gemmStartupMs) ms *= c.startupFactor;
  for (auto& m : p.models)
    if (m.model == model) m.setupMs *= c.setupFactor;
  for (auto& n : p.nodes) {
    if (n.model != model) continue;
    auto k = c.kernelExecuteFactor.find(kernelKey(n.kernel, n.gemm));
    n.firstExecMs *= n.heavy() && k != c.kernelExecuteFactor.end() ? k->second : c.executeFactor;
    if (n.heavy()) n.transformMs = c.transformOverheadMs + c.transformFactor * n.transformMs;
  }
  return p;
}

}  // namespace zp::coldstart
