#include "drivers/stitch_flow/frame_schedules.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "drivers/concurrent_flow/workload.h"
#include "drivers/opplace_flow/place_model.h"
#include "drivers/stitch_flow/placed_models.h"
#include "libplan/artifacts/node_profile_csv.h"
#include "libplan/artifacts/workload_json.h"
#include "libplan/graph/model_io.h"
#include "passes/opplace/baselines.h"

namespace zp::drivers {
namespace fs = std::filesystem;

namespace {

// The frame's DNNs, each after the ones it depends on (the scheduler's order).
std::vector<std::string> dependencyOrder(const plan::FrameSpec& f) {
  std::vector<std::string> order;
  std::set<std::string> placed;
  while (order.size() < f.dnns.size()) {
    const size_t before = order.size();
    for (const auto& d : f.dnns) {
      if (placed.count(d)) continue;
      bool ready = true;
      for (const auto& [dnn, after] : f.dependsOn) ready = ready && (dnn != d || placed.count(after));
      if (ready) {
        order.push_back(d);
        placed.insert(d);
      }
    }
    assert(order.size() > before && "the SLO file's reader refuses a dependency cycle");
    if (order.size() == before) break;
  }
  return order;
}

// Each executed node's processor: its layer group's; a node in no group (the
// runtime fused it into its producer) goes where the node before it went.
opplace::Assignment nodeAssignment(const opplace::Problem& problem, const std::vector<std::vector<std::string>>& groups,
                                   const std::vector<int>& groupAccelerator,
                                   const std::vector<std::string>& accelerators) {
  std::map<std::string, int> processorOf;  // node -> index into problem.processors
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::string& name = accelerators[static_cast<size_t>(groupAccelerator[g])];
    const auto it = std::find(problem.processors.begin(), problem.processors.end(), name);
    assert(it != problem.processors.end() && "accelerators are the space's processors");
    for (const auto& n : groups[g]) processorOf[n] = static_cast<int>(it - problem.processors.begin());
  }
  opplace::Assignment a(problem.nodes.size(), -1);
  for (size_t v = 0; v < problem.nodes.size(); ++v)
    if (auto it = processorOf.find(problem.nodes[v].name); it != processorOf.end()) a[v] = it->second;
  const auto first = std::find_if(a.begin(), a.end(), [](int p) { return p >= 0; });
  int last = first == a.end() ? 0 : *first;
  for (auto& p : a) {
    if (p < 0) p = last;
    last = p;
  }
  return a;
}

}  // namespace

