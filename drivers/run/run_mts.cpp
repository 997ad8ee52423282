// plan-run BUNDLE on an MTS plan's bundle: each system's units (the plan's
// choice first) loaded through the executor's loader on the processor the
// system places them on, run on every member's samples (its whole test split by
// default): a stitched group once per sample for all its members, a member's
// own model alone otherwise. Per member task: top-1 accuracy of its outputs,
// its outputs against its own model run without caches, and the warm run time
// of the unit it ran in on its pinned processor beside the plan's measured one.
// Every run goes through the executor one query at a time (drivers/run/unit_runs.h).
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "drivers/run/mts_units.h"
#include "drivers/run/run_bundle.h"
#include "drivers/run/serve_system.h"
#include "drivers/run/unit_runs.h"
#include "libplan/runtime/serve/model_file_loader.h"
#include "libplan/runtime/serve/placed_executor.h"
#include "libplan/util/stats.h"

namespace zp::drivers {
namespace fs = std::filesystem;
using runtime::TensorMap;

namespace {

constexpr int kRandomSamples = 8;  // per member without a dataset

struct MemberRun {
  TaskRunReport report;
  OutputDiff diff;
  int correct = 0, labelled = 0;
  void score(const TensorMap& got, const TensorMap& want, const std::string& firstOutput,
             const std::vector<int64_t>& labels, size_t sample) {
    diff.add(got, want);
    if (sample < labels.size()) {
      ++labelled;
      // A missing output is a mismatch `diff` reports, and a wrong answer.
      auto out = got.find(firstOutput);
      correct += out != got.end() && argmax(out->second) == labels[sample] ? 1 : 0;
    }
  }
};

// The unit on processor p as the executor loads it (warm from its weight cache,
// or cold), and the reference: a member's own model without caches there.
Expected<runtime::serve::SubgraphFiles> filesOn(Bundle& bundle, const plan::Unit& unit, int p, const Processor& proc) {
  ZP_ASSIGN_OR_RETURN(ServedSlot slot, servedSlot(bundle, unit, p, proc));
  return slot.files;
}

Expected<runtime::serve::SubgraphFiles> ownReference(Bundle& bundle, const plan::Unit& unit) {
  ZP_ASSIGN_OR_RETURN(const fs::path model, bundle.model(unit));
  return runtime::serve::SubgraphFiles{model, {}};
}

// A setup of one slot per unit on processor p, and a task per slot that runs it on `samples`.
UnitRunSetup oneSlotEach(const std::vector<Processor>& processors, int p,
                         std::vector<runtime::serve::SubgraphFiles> files,
                         const std::vector<std::vector<TensorMap>>& samples) {
  UnitRunSetup s;
  s.processors = processors;
  s.files = std::move(files);
  for (const auto& f : s.files) s.slots.push_back({f.model.filename().string(), p, 0, true});
  for (size_t k = 0; k < samples.size(); ++k) {
    const int slot = static_cast<int>(std::min(k, s.files.size() - 1));
    s.tasks.push_back({fmt::format("member {}", k), {slot}, kUnboundedMs, true, samples[k], {}});
  }
  return s;
}

// Every sample of every task of the setup, then `repeat` warm runs of task 0's first.
std::vector<UnitQuery> everySample(const std::vector<std::vector<TensorMap>>& samples, int repeat) {
  std::vector<UnitQuery> q;
  for (size_t k = 0; k < samples.size(); ++k)
    for (size_t i = 0; i < samples[k].size(); ++i) q.push_back({static_cast<int>(k), static_cast<int>(i)});
  for (int r = 0; r < repeat; ++r) q.push_back({0, 0});
  return q;
}

struct MtsRun {
  const BundleRunParams& params;
  Bundle& bundle;
  const MtsBundleUnits& units;
};

MemberRun startMember(const plan::MtsSystem& sys, const plan::MtsPlanMember& b, const MtsGroupSamples& s, size_t k,
                      const std::string& combination, const std::string& processor, double predictedMs) {
  MemberRun m;
  m.report.system = sys.name;
  m.report.task = b.task;
  m.report.slo = "-";
  m.report.feasible = true;
  m.report.combination = combination;
  m.report.processors = {processor};
  m.report.inputs = s.sources[k];
  m.report.samples = static_cast<int>(s.members[k].size());
  m.report.predictedMs = predictedMs;
  m.report.plannedAccuracy = -1;  // an MTS plan records no accuracy: stitching keeps each member's outputs
  return m;
}

void finishMember(MemberRun& m, double measuredMs, double tolerance) {
  m.report.maxAbsDiff = m.diff.maxAbsDiff;
  m.report.refScale = m.diff.refScale;
  m.report.match = m.diff.within(tolerance);
  m.report.measuredMs = measuredMs;
  m.report.accuracy = m.labelled ? static_cast<double>(m.correct) / m.labelled : -1;
}

// A group run as its stitched unit: once per sample of each member, with that member's own
// sample in its stitched input and the other members' inputs from their samples.
Status runStitched(MtsRun& c, const plan::MtsSystem& sys, size_t u, int p, std::vector<TaskRunReport>& out) {
  const auto& g = c.units.mts->units[u];
  const auto& s = c.units.samples[u];
  const Processor& proc = c.units.processors[static_cast<size_t>(p)];
  ZP_ASSIGN_OR_RETURN(auto files, filesOn(c.bundle, *c.units.groups[u], p, proc));
  std::vector<runtime::serve::SubgraphFiles> own;
  std::vector<std::vector<TensorMap>> stitched(g.members.size());  // per member, per sample
  std::vector<MemberRun> runs;
  for (size_t k = 0; k < g.members.size(); ++k) {
    const auto& b = g.members[k];
    runs.push_back(startMember(sys, b, s, k, c.units.groups[u]->id.str(), proc.name,
                               g.stitchedMs[static_cast<size_t>(p)]));
    ZP_ASSIGN_OR_RETURN(auto ref, ownReference(c.bundle, *c.units.members[u][k]));
    own.push_back(std::move(ref));
    for (size_t i = 0; i < s.members[k].size(); ++i) {
      // Every sample of this member, the other members' inputs from their own samples.
      TensorMap in = s.stitched[i % s.stitched.size()];
      in.insert_or_assign(b.stitchedInput, s.members[k][i].at(b.input));  // tensors share storage: no copy
      stitched[k].push_back(std::move(in));
    }
  }
  ZP_ASSIGN_OR_RETURN(UnitRuns got, runUnits(oneSlotEach(c.units.processors, p, {files}, stitched),
                                             everySample(stitched, c.params.repeat)));
  ZP_ASSIGN_OR_RETURN(UnitRuns want, runUnits(oneSlotEach(c.units.processors, p, own, s.members),
                                              everySample(s.members, 0)));
  size_t q = 0;
  for (size_t k = 0; k < g.members.size(); ++k) {
    const auto& b = g.members[k];
    for (size_t i = 0; i < s.members[k].size(); ++i, ++q) {
      const TensorMap& all = got.served.outputs[q];
      TensorMap got1;
      for (size_t j = 0; j < b.outputs.size(); ++j)
        if (auto it = all.find(b.stitchedOutputs[j]); it != all.end()) got1.emplace(b.outputs[j], it->second);
      runs[k].score(got1, want.served.outputs[q], b.outputs.front(), s.labels[k], i);
    }
  }
  const double ms = c.params.repeat > 0 ? medianLatencyMs(got.served, q) : 0;
  for (auto& m : runs) {
    finishMember(m, ms, kStitchedTolerance);
    out.push_back(std::move(m.report));
  }
  return {};
}

// A group run as its members' own models, one after another.
Status runMembers(MtsRun& c, const plan::MtsSystem& sys, size_t u, int p, std::vector<TaskRunReport>& out) {
  const auto& g = c.units.mts->units[u];
  const auto& s = c.units.samples[u];
  const Processor& proc = c.units.processors[static_cast<size_t>(p)];
  for (size_t k = 0; k < g.members.size(); ++k) {
    const auto& b = g.members[k];
    const plan::Unit& mu = *c.units.members[u][k];
    ZP_ASSIGN_OR_RETURN(auto files, filesOn(c.bundle, mu, p, proc));
    ZP_ASSIGN_OR_RETURN(auto own, ownReference(c.bundle, mu));
    const std::vector<std::vector<TensorMap>> samples{s.members[k]};
    ZP_ASSIGN_OR_RETURN(UnitRuns got, runUnits(oneSlotEach(c.units.processors, p, {files}, samples),
                                               everySample(samples, c.params.repeat)));
    ZP_ASSIGN_OR_RETURN(UnitRuns want, runUnits(oneSlotEach(c.units.processors, p, {own}, samples),
                                                everySample(samples, 0)));
    MemberRun m = startMember(sys, b, s, k, mu.id.str(), proc.name, b.ms[static_cast<size_t>(p)]);
    for (size_t i = 0; i < s.members[k].size(); ++i)
      m.score(got.served.outputs[i], want.served.outputs[i], b.outputs.front(), s.labels[k], i);
    finishMember(m, c.params.repeat > 0 ? medianLatencyMs(got.served, s.members[k].size()) : 0, c.params.tolerance);
    out.push_back(std::move(m.report));
  }
  return {};
}

}  // namespace

Expected<BundleRunResult> runMtsBundle(const BundleRunParams& params, Bundle& bundle) {
  if (!params.slo.empty() || params.cold || !params.inputs.empty() || !params.saveOutputs.empty() ||
      !params.trace.empty())
    return makeError("--slo/--cold/--input/--save-outputs/--trace: {} is an MTS plan's bundle; it runs each member "
                     "task's dataset (--task, --samples, --compare apply)",
                     params.bundle.string());
  const auto& mts = *bundle.plan().mts;
  if (!params.task.empty() && std::none_of(mts.units.begin(), mts.units.end(), [&](const plan::MtsUnit& g) {
        return std::any_of(g.members.begin(), g.members.end(), [&](const auto& b) { return b.task == params.task; });
      }))
    return makeError("--task {}: no such member task in {}", params.task, bundle.planFile());
  const int limit = params.samples > 0 ? params.samples : std::numeric_limits<int>::max();
  ZP_ASSIGN_OR_RETURN(auto units, readMtsUnits(bundle, limit, params.samples > 0 ? params.samples : kRandomSamples,
                                               params.seed, /*wholeSplits=*/true));
  ZP_ASSIGN_OR_RETURN(const auto systems, selectSystems(mts.systems, std::string("zooplan"), params.compare));
  MtsRun c{params, bundle, units};
  BundleRunResult res;
  res.legend = {
      "combination: the unit a task ran in: its group's stitched graph, or its own model",
      "accuracy: top-1 of the task's outputs on its samples (all of its dataset unless --samples); an MTS plan "
      "records none",
      "measured: median of warm runs of that unit on its pinned processor (a stitched graph runs every member at "
      "once); predicted: the plan's measured run time of it",
      "match: the task's outputs equal its own model's, run without caches on the same processor"};
  for (const auto* sys : systems) {
    res.systems.push_back({sys->name, sys->description});
    for (size_t u = 0; u < mts.units.size(); ++u) {
      const auto& members = mts.units[u].members;
      if (!params.task.empty() &&
          std::none_of(members.begin(), members.end(), [&](const auto& b) { return b.task == params.task; }))
        continue;
      const auto it = std::find_if(units.processors.begin(), units.processors.end(),
                                   [&](const Processor& p) { return p.name == sys->placement[u]; });
      if (it == units.processors.end())
        return makeError("{}: system '{}' places group '{}' on '{}', not a processor of the section", bundle.planFile(),
                         sys->name, mts.units[u].group, sys->placement[u]);
      const int p = static_cast<int>(it - units.processors.begin());
      std::vector<TaskRunReport> rows;
      ZP_TRY(sys->stitched[u] ? runStitched(c, *sys, u, p, rows) : runMembers(c, *sys, u, p, rows));
      for (auto& r : rows)
        if (params.task.empty() || r.task == params.task) res.tasks.push_back(std::move(r));
    }
  }
  for (const auto& n : bundle.notes()) res.notes.push_back(n);
  return res;
}

}  // namespace zp::drivers
