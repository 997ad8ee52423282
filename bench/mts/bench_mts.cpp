// bench_mts: MTS on the bundled weight-shared zoo (testdata/mts, group
// "digits") for T = 2..8 members, against the baselines of MTS §VI: Sequential
// (each member's own model, one after another), NetFuse-style merging (no
// weight sharing, grouped convolutions), MTS without grouping (all T members in
// one stitched graph) and MTS with grouping (Alg. 1, subset DP over measured
// group latencies under a memory budget). Latencies are medians over rounds in
// which the four configurations alternate (the machine is shared: compare
// ratios); run it pinned (`taskset -c 1`). Prints a table and writes JSON.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "libplan/artifacts/zoo_json.h"
#include "libplan/artifacts/multitask_group_json.h"
#include "libplan/runtime/session.h"
#include "libplan/util/file.h"
#include "libplan/util/json.h"
#include "passes/mts/grouping.h"
#include "drivers/mts_flow/zoo_mts.h"

using namespace zp;
using Clock = std::chrono::steady_clock;

namespace {

struct Runnable {  // one or more sessions run one after another, with their inputs
  std::vector<std::unique_ptr<runtime::Session>> sessions;
  std::vector<runtime::TensorMap> feeds;
  int64_t weightBytes = 0;    // as stored in the ONNX graph(s)
  int64_t residentBytes = 0;  // the runtime's weights of all sessions + the largest arena
  double run() {
    auto t0 = Clock::now();
    for (size_t k = 0; k < sessions.size(); ++k) {
      auto r = sessions[k]->run(feeds[k]);
      if (!r.ok()) throw std::runtime_error(r.error().message);
    }
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  }
};

struct Bench {
  zoo::Zoo zoo;
  zoo::MultitaskGroup group;  // the full group (8 members)
  mts::GroupModels models;
  std::vector<runtime::Tensor> inputs;  // one per member

  zoo::MultitaskGroup subset(uint32_t mask) const {
    zoo::MultitaskGroup g = group;
    g.members.clear();
    for (size_t t = 0; t < group.members.size(); ++t)
      if (mask & (uint32_t{1} << t)) g.members.push_back(group.members[t]);
    g.shared.clear();
    return g;
  }

  void add(Runnable& r, const onnx::ModelProto& model, const std::string& label, runtime::TensorMap feeds) {
    auto s = runtime::Session::fromModel(model, label, runtime::SessionOptions{});
    if (!s.ok()) throw std::runtime_error(s.error().message);
    r.sessions.push_back(std::move(*s));
    r.feeds.push_back(std::move(feeds));
    int64_t arena = 0;
    for (const auto& x : r.sessions) arena = std::max<int64_t>(arena, static_cast<int64_t>(x->arenaBytes()));
    r.residentBytes = 0;
    for (const auto& x : r.sessions) r.residentBytes += static_cast<int64_t>(x->weightBytes());
    r.residentBytes += arena;
  }

  // The stitched graph of the members in `mask`, added to `r`.
  mts::StitchedGroup stitch(uint32_t mask, const mts::StitchParams& params) const {
    std::vector<const onnx::ModelProto*> ptrs;
    std::vector<std::string> tasks;
    for (size_t t = 0; t < group.members.size(); ++t)
      if (mask & (uint32_t{1} << t)) {
        ptrs.push_back(&models.models[t]);
        tasks.push_back(models.tasks[t]);
      }
    auto g = mts::stitchGroup(ptrs, tasks, params);
    if (!g.ok()) throw std::runtime_error(g.error().message);
    return std::move(*g);
  }
  mts::StitchStats stitched(Runnable& r, uint32_t mask, const mts::StitchParams& params) {
    auto g = stitch(mask, params);
    runtime::TensorMap feeds;
    size_t k = 0;
    for (size_t t = 0; t < group.members.size(); ++t)
      if (mask & (uint32_t{1} << t)) {
        const std::string& name = g.members[k++].stitchedInput;
        if (!feeds.count(name)) feeds[name] = inputs[t];
      }
    add(r, g.model, group.name, std::move(feeds));
    r.weightBytes += g.stats.weightBytes();
    return g.stats;
  }
  mts::StitchStats stitched(Runnable& r, uint32_t mask, mts::StitchMode mode) {
    mts::StitchParams p;
    p.mode = mode;
    return stitched(r, mask, p);
  }

