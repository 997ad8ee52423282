#include "passes/coldstart/calibration.h"

#include <cassert>
#include <map>
#include <tuple>

namespace zp::coldstart {

namespace {

using RowKey = std::tuple<int, std::string, std::string>;  // step, kernel, gemm

struct Sums {
  double bytes = 0, readMs = 0;
  double transformMs = 0, profiledTransformMs = 0;
  double executeMs = 0, profiledExecuteMs = 0;
};

Status addRun(const std::map<RowKey, const profile::ColdNodeCost*>& rows, const std::string& model,
              const std::string& source, const profile::MeasuredColdRun& run, Sums& s) {
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
    if (n.read) {
      s.bytes += static_cast<double>(n.weights == "cache" ? c.cacheBytes : c.rawBytes);
      s.readMs += n.read->ms();
    }
    if (n.transform && n.weights == "transform") {
      s.transformMs += n.transform->ms();
      s.profiledTransformMs += c.transformMs;
    }
    s.executeMs += n.execute.ms();
    s.profiledExecuteMs += c.firstExecMs;
  }
  return {};
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
  Sums s;
  for (size_t r = 0; r < runs.size(); ++r) ZP_TRY(addRun(rows, model, sources[r], runs[r], s));
  Calibration c;
  c.runs = static_cast<int>(runs.size());
  if (c.runs == 0) return c;
  if (s.profiledExecuteMs <= 0 || s.executeMs <= 0)
    return makeError("cold runs of '{}': no node took measurable time to execute", model);
  c.executeFactor = s.executeMs / s.profiledExecuteMs;
  if (s.profiledTransformMs > 0 && s.transformMs > 0) c.transformFactor = s.transformMs / s.profiledTransformMs;
  if (s.bytes > 0 && s.readMs > 0) c.readMBps = s.bytes / 1e6 / (s.readMs / 1e3);
  return c;
}

profile::ColdProfile applyCalibration(const profile::ColdProfile& profile, const std::string& model,
                                      const Calibration& c) {
  profile::ColdProfile p = profile;
  if (c.runs == 0) return p;
  if (c.readMBps > 0) p.storageMBps = c.readMBps;
  for (auto& n : p.nodes) {
    if (n.model != model) continue;
    n.firstExecMs *= c.executeFactor;
    n.transformMs *= c.transformFactor;
  }
  return p;
}

}  // namespace zp::coldstart