Expected<std::string> addFrameSchedules(select::StitchSpace& space, MeasuredPlacing& measured,
                                        const std::vector<plan::FrameSpec>& frames, const FrameSchedulesParams& params) {
  const fs::path file = space.profileDir / "node_profile.csv";
  const fs::path& zooPath = measured.zooPath;
  const auto& zoo = measured.zoo;
  const auto& profiled = measured.profiledModels;
  opplace_flow::PlaceInputs& in = measured.inputs;
  const std::vector<std::string> names = plan::processorNames(space.processors);
  std::string out;
  for (const auto& f : frames) {
    artifacts::WorkloadSpec spec;
    spec.name = f.name;
    spec.accelerators = names;
    spec.objective = sim::Objective::Latency;
    spec.processors = space.processors;
    std::vector<size_t> taskOf;
    std::vector<std::string> unprofiled;
    for (const auto& dnn : dependencyOrder(f)) {
      const auto t = std::find_if(space.tasks.begin(), space.tasks.end(), [&](const auto& x) { return x.name == dnn; });
      assert(t != space.tasks.end() && "the SLO file's reader checked the frame's tasks");
      if (!t->stitch) return makeError("frame {}: task '{}' has no stitch manifest entry to take its model from", f.name, dnn);
      artifacts::WorkloadDnn d;
      d.name = dnn;
      d.jsonPath = fmt::format("frame {}: DNN {}", f.name, dnn);
      d.source = artifacts::WorkloadDnn::Source::ZooVariant;
      d.task = dnn;
      d.variant = t->stitch->reference;
      d.zoo = zooPath;
      d.profileDir = space.profileDir;
      for (const auto& [x, after] : f.dependsOn)
        if (x == dnn) d.dependsOn.push_back(after);
      if (!profiled.count(artifacts::zooModelKey(zoo.name, dnn, d.variant))) unprofiled.push_back(dnn);
      spec.dnns.push_back(std::move(d));
      taskOf.push_back(static_cast<size_t>(t - space.tasks.begin()));
    }
    if (!unprofiled.empty()) {  // layer groups come from measured node costs only
      out += fmt::format("frame {}: no concurrent schedule: {} not in {} (zoo-profile measures the reference "
                         "variants' nodes)\n",
                         f.name, fmt::join(unprofiled, ", "), file.string());
      continue;
    }
    ZP_ASSIGN_OR_RETURN(const schedule::Workload w, resolveWorkload(spec, fs::path("frame " + f.name)));
    ZP_ASSIGN_OR_RETURN(const schedule::ConcurrentOutcome sched,
                        schedule::solveConcurrent(w, "frame " + f.name, params.solve));
    std::vector<std::string> where;
    for (size_t i = 0; i < spec.dnns.size(); ++i) {
      const size_t t = taskOf[i];
      const auto& ts = space.tasks[t];
      const std::string& variant = spec.dnns[i].variant;
      const auto& assign = sched.schedule.assign[i];
      std::set<std::string> used;
      for (int acc : assign) used.insert(names[static_cast<size_t>(acc)]);
      const auto& dnn = sched.section.dnns[i];
      where.push_back(fmt::format("{} on {} ({:.3f} ms)", ts.name, fmt::join(used, "+"), dnn.endMs - dnn.releaseMs));
      if (used.size() < 2) {  // one processor: the space runs the model whole there already
        space.scheduledWhole[static_cast<int>(t)] = *used.begin();
        continue;
      }
      const bool placedAlready = std::any_of(space.placed.begin(), space.placed.end(), [&](const auto& m) {
        return m.task == static_cast<int>(t) && m.variant == variant;
      });
      if (params.skipPlacedVariants && placedAlready) {
        where.back() += " (its operator placement is the candidate)";
        continue;
      }
      const int v = static_cast<int>(std::find(ts.variants.begin(), ts.variants.end(), variant) - ts.variants.begin());
      const uint64_t original = ts.combinations().number(std::vector<int>(static_cast<size_t>(ts.positions), v));
      if (v >= static_cast<int>(ts.variants.size()) || !ts.valid(original)) continue;
      const auto info = std::find_if(ts.stitch->variants.begin(), ts.stitch->variants.end(),
                                     [&](const zoo::VariantInfo& x) { return x.id == variant; });
      assert(info != ts.stitch->variants.end() && "the reference is one of the task's variants");
      ZP_ASSIGN_OR_RETURN(auto model, graph::loadModel(space.stitchDir / fs::path(space.manifest.zooPath).parent_path() /
                                                       info->onnx));
      in.modelKey = artifacts::zooModelKey(zoo.name, ts.name, variant);
      ZP_ASSIGN_OR_RETURN(auto pp, opplace_flow::buildPlaceProblem(model, in));
      // The DNN under the frame's mapping, timed by the operator placement's own
      // cost model: a candidate costed as SparOA's are.
      opplace::PlacementResult r;
      r.baselines = opplace::baselines(pp.problem);
      r.solution.assignment = nodeAssignment(pp.problem, w.sources[i].groupNodes, assign, names);
      r.timeline = opplace::listSchedule(pp.problem, r.solution.assignment);
      r.solution.latencyMs = r.timeline.latencyMs;
      plan::OpPlacement o = opplace_flow::placementSection(pp.problem, r, space.processors,
                                                           plan::UnitId::model(in.modelKey), pp.costSource, {});
      // What placed it: the frame's concurrent schedule, as its solver reported it.
      o.solver = sched.section.solver;
      o.solver.searchSpace = fmt::format("frame {}'s layer groups, {}", f.name, o.solver.searchSpace);
      where.back() += fmt::format(" ({:.3f} ms alone: a candidate)", o.latencyMs);
      space.placed.push_back(placedCandidate(space, t, *info, original, std::move(o), select::PlacedBy::HaxConn));
    }
    out += fmt::format("frame {}: the concurrent schedule ({} {}, frame latency {:.3f} ms) runs {}\n", f.name,
                       sched.section.solver.solver, sched.section.solver.status, sched.section.latencyMs,
                       fmt::join(where, ", "));
  }
  return out;
}

}  // namespace zp::drivers