  Runnable sequential(uint32_t mask) {
    Runnable r;
    for (size_t t = 0; t < group.members.size(); ++t)
      if (mask & (uint32_t{1} << t)) {
        const auto& m = models.models[t];
        add(r, m, models.tasks[t], {{m.graph().input(0).name(), inputs[t]}});
        for (const auto& init : m.graph().initializer()) r.weightBytes += static_cast<int64_t>(init.raw_data().size());
      }
    return r;
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v[(v.size() - 1) / 2] + v[v.size() / 2]) / 2;
}

// Latency and memory of every subset of the 8 members stitched as one group
// (medians of `reps` runs): the cost table grouping works on.
mts::GroupCosts measureCosts(Bench& b, int reps) {
  const int T = static_cast<int>(b.group.members.size());
  mts::GroupCosts c;
  c.members = T;
  c.latency.assign(size_t{1} << T, 0);
  c.memory.assign(size_t{1} << T, 0);
  for (uint32_t s = 1; s < (uint32_t{1} << T); ++s) {
    Runnable r;
    if (std::popcount(s) == 1) r = b.sequential(s);
    else b.stitched(r, s, mts::StitchMode::Mts);
    r.run();
    std::vector<double> t;
    for (int k = 0; k < reps; ++k) t.push_back(r.run());
    c.latency[s] = median(t);
    c.memory[s] = static_cast<double>(r.residentBytes);
  }
  return c;
}

// The costs of the first T members only.
mts::GroupCosts restrict(const mts::GroupCosts& c, int T) {
  mts::GroupCosts r;
  r.members = T;
  r.latency.assign(c.latency.begin(), c.latency.begin() + (int64_t{1} << T));
  r.memory.assign(c.memory.begin(), c.memory.begin() + (int64_t{1} << T));
  return r;
}

// Alg. 1 against brute force: on the measured costs for every T and on random
// instances. True only when every comparison ran and agreed.
bool groupingMatchesBruteForce(const mts::GroupCosts& measured, double budget, int& checks) {
  bool ok = true;
  auto same = [&](const mts::Grouping& a, const mts::Grouping& b) {
    ++checks;
    return a.feasible == b.feasible && (!a.feasible || std::abs(a.latency - b.latency) <= 1e-9 * b.latency);
  };
  for (int T = 1; T <= measured.members; ++T) {
    auto c = restrict(measured, T);
    ok = same(mts::groupSubsets(c, budget), mts::groupBruteForce(c, budget)) && ok;
  }
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> u(0.2, 2.0);
  for (int T = 1; T <= 8; ++T)
    for (int trial = 0; trial < 25; ++trial) {
      mts::GroupCosts c;
      c.members = T;
      c.latency.assign(size_t{1} << T, 0);
      c.memory.assign(size_t{1} << T, 0);
      for (uint32_t s = 1; s < (uint32_t{1} << T); ++s) {
        c.latency[s] = u(rng) * std::popcount(s) * (0.6 + 0.1 * std::popcount(s));
        c.memory[s] = 1.0 + u(rng) * std::popcount(s);
      }
      ok = same(mts::groupSubsets(c, 1.0 + T), mts::groupBruteForce(c, 1.0 + T)) && ok;
    }
  return ok;
}

}  // namespace

