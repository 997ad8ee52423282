#include "passes/select/evaluation.h"
#include "libplan/util/infinity.h"

#include <limits>
#include <map>

#include <fmt/format.h>

namespace zp::select {
namespace {

const std::vector<std::string> kSystems = {"zooplan", "SV-AO-P", "SV-AO-NP", "SV-LO-P", "SV-LO-NP", "AV-P", "AV-NP"};

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

using Sums = std::map<std::string, std::pair<double, double>>;  // system -> (violation, throughput)

// One configuration: every system's choice and how it fares; `sums` accumulates.
Json evaluateConfiguration(const StitchSpace& space, const plan::SloConfiguration& cfg, const SelectParams& params,
                           Sums& sums) {
  Json cj{{"id", cfg.id}, {"systems", Json::object()}};
  ZooplanSearch search;
  Choice z = zooplanChoice(space, cfg, params, nullptr, &search);
  std::vector<Choice> all{z};
  for (auto& b : baselineChoices(space, cfg, params)) all.push_back(b);
  for (size_t s = 0; s < all.size(); ++s) {
    auto o = evaluate(space, cfg, all[s], params);
    sums[kSystems[s]].first += o.violationRate;
    sums[kSystems[s]].second += o.throughputQps;
    Json chosen = Json::object();
    for (size_t t = 0; t < space.tasks.size(); ++t)
      chosen[space.tasks[t].name] =
          Json{{"variant", decisionId(space, t, all[s].candidate[t])},
               {"placement", join(all[s].placement[t], ">")},
               {"simulated_latency_ms", o.taskLatencyMs[t]}};
    cj["systems"][kSystems[s]] =
        Json{{"violation_rate", o.violationRate}, {"throughput_qps", o.throughputQps}, {"choice", chosen}};
  }
  cj["zooplan_choice_from"] = search.winner;
  return cj;
}

// One SLO set; `res` gets each system's mean (violation, throughput) for it.
Json evaluateSet(const StitchSpace& space, const std::string& setName, SloSet set, const SelectParams& params,
                 std::map<std::string, std::map<std::string, std::pair<double, double>>>& res) {
  auto configs = generateSlos(space, set);
  Json sj{{"name", setName}, {"configurations", Json::array()}};
  Sums sums;
  for (const auto& cfg : configs) sj["configurations"].push_back(evaluateConfiguration(space, cfg, params, sums));
  Json summary = Json::object();
  for (const auto& sys : kSystems) {
    double v = sums[sys].first / configs.size(), th = sums[sys].second / configs.size();
    res[sys][setName] = {v, th};
    summary[sys] = Json{{"violation_rate", v}, {"throughput_qps", th}};
  }
  sj["summary"] = summary;
  double bestBaseline = kInf;
  for (size_t s = 1; s < kSystems.size(); ++s) bestBaseline = std::min(bestBaseline, res[kSystems[s]][setName].first);
  sj["violation_reduction_vs_best_baseline"] =
      bestBaseline > 0 ? (bestBaseline - res["zooplan"][setName].first) / bestBaseline : 0.0;
  return sj;
}

}  // namespace

Json evaluateAgainstBaselines(const StitchSpace& space, const SelectParams& params) {
  const size_t T = space.tasks.size();
  Json ev{{"queries_per_task", params.queriesPerTask}, {"arrival_orders", 0}, {"sets", Json::array()}};
  size_t arrivals = 1;
  for (size_t i = 2; i <= T; ++i) arrivals *= i;
  ev["arrival_orders"] = arrivals;
  const std::vector<std::pair<std::string, SloSet>> sets = {{"grid", SloSet::Grid},
                                                            {"accuracy-guaranteed", SloSet::AccuracyGuaranteed},
                                                            {"latency-guaranteed", SloSet::LatencyGuaranteed}};
  std::map<std::string, std::map<std::string, std::pair<double, double>>> res;  // system -> set -> (violation, throughput)
  for (const auto& [setName, set] : sets) ev["sets"].push_back(evaluateSet(space, setName, set, params, res));
  std::string table = fmt::format("{:<10} {:>12} {:>14} {:>14} {:>16}\n", "system", "violation", "acc-guaranteed",
                                  "lat-guaranteed", "throughput (q/s)");
  for (const auto& sys : kSystems)
    table += fmt::format("{:<10} {:>11.1f}% {:>13.1f}% {:>13.1f}% {:>16.1f}\n", sys, 100 * res[sys]["grid"].first,
                         100 * res[sys]["accuracy-guaranteed"].first, 100 * res[sys]["latency-guaranteed"].first,
                         res[sys]["grid"].second);
  for (const auto& s : ev["sets"])
    table += fmt::format("{}: zooplan's violation rate is {:.1f}% lower than the best baseline's\n",
                         s["name"].get<std::string>(), 100 * s["violation_reduction_vs_best_baseline"].get<double>());
  ev["table"] = table;
  return ev;
}

}  // namespace zp::select
