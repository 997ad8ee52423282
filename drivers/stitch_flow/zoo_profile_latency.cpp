// zoo-profile step 1: host latency per subgraph and configuration, and the
// hand-over of each boundary tensor between processors.
#include <filesystem>
#include <set>
#include <utility>

#include "drivers/stitch_flow/zoo_profile_steps.h"
#include "libplan/runtime/measure.h"
#include "libplan/runtime/serve/processor.h"
#include "libplan/util/progress.h"
#include "libplan/util/validate.h"

namespace zp::drivers::zoo_profile {
namespace fs = std::filesystem;
namespace {

using profile::ProfileRow;
using profile::RowKind;
using measure::LatencyMeasurement;

// The one-node probe of each host configuration, from the shards being merged
// or from an earlier run when it recorded a usable one.
Status measureOverheads(Run& run, const std::set<Processor>& configs) {
  for (const auto& c : configs) {
    if (const double* given = run.given ? findIn(run.given->overheadMs, c.label()) : nullptr) {
      run.overheadMs[c.label()] = *given;
      continue;
    }
    const Json* earlier = nullptr;
    for (const auto& p : run.previous)
      if (!earlier && p.report.contains("run_overhead_ms") && p.report["run_overhead_ms"].is_object() &&
          p.report["run_overhead_ms"].contains(c.label()) && p.report["run_overhead_ms"][c.label()].is_number() &&
          !numberProblem(p.report["run_overhead_ms"][c.label()].get<double>(), 0, kMaxLatencyMs))
        earlier = &p.report["run_overhead_ms"][c.label()];
    if (earlier) {
      run.overheadMs[c.label()] = earlier->get<double>();
      continue;
    }
    ZP_ASSIGN_OR_RETURN(run.overheadMs[c.label()], measureOverhead(run, c));
  }
  return {};
}

// A host row an earlier run measured for this subgraph and configuration.
const ProfileRow* previousRow(const Run& run, const std::string& task, int pos, const std::string& variant,
                              const std::string& processor, const std::string& policy) {
  for (const auto& p : run.previous)
    if (const auto* r = p.db.find(task, pos, variant, processor, policy); r && r->source == "host") return r;
  return nullptr;
}

ProfileRow subgraphRow(const std::string& task, int pos, const std::string& variant, const std::string& processor,
                       const std::string& policy, const LatencyMeasurement& m) {
  ProfileRow r;
  r.kind = RowKind::Subgraph;
  r.task = task;
  r.position = pos;
  r.variant = variant;
  r.processor = processor;
  r.policy = policy;
  r.medianMs = m.medianMs;
  r.p90Ms = m.p90Ms;
  r.runs = m.runs;
  r.memoryBytes = m.memoryBytes;
  r.source = "host";
  return r;
}

// Measurements of this run by (subgraph content hash, configuration label):
// a subgraph two variants share is measured once.
using MeasuredByHash = std::map<std::pair<std::string, std::string>, LatencyMeasurement>;

// One subgraph under one configuration, for every processor with that configuration.
Status measureSubgraph(Run& run, const zoo::TaskStitch& task, int pos, const zoo::SubgraphInfo& sg,
                       const Processor& config, MeasuredByHash& byHash) {
  std::vector<const Processor*> procs;
  for (const auto& p : run.src.processors)
    if (p.host() && p.engine() == config) procs.push_back(&p);
  const bool reuse = !run.previous.empty();
  if (const ProfileRow* old = reuse ? previousRow(run, task.name, pos, sg.variant, procs.front()->name, config.policy)
                                    : nullptr) {
    for (const auto* p : procs) {
      ProfileRow r = *old;
      r.processor = p->name;
      run.db.add(r);
    }
    ++run.counts.reused;
    return {};
  }
  auto key = std::make_pair(sg.hash, config.label());
  auto it = byHash.find(key);
  if (it == byHash.end()) {
    LatencyMeasurement m;
    if (const auto* given = run.given ? findIn(run.given->subgraphs, key) : nullptr) m = *given;
    else { ZP_ASSIGN_OR_RETURN(m, measureSubgraphLatency(run, sg, config, procs.front()->name)); }
    it = byHash.emplace(key, m).first;
    ++run.counts.measuredSubgraphs;
    run.countTimedRuns();
  }
  for (const auto* p : procs) run.db.add(subgraphRow(task.name, pos, sg.variant, p->name, config.policy, it->second));
  return {};
}

// Boundary hand-over between every two processors: a copy through shared memory.
Status measureTransitions(Run& run, const zoo::TaskStitch& task) {
  std::vector<std::string> processorNames;
  for (const auto& p : run.src.processors) processorNames.push_back(p.name);
  for (int pos = 0; pos + 1 < task.positions(); ++pos) {
    ZP_ASSIGN_OR_RETURN(int64_t bytes, boundaryBytes(run, task, pos));
    const double* given = run.given ? findIn(run.given->transitionMs, std::make_pair(task.name, pos)) : nullptr;
    const double ms = given ? *given : measure::measureCopyMs(bytes, run.mp);
    for (const auto& from : processorNames)
      for (const auto& to : processorNames) {
        if (from == to) continue;
        ProfileRow r;
        r.kind = RowKind::Transition;
        r.task = task.name;
        r.position = pos;
        r.fromProcessor = from;
        r.toProcessor = to;
        r.bytes = bytes;
        r.medianMs = ms;
        r.source = "host";
        run.db.add(r);
      }
  }
  return {};
}

// One run of each weight-shared group's stitched graph under every host
// configuration, for every processor with it, on seeded random inputs (as the
// subgraphs are measured), so the planner may answer the members with it.
Status measureGroups(Run& run, const std::set<Processor>& configs) {
  if (!run.src.groups) return {};
  const fs::path dir = run.src.stitchDir / zoo::kStitchGroupsDir;
  for (const auto& g : run.src.groups->groups)
    for (const auto& config : configs) {
      std::vector<const Processor*> procs;
      for (const auto& p : run.src.processors)
        if (p.host() && p.engine() == config) procs.push_back(&p);
      const ProfileRow* old = nullptr;
      for (const auto& p : run.previous)
        for (const auto* r : p.db.select(RowKind::Group, g.name, {}, procs.front()->name))
          if (!old && r->policy == config.policy && r->source == "host") old = r;
      LatencyMeasurement m;
      if (old) {
        m = LatencyMeasurement{old->medianMs, old->p90Ms.value_or(old->medianMs), static_cast<int>(old->runs.value_or(1)),
                               old->memoryBytes.value_or(0)};
        ++run.counts.reused;
      } else {
        ZP_ASSIGN_OR_RETURN(auto pin, runtime::serve::ScopedCorePin::pin("processor " + procs.front()->name, config.cores));
        ZP_ASSIGN_OR_RETURN(auto session, runtime::Session::load(dir / g.file, measure::sessionOptions(config)));
        ZP_ASSIGN_OR_RETURN(m, measure::measureLatency(*session, runtime::randomInputs(*session, run.params.seed), run.mp));
        run.countTimedRuns();
      }
      for (const auto* p : procs) {
        ProfileRow r = subgraphRow(g.name, 0, "", p->name, config.policy, m);
        r.kind = RowKind::Group;
        r.position.reset();
        run.db.add(r);
      }
    }
  return {};
}

}  // namespace

Expected<double> measureOverhead(const Run& run, const Processor& config) {
  ZP_ASSIGN_OR_RETURN(auto pin, runtime::serve::ScopedCorePin::pin("processor config " + config.label(), config.cores));
  return measure::measureRunOverhead(config, run.mp);
}

Expected<LatencyMeasurement> measureSubgraphLatency(const Run& run, const zoo::SubgraphInfo& sg, const Processor& config,
                                                    const std::string& processor) {
  // Measured on the processor's own cores, as plan-run --serve runs it.
  ZP_ASSIGN_OR_RETURN(auto pin, runtime::serve::ScopedCorePin::pin("processor " + processor, config.cores));
  ZP_ASSIGN_OR_RETURN(auto session, runtime::Session::load(run.src.stitchDir / sg.file, measure::sessionOptions(config)));
  auto in = randomInputsAt(*session, sg.inputs, run.batch, run.params.seed);
  return measure::measureLatency(*session, in, run.mp);
}

Expected<double> measureTransitionMs(const Run& run, const zoo::TaskStitch& task, int boundary) {
  ZP_ASSIGN_OR_RETURN(int64_t bytes, boundaryBytes(run, task, boundary));
  return measure::measureCopyMs(bytes, run.mp);
}

Expected<bool> measureHostLatency(Run& run) {
  std::set<Processor> configs;
  for (const auto& p : run.src.processors)
    if (p.host()) configs.insert(p.engine());
  ZP_TRY(measureOverheads(run, configs));
  size_t work = 0;
  for (const auto& t : run.src.manifest.tasks)
    work += t.variants.size() * static_cast<size_t>(t.positions()) * configs.size();
  Progress progress("measuring subgraphs", work);
  MeasuredByHash byHash;
  bool interrupted = false;
  for (const auto& task : run.src.manifest.tasks) {
    for (int pos = 0; pos < task.positions(); ++pos)
      for (const auto& sg : task.subgraphs[static_cast<size_t>(pos)])
        for (const auto& config : configs) {
          if (run.stopRequested()) {
            interrupted = true;
            break;
          }
          ZP_TRY(measureSubgraph(run, task, pos, sg, config, byHash));
          progress.advance();
        }
    ZP_TRY(measureTransitions(run, task));
  }
  if (!interrupted) ZP_TRY(measureGroups(run, configs));
  return interrupted;
}

}  // namespace zp::drivers::zoo_profile