namespace {

struct Row {
  int T = 0;
  mts::StitchStats stats;
  int64_t storedWeightBytes = 0, sequentialWeightBytes = 0, netfuseWeightBytes = 0;
  std::vector<double> medians;  // sequential, netfuse, mts, mts + grouping
  std::vector<int64_t> resident;
  std::string grouping;
  double allRowsFlops = 0, sharedFlops = 0;
};

const char* kConfigs[] = {"sequential", "netfuse", "mts_no_grouping", "mts_grouping", "mts_all_rows",
                          "mts_shared_input"};
constexpr size_t kNumConfigs = 6;

Row benchT(Bench& b, int T, const mts::GroupCosts& costs, double budget, int rounds) {
  const uint32_t mask = (uint32_t{1} << T) - 1;
  Row row;
  row.T = T;
  std::vector<Runnable> configs(kNumConfigs);
  configs[0] = b.sequential(mask);
  b.stitched(configs[1], mask, mts::StitchMode::NetFuse);
  row.stats = b.stitched(configs[2], mask, mts::StitchMode::Mts);
  mts::StitchParams allRows, shared;
  allRows.restrictRows = false;
  shared.sharedInput = true;
  row.allRowsFlops = b.stitched(configs[4], mask, allRows).flops;
  row.sharedFlops = b.stitched(configs[5], mask, shared).flops;
  auto g = b.stitch(mask, mts::StitchParams{});
  for (const auto& init : g.model.graph().initializer())
    if (init.name().ends_with("/weight") || init.name().ends_with("/bias"))
      row.storedWeightBytes += static_cast<int64_t>(init.raw_data().size());
  mts::Grouping grouping = mts::groupSubsets(restrict(costs, T), budget);
  if (!grouping.feasible) throw std::runtime_error(fmt::format("T={}: no grouping fits the budget", T));
  row.grouping = mts::groupingText(grouping);
  for (uint32_t s : grouping.groups) {
    if (std::popcount(s) == 1) {
      Runnable one = b.sequential(s);
      for (auto& x : one.sessions) configs[3].sessions.push_back(std::move(x));
      for (auto& f : one.feeds) configs[3].feeds.push_back(std::move(f));
      configs[3].residentBytes += one.residentBytes;
    } else {
      Runnable part;
      b.stitched(part, s, mts::StitchMode::Mts);
      for (auto& x : part.sessions) configs[3].sessions.push_back(std::move(x));
      for (auto& f : part.feeds) configs[3].feeds.push_back(std::move(f));
      configs[3].residentBytes += part.residentBytes;
    }
  }
  row.sequentialWeightBytes = configs[0].weightBytes;
  row.netfuseWeightBytes = configs[1].weightBytes;
  std::vector<std::vector<double>> samples(kNumConfigs);
  for (auto& c : configs) c.run();
  for (int r = 0; r < rounds; ++r)
    for (size_t k = 0; k < configs.size(); ++k) samples[k].push_back(configs[k].run());
  for (size_t k = 0; k < configs.size(); ++k) {
    row.medians.push_back(median(samples[k]));
    row.resident.push_back(configs[k].residentBytes);
  }
  return row;
}

Json rowJson(const Row& r) {
  const auto& s = r.stats;
  Json j{{"T", r.T}, {"weight_bytes", s.weightBytes()}, {"shared_bytes", s.sharedBytes},
         {"exclusive_bytes", s.exclusiveBytes}, {"aux_bytes", s.auxBytes},
         {"stored_weight_bytes", r.storedWeightBytes}, {"members_folded_weight_bytes", s.memberFoldedBytes},
         {"sequential_weight_bytes", r.sequentialWeightBytes}, {"netfuse_weight_bytes", r.netfuseWeightBytes},
         {"flops_stitched", s.flops}, {"flops_members", s.memberFlops}, {"flops_all_rows", r.allRowsFlops},
         {"flops_shared_input", r.sharedFlops}, {"grouping", r.grouping}};
  int64_t covered = s.exclusiveBytes;
  for (int64_t b : s.memberSharedBytes) covered += b;
  // Exact: the graph stores shared + exclusive bytes, and those cover every member's weights once.
  j["memory_exact"] = r.storedWeightBytes == s.weightBytes() && covered == s.memberFoldedBytes;
  for (size_t k = 0; k < kNumConfigs; ++k) {
    j["latency_ms"][kConfigs[k]] = r.medians[k];
    j["resident_bytes"][kConfigs[k]] = r.resident[k];
  }
  j["speedup_vs_sequential"] = r.medians[0] / r.medians[3];
  j["speedup_no_grouping_vs_sequential"] = r.medians[0] / r.medians[2];
  j["speedup_netfuse_vs_sequential"] = r.medians[0] / r.medians[1];
  j["speedup_all_rows_vs_sequential"] = r.medians[0] / r.medians[4];
  j["speedup_shared_input_vs_sequential"] = r.medians[0] / r.medians[5];
  return j;
}

std::string affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return "?";
  std::string out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    if (!out.empty()) out += ',';
    out += std::to_string(c);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_mts: MTS vs Sequential / NetFuse / MTS without grouping on testdata/mts, T = 2..8"};
  std::string zooPath = std::string(ZP_SOURCE_DIR) + "/testdata/mts/zoo.json", out;
  int rounds = 41, costReps = 9;
  double budgetFraction = 0.5;
  app.add_option("--zoo", zooPath, "zoo.json with the multitask group 'digits'");
  app.add_option("--out", out, "results.json")->required();
  app.add_option("--rounds", rounds, "alternating rounds per T (median)")->check(CLI::Range(1, 100000));
  app.add_option("--cost-reps", costReps, "runs per subset when measuring grouping costs")->check(CLI::Range(1, 1000));
  app.add_option("--budget-fraction", budgetFraction,
                 "memory budget of a group, as a fraction of the all-8 stitched graph's resident bytes")
      ->check(CLI::Range(0.01, 10.0));
  CLI11_PARSE(app, argc, argv);
  try {
    Bench b;
    auto zoo = artifacts::loadZoo(zooPath);
    if (!zoo.ok()) throw std::runtime_error(zoo.error().message);
    b.zoo = *zoo;
    auto groups = artifacts::loadMultitaskGroups(b.zoo);
    if (!groups.ok()) throw std::runtime_error(groups.error().message);
    for (const auto& g : *groups)
      if (g.name == "digits") b.group = g;
    if (b.group.members.size() < 8) throw std::runtime_error(zooPath + ": group 'digits' needs 8 members");
    b.group.members.resize(8);
    auto models = mts::loadGroupModels(b.zoo, b.group);
    if (!models.ok()) throw std::runtime_error(models.error().message);
    b.models = std::move(*models);
    for (size_t t = 0; t < b.models.models.size(); ++t) {
      auto s = runtime::Session::fromModel(b.models.models[t], b.models.tasks[t], {});
      b.inputs.push_back(runtime::randomInput((*s)->inputs()[0], 1000 + t));
    }
    fmt::print("measuring the latency and memory of all 255 subsets (grouping costs)...\n");
    mts::GroupCosts costs = measureCosts(b, costReps);
    const double budget = budgetFraction * costs.memory[255];
    int checks = 0;
    const bool groupingOk = groupingMatchesBruteForce(costs, budget, checks);
    Json rows = Json::array();
    fmt::print("{:>2} {:>7} {:>7} {:>9} {:>5} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6} {:>6} {:>6} {:>6} {:>6}  {}\n",
               "T", "weights", "shared", "exclusive", "exact", "seq ms", "netfuse", "mts", "mts+grp", "allrows",
               "1input", "x nf", "x mts", "x m+g", "x allr", "x 1in", "grouping");
    for (int T = 2; T <= 8; ++T) {
      Row r = benchT(b, T, costs, budget, rounds);
      Json j = rowJson(r);
      fmt::print(
          "{:>2} {:>7} {:>7} {:>9} {:>5} {:>7.3f} {:>7.3f} {:>7.3f} {:>7.3f} {:>7.3f} {:>7.3f} {:>6.2f} {:>6.2f} {:>6.2f} "
          "{:>6.2f} {:>6.2f}  {}\n",
          T, r.stats.weightBytes(), r.stats.sharedBytes, r.stats.exclusiveBytes,
          j["memory_exact"].get<bool>() ? "yes" : "NO", r.medians[0], r.medians[1], r.medians[2], r.medians[3],
          r.medians[4], r.medians[5], j["speedup_netfuse_vs_sequential"].get<double>(),
          j["speedup_no_grouping_vs_sequential"].get<double>(), j["speedup_vs_sequential"].get<double>(),
          j["speedup_all_rows_vs_sequential"].get<double>(), j["speedup_shared_input_vs_sequential"].get<double>(),
          r.grouping);
      rows.push_back(j);
    }
    std::string load = "?";
    if (auto l = readFile("/proc/loadavg"); l.ok()) load = l->substr(0, l->find(' '));
    Json result{{"bench", "mts"}, {"zoo", zooPath}, {"group", "digits"}, {"rows", rows},
                {"grouping_equals_brute_force", groupingOk}, {"grouping_checks", checks},
                {"memory_budget_bytes", budget}, {"budget_fraction", budgetFraction}, {"rounds", rounds},
                {"cost_reps", costReps}, {"cpu_affinity", affinity()}, {"load_average_1min", load},
                {"threads_per_session", 1},
                {"paper_reference", "MTS §VI-B1 (Fig. 6a, ResNet18 on Jetson TX2 GPU): 2.5x / 4.8x speedup over "
                                    "Sequential for 4 / 8 models"}};
    std::string text = result.dump(2) + "\n";
    if (auto s = writeFileAtomic(out, text); !s.ok()) throw std::runtime_error(s.error().message);
    fmt::print("grouping equals brute force: {} ({} comparisons); budget {:.0f} bytes; cpus {}; load {}\nwrote {}\n",
               groupingOk ? "yes" : "NO", checks, budget, affinity(), load, out);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_mts: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
