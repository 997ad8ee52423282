// Test fixtures of the emit tests: a real zoo-stitch output of the multitask
// zoo and a stitch plan over it, and a concurrent plan solved by plan-solve's
// library entry point.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/common/temp_dir.h"
#include "libplan/plan/plan.h"
#include "drivers/stitch_flow/zoo_stitch.h"
#include "drivers/concurrent_flow/solve_concurrent.h"
#include "libplan/artifacts/plan_json.h"
#include "tests/common/test_paths.h"

namespace zp::drivers::testing {
namespace fs = std::filesystem;

// A fresh scratch directory private to this process (ctest runs tests in parallel).
inline fs::path scratchDir(const std::string& name) {
  return zp::testing::uniqueTempDir("emit_" + name);
}

inline fs::path sourceDir() { return zp::testing::kSourceDir; }

// zoo-stitch of testdata/multitask into DIR/stitch (S = 3, one per processor).
inline Expected<zoo::StitchManifest> stitchMultitask(const fs::path& dir) {
  drivers::ZooStitchOptions o;
  o.zoo = sourceDir() / "testdata/multitask/zoo.json";
  o.out = dir / "stitch";
  o.params.materialize = "none";
  return drivers::runZooStitch(o);
}

// A SparseLoom plan over the stitch output: placement cpu, gpu, npu (policies
// default, im2col, sparse), two SLO configurations; in C01 every task takes a
// mixed combination, in C02 the first task is infeasible (with its miss).
// Figures are fixture values with at most 9 significant digits (what plan.json keeps).
inline plan::Plan stitchPlanFor(const zoo::StitchManifest& m, const std::string& stitchDir = "stitch") {
  plan::Plan p;
  p.header = {"plan-solve", "0.1.0", {{"profile/profile.json", std::string(64, 'a')}, {"slo.json", std::string(64, 'b')}}};
  plan::StitchPlan s;
  s.stitchDir = stitchDir;
  s.accuracySource = "predicted";
  p.processors = {{"cpu", "cpu", "host", "default", 1, {0}, "onednn"},
                  {"gpu", "gpu", "host", "im2col", 1, {1}, "onednn"},
                  {"npu", "npu", "host", "sparse", 2, {1}, "blis"}};
  s.processors = {"cpu", "gpu", "npu"};
  s.placementOrder = {"cpu", "gpu", "npu"};
  s.ordersEvaluated = 6;
  s.meanLatencyMs = 0.125;
  s.batch = 4;
  s.dims = {{"height", 32}};
  plan::SloConfiguration c1{"C01", {}}, c2{"C02", {}};
  for (const auto& t : m.tasks) {
    c1.tasks[t.name] = {0.75, 2.5};
    c2.tasks[t.name] = {0.99, 0.001};
  }
  s.slos = {c1, c2};
  std::vector<std::vector<plan::SystemTaskChoice>> choices;  // the plan's own: per task, per configuration
  for (size_t ti = 0; ti < m.tasks.size(); ++ti) {
    const auto& t = m.tasks[ti];
    plan::TaskPlan tp;
    tp.name = t.name;
    tp.positions = t.positions();
    // Valid mixed combinations (positions from different variants) of the stitch.
    std::vector<std::vector<std::string>> mixed;
    for (const auto& c : t.combinations)
      if (c.valid && std::set<std::string>(c.variants.begin(), c.variants.end()).size() > 1) mixed.push_back(c.variants);
    auto combo = [&](size_t shift) { return mixed[(shift * 7) % mixed.size()]; };
    auto join = [](const std::vector<std::string>& vs) {
      std::string s;
      for (const auto& v : vs) s += (s.empty() ? "" : "+") + v;
      return s;
    };
    std::vector<std::vector<std::string>> used;
    auto a = combo(ti + 1), b = combo(ti + 2);
    const std::vector<std::string> placement(s.placementOrder.begin(), s.placementOrder.begin() + tp.positions);
    auto& tc = choices.emplace_back();
    tc.push_back({t.name, join(a), placement, true, 0.875, "measured", 0.5 + 0.25 * static_cast<double>(ti),
                  std::nullopt});
    used.push_back(a);
    if (ti == 0) {
      tc.push_back({t.name, "", {}, false, 0, "estimated", 0, plan::SloMiss{join(b), 0.0625, 1.5}});
    } else {
      tc.push_back({t.name, join(b), placement, true, 0.9375, "estimated", 0.75, std::nullopt});
      used.push_back(b);
    }
    std::map<std::pair<int, std::string>, plan::PlannedSubgraph> subs;
    for (const auto& vs : used)
      for (int pos = 0; pos < t.positions(); ++pos) {
        const auto& info = t.subgraph(pos, vs[static_cast<size_t>(pos)]);
        subs[{pos, info.variant}] = {pos, info.variant, s.placementOrder[static_cast<size_t>(pos)], 1000 + pos,
                                     0.25 + 0.125 * pos};
      }
    for (auto& [k, g] : subs) tp.subgraphs.push_back(g);
    s.tasks.push_back(std::move(tp));
  }
  // The plan's own system.
  s.chosenSystem = "zooplan";
  plan::ServedSystem chosen{"zooplan", "the plan", {}};
  for (size_t c = 0; c < s.slos.size(); ++c) {
    plan::SystemSelection sel{s.slos[c].id, {}, std::nullopt};
    for (const auto& tc : choices) sel.tasks.push_back(tc[c]);
    chosen.selections.push_back(std::move(sel));
  }
  chosen.servingOrder = ServingOrder::EarliestDeadline;
  chosen.predictedFirstCome = plan::PredictedServing{0.25, 40.5, 3, true, 0.125};
  s.systems.push_back(std::move(chosen));
  plan::ServedSystem sys{"AV-P", "a baseline", {}};
  for (const auto& c : s.slos) {
    plan::SystemSelection sel{c.id, {}, std::nullopt};
    for (size_t ti = 0; ti < s.tasks.size(); ++ti) {
      const auto& tp = s.tasks[ti];
      std::vector<std::string> placement(s.placementOrder.begin(), s.placementOrder.begin() + tp.positions);
      sel.tasks.push_back({tp.name, choices[ti].front().combination, placement, true, 0.875, "measured", 0.625,
                           std::nullopt});
    }
    sys.selections.push_back(std::move(sel));
  }
  s.systems.push_back(std::move(sys));
  s.preload.push_back({"15%", 4096, {"subgraph:digits/0/dense"}, 2048, 1.5,
                       {"subgraph:digits/0/dense", "subgraph:wine/1/u50"}, 4000, 2.25, true, 0.333333333});
  // Its units: every subgraph a task or the preload set names.
  std::set<plan::UnitId> ids;
  for (const auto& tp : s.tasks)
    for (const auto& g : tp.subgraphs) ids.insert(plan::UnitId::subgraph(tp.name, g.position, g.variant));
  for (const auto& id : s.preload.front().exact) ids.insert(*plan::parseUnitId(id));
  for (const auto& id : ids) {
    const auto& info = m.task(id.name)->subgraph(id.position, id.variant);
    p.units.push_back(plan::Unit{id, info.file, info.hash, "", false, plan::kPreloadSetUnit, std::nullopt});
  }
  p.stitch = std::move(s);
  return p;
}

// The unit of task `task`'s subgraph `g` (it must be in the plan).
inline plan::Unit& unitOf(plan::Plan& p, const std::string& task, const plan::PlannedSubgraph& g) {
  for (auto& u : p.units)
    if (u.id == plan::UnitId::subgraph(task, g.position, g.variant)) return u;
  ADD_FAILURE() << "no unit for " << task << " position " << g.position << " variant " << g.variant;
  return p.units.front();
}
inline const plan::Unit& unitOf(const plan::Plan& p, const std::string& task, const plan::PlannedSubgraph& g) {
  return unitOf(const_cast<plan::Plan&>(p), task, g);
}

// plan-solve --mode concurrent on testdata/concurrent/googlenet-table2-scenario1.json.
inline Expected<plan::Plan> solveConcurrent(const fs::path& dir) {
  drivers::SolveConcurrentOptions cc;
  cc.workload = sourceDir() / "testdata/concurrent/googlenet-table2-scenario1.json";
  cc.output = dir / "concurrent_plan.json";
  ZP_TRY(drivers::solveConcurrent(cc));
  return artifacts::readPlan(cc.output);
}

}  // namespace zp::drivers::testing
