#include "passes/select/plan_solve.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include "libplan/profile/profile_db.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/output_dir.h"
#include "libplan/util/trace.h"
#include "passes/preload/preload.h"
#include "libplan/artifacts/plan_json.h"
#include "libplan/artifacts/profile_csv.h"
#include "libplan/artifacts/slo_json.h"

namespace zp::select {
namespace fs = std::filesystem;
constexpr double kInf = std::numeric_limits<double>::infinity();

Expected<int64_t> parseBudget(const std::string& text, int64_t total) {
  try {
    if (!text.empty() && text.back() == '%') {
      double pct = std::stod(text.substr(0, text.size() - 1));
      if (!(pct >= 0 && pct <= 100)) return makeError("--memory-budget '{}': a percentage in [0, 100]", text);
      return static_cast<int64_t>(std::floor(static_cast<double>(total) * pct / 100.0));
    }
    size_t used = 0;
    long long bytes = std::stoll(text, &used);
    if (used != text.size() || bytes < 0) throw std::invalid_argument(text);
    return static_cast<int64_t>(bytes);
  } catch (const std::exception&) {
    return makeError("--memory-budget '{}': expected BYTES or PCT%", text);
  }
}

namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

Expected<std::vector<plan::SloConfiguration>> slosFor(const std::string& spec, const StitchSpace& space) {
  if (spec == "grid") return generateSlos(space, SloSet::Grid);
  if (spec == "accuracy-guaranteed") return generateSlos(space, SloSet::AccuracyGuaranteed);
  if (spec == "latency-guaranteed") return generateSlos(space, SloSet::LatencyGuaranteed);
  std::vector<std::string> names;
  for (const auto& t : space.tasks) names.push_back(t.name);
  return artifacts::readSloFile(spec, names);
}

Json chromeTrace(const StitchSpace& space, const sim::QuerySimResult& r, const std::vector<sim::TaskQueries>& q,
                 const std::string& label) {
  ChromeTrace trace;
  for (size_t p = 0; p < space.processors.size(); ++p) trace.threadName(1, static_cast<int>(p), space.processors[p].name);
  trace.processName(1, label);
  for (const auto& s : r.spans) {
    const std::string& task = q[static_cast<size_t>(s.task)].name;
    trace.span({fmt::format("{} q{} stage{}", task, s.query, s.stage), task, 1, s.processor, s.startMs,
                s.endMs - s.startMs, Json{{"task", task}, {"query", s.query}, {"stage", s.stage}}, ""});
  }
  return trace.json();
}

std::string svgFor(const TaskSpace& ts, const std::vector<std::string>& order, int chosen) {
  struct Pt { double x, y; bool original, chosen, pareto; std::string id; };
  std::vector<Pt> pts;
  std::vector<std::string> pl(order.begin(), order.begin() + ts.positions);
  for (size_t k = 0; k < ts.candidates.size(); ++k) {
    const auto& c = ts.candidates[k];
    double x = ts.latencyMs(c, pl);
    if (!std::isfinite(x)) continue;
    pts.push_back(Pt{x, c.accuracy(true), c.original, static_cast<int>(k) == chosen, false, c.id});
  }
  // Pareto front: no other point is at least as fast and at least as accurate, and better in one.
  std::vector<size_t> idx(pts.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return pts[a].x < pts[b].x || (pts[a].x == pts[b].x && pts[a].y > pts[b].y); });
  double bestY = -kInf;
  std::vector<size_t> front;
  for (size_t i : idx)
    if (pts[i].y > bestY) {
      bestY = pts[i].y;
      pts[i].pareto = true;
      front.push_back(i);
    }
  double x0 = kInf, x1 = -kInf, y0 = kInf, y1 = -kInf;
  for (const auto& p : pts) {
    x0 = std::min(x0, p.x); x1 = std::max(x1, p.x);
    y0 = std::min(y0, p.y); y1 = std::max(y1, p.y);
  }
  if (x1 <= x0) x1 = x0 + 1e-6;
  if (y1 <= y0) y1 = y0 + 1e-6;
  const double W = 720, H = 480, L = 70, R = 20, T = 56, B = 60;
  auto sx = [&](double x) { return L + (x - x0) / (x1 - x0) * (W - L - R); };
  auto sy = [&](double y) { return H - B - (y - y0) / (y1 - y0) * (H - T - B); };
  std::string s = fmt::format(R"X(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="12">)X", W, H) + "\n";
  s += fmt::format(R"X(<rect width="{}" height="{}" fill="white"/>)X", W, H) + "\n";
  s += fmt::format(R"X(<text x="{}" y="22" font-size="15">{}: {} stitched variants under order {} (Pareto front in orange)</text>)X", L, ts.name, pts.size(), join(pl, ">")) + "\n";
  s += fmt::format(R"X(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="black"/><line x1="{0}" y1="{3}" x2="{0}" y2="{1}" stroke="black"/>)X", L, H - B, W - R, T) + "\n";
  for (int i = 0; i <= 4; ++i) {
    double xv = x0 + (x1 - x0) * i / 4, yv = y0 + (y1 - y0) * i / 4;
    s += fmt::format(R"X(<text x="{:.1f}" y="{}" text-anchor="middle">{:.4f}</text>)X", sx(xv), H - B + 18, xv) + "\n";
    s += fmt::format(R"X(<text x="{}" y="{:.1f}" text-anchor="end">{:.4f}</text>)X", L - 6, sy(yv) + 4, yv) + "\n";
  }
  s += fmt::format(R"X(<text x="{}" y="{}" text-anchor="middle">predicted latency (ms)</text>)X", (L + W - R) / 2, H - 15) + "\n";
  s += fmt::format(R"X(<text x="16" y="{}" transform="rotate(-90 16 {})" text-anchor="middle">accuracy (measured where available)</text>)X", (T + H - B) / 2, (T + H - B) / 2) + "\n";
  std::string path;
  for (size_t i : front) path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", sx(pts[i].x), sy(pts[i].y));
  if (!path.empty()) s += fmt::format(R"X(<path d="{}" fill="none" stroke="#e67e00" stroke-width="1.5"/>)X", path) + "\n";
  for (const auto& p : pts) {
    if (p.original || p.chosen) continue;
    s += fmt::format(R"X(<circle cx="{:.1f}" cy="{:.1f}" r="{}" fill="{}" fill-opacity="0.6"><title>{}</title></circle>)X", sx(p.x), sy(p.y),
                     p.pareto ? 3.5 : 2, p.pareto ? "#e67e00" : "#4a78b5", p.id) + "\n";
  }
  for (const auto& p : pts)
    if (p.original)
      s += fmt::format(R"X(<rect x="{:.1f}" y="{:.1f}" width="8" height="8" fill="none" stroke="black" stroke-width="1.5"><title>original {}</title></rect>)X", sx(p.x) - 4, sy(p.y) - 4, p.id) + "\n";
  for (const auto& p : pts)
    if (p.chosen)
      s += fmt::format(R"X(<circle cx="{:.1f}" cy="{:.1f}" r="7" fill="none" stroke="#c0392b" stroke-width="2.5"><title>chosen {}</title></circle>)X", sx(p.x), sy(p.y), p.id) + "\n";
  s += fmt::format(R"X(<text x="{}" y="{}">squares: original variants; red ring: chosen variant (first feasible configuration)</text>)X", L, 42) + "\n";
  s += "</svg>\n";
  return s;
}

}  // namespace

namespace {

// Every file plan-solve writes, checked before anything is written: not a
// directory, not one of the files it reads, no two of them the same.
Status checkOutputs(const PlanSolveParams& params, const StitchSpace& space) {
  std::vector<GuardedPath> guarded;
  for (const char* f : {"report.json", "profile.csv", "accuracy.csv"}) guarded.push_back({params.profileDir / f, "input"});
  guarded.push_back({space.stitchDir / "stitch.json", "input"});
  guarded.push_back({(space.stitchDir / space.manifest.zooPath).lexically_normal(), "input"});
  if (fs::is_regular_file(params.slo)) guarded.push_back({params.slo, "input"});
  std::error_code ec;
  if (!params.svgDir.empty() && fs::exists(params.svgDir, ec) && !fs::is_directory(params.svgDir, ec))
    return makeError("{}: exists and is not a directory", params.svgDir.string());
  std::vector<fs::path> outputs{params.output, params.trace, params.evaluation, params.stats};
  if (!params.svgDir.empty())
    for (const auto& t : space.tasks) outputs.push_back(params.svgDir / (t.name + ".svg"));
  return checkOutputFiles(outputs, guarded);
}

}  // namespace

Expected<PlanSolveResult> runPlanSolve(const PlanSolveParams& params) {
  const auto t0 = std::chrono::steady_clock::now();
  ZP_ASSIGN_OR_RETURN(auto space, loadStitchSpace(params.profileDir));
  ZP_TRY(checkOutputs(params, space));
  if (space.tasks.empty()) return makeError("{}: the profile has no tasks", params.profileDir.string());
  ZP_ASSIGN_OR_RETURN(auto slos, slosFor(params.slo, space));
  for (const auto& b : params.budgets) ZP_TRY(parseBudget(b, 0));  // bad input before any directory is made
  for (const auto& f : {params.output, params.trace, params.evaluation}) {
    if (f.empty() || f.parent_path().empty()) continue;
    std::error_code ec;
    fs::create_directories(f.parent_path(), ec);
    if (ec) return makeError("{}: cannot create its directory: {}", f.string(), ec.message());
  }
  const auto orders = globalOrders(space);
  const size_t T = space.tasks.size();

  // Algorithm 1 with one global order over every configuration: the order
  // minimising the mean over configurations and tasks of the best feasible
  // variant's latency.
  std::vector<std::vector<std::vector<int>>> theta;  // [config][task]
  for (const auto& slo : slos) theta.push_back(feasibleSets(space, slo, orders, params.select));
  double best = kInf;
  std::vector<std::string> pStar = orders.front();
  for (const auto& o : orders) {
    double sum = 0;
    int n = 0;
    for (size_t c = 0; c < slos.size(); ++c)
      for (size_t t = 0; t < T; ++t) {
        const auto& ts = space.tasks[t];
        double m = kInf;
        for (int k : theta[c][t])
          m = std::min(m, ts.latencyMs(ts.candidates[static_cast<size_t>(k)], std::vector<std::string>(o.begin(), o.begin() + ts.positions)));
        if (std::isfinite(m)) { sum += m; ++n; }
      }
    double mean = n ? sum / n : 0.0;
    if (mean < best - 1e-12) { best = mean; pStar = o; }
  }

  plan::Plan plan;
  plan.header.tool = params.tool;
  plan.header.version = params.version;
  plan.header.inputs = space.inputHashes;
  if (fs::exists(params.slo)) {
    ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(params.slo));
    plan.header.inputs["slo"] = sha256Hex(bytes);
  } else {
    plan.header.inputs["slo"] = "generated:" + params.slo;
  }
  plan::StitchPlan sp;
  fs::path outDir = params.output.parent_path().empty() ? fs::path(".") : params.output.parent_path();
  sp.stitchDir = fs::weakly_canonical(fs::absolute(space.stitchDir)).lexically_relative(fs::weakly_canonical(fs::absolute(outDir))).generic_string();
  sp.accuracySource = params.select.measuredAccuracyForDecisions ? "measured" : "estimated (originals measured)";
  sp.processors = space.processors;
  sp.placementOrder = pStar;
  sp.ordersEvaluated = static_cast<int>(orders.size());
  sp.meanLatencyMs = std::isfinite(best) ? best : 0.0;
  sp.slos = slos;

  // Memory per (task, position, variant) on the processor p* puts it on.
  ZP_ASSIGN_OR_RETURN(auto db, artifacts::readProfileCsv(params.profileDir / "profile.csv"));
  auto memoryOf = [&](const TaskSpace& ts, int pos, const std::string& variant) -> int64_t {
    const auto& proc = pStar[static_cast<size_t>(pos)];
    auto p = std::find_if(space.processors.begin(), space.processors.end(), [&](const auto& x) { return x.name == proc; });
    const auto* r = db.find(ts.name, pos, variant, proc, p != space.processors.end() && p->source == "host" ? p->policy : "default");
    if (r && r->memoryBytes) return *r->memoryBytes;
    return ts.stitch->subgraph(pos, variant).cost.weightBytes;  // imported rows carry no memory: weights at least
  };

  std::vector<int> firstChosen(T, -1);
  for (size_t t = 0; t < T; ++t) {
    const auto& ts = space.tasks[t];
    plan::TaskPlan tp;
    tp.name = ts.name;
    tp.positions = ts.positions;
    std::vector<std::string> pl(pStar.begin(), pStar.begin() + ts.positions);
    std::set<std::pair<int, std::string>> used;
    for (size_t c = 0; c < slos.size(); ++c) {
      const auto& s = slos[c].tasks.at(ts.name);
      plan::Selection sel;
      sel.slo = slos[c].id;
      int pick = -1;
      double bestLat = kInf;
      for (int k : theta[c][t]) {
        double l = ts.latencyMs(ts.candidates[static_cast<size_t>(k)], pl);
        if (l < bestLat) { bestLat = l; pick = k; }
      }
      // Infeasible under p* although feasible under another order counts as infeasible here.
      if (pick >= 0 && bestLat <= s.latencyMs) {
        sel.feasible = true;
        const auto& cand = ts.candidates[static_cast<size_t>(pick)];
        sel.combination = cand.id;
        sel.accuracy = decisionAccuracy(cand, params.select);
        sel.latencyMs = bestLat;
        if (firstChosen[t] < 0) firstChosen[t] = pick;
      } else {
        // The closest variant and by how much it misses.
        double bestMiss = kInf;
        int closest = -1;
        for (size_t k = 0; k < ts.candidates.size(); ++k) {
          const auto& cand = ts.candidates[k];
          double m = missScore(decisionAccuracy(cand, params.select), ts.latencyMs(cand, pl), s);
          // The first candidate when no score compares (infinite or NaN): always an index.
          if (closest < 0 || m < bestMiss) { bestMiss = m; closest = static_cast<int>(k); }
        }
        const auto& cand = ts.candidates[static_cast<size_t>(closest)];
        double acc = decisionAccuracy(cand, params.select);
        double lat = ts.latencyMs(cand, pl);
        sel.feasible = false;
        sel.combination = cand.id;
        sel.accuracy = acc;
        sel.latencyMs = lat;
        sel.miss = plan::SloMiss{cand.id, std::max(0.0, s.accuracy - acc), std::max(0.0, lat - s.latencyMs)};
        pick = closest;
      }
      const auto& cand = ts.candidates[static_cast<size_t>(pick)];
      for (int p = 0; p < ts.positions; ++p) used.insert({p, cand.variants[static_cast<size_t>(p)]});
      tp.selections.push_back(std::move(sel));
    }
    for (const auto& [pos, variant] : used) {
      const auto& sg = ts.stitch->subgraph(pos, variant);
      tp.subgraphs.push_back(plan::PlannedSubgraph{pos, variant, sg.hash, sg.file, pStar[static_cast<size_t>(pos)], memoryOf(ts, pos, variant)});
    }
    sp.tasks.push_back(std::move(tp));
  }

  // Preloading: hotness (Eq. 7) of every subgraph over the configurations.
  std::vector<preload::Item> items;
  int64_t totalBytes = 0;
  for (size_t t = 0; t < T; ++t) {
    const auto& ts = space.tasks[t];
    for (int pos = 0; pos < ts.positions; ++pos)
      for (const auto& v : ts.stitch->variants) {
        preload::Item it;
        it.id = fmt::format("{}/{}/{}", ts.name, pos, v.id);
        it.task = static_cast<int>(t);
        it.position = pos;
        it.bytes = memoryOf(ts, pos, v.id);
        for (size_t c = 0; c < slos.size(); ++c) {
          const auto& set = theta[c][t];
          if (set.empty()) continue;
          int occur = 0;
          for (int k : set) occur += ts.candidates[static_cast<size_t>(k)].variants[static_cast<size_t>(pos)] == v.id;
          it.hotness += static_cast<double>(occur) / static_cast<double>(set.size());
        }
        totalBytes += it.bytes;
        items.push_back(it);
      }
  }
  std::string preloadSummary;
  for (const auto& b : params.budgets) {
    ZP_ASSIGN_OR_RETURN(int64_t budget, parseBudget(b, totalBytes));
    plan::PreloadSet ps;
    ps.budget = b;
    ps.budgetBytes = budget;
    for (size_t i : preload::greedyPreload(items, budget)) {
      ps.greedy.push_back(items[i].id);
      ps.greedyBytes += items[i].bytes;
      ps.greedyHotness += items[i].hotness;
    }
    auto exact = preload::exactPreload(items, budget);
    for (size_t i : exact.chosen) {
      ps.exact.push_back(items[i].id);
      ps.exactBytes += items[i].bytes;
    }
    ps.exactHotness = exact.hotness;
    ps.exactOptimal = exact.optimal;
    ps.gap = exact.hotness > 0 ? (exact.hotness - ps.greedyHotness) / exact.hotness : 0.0;
    preloadSummary += fmt::format("  budget {:>5} ({} of {} bytes): greedy hotness {:.3f} ({} subgraphs), exact {:.3f}{} ({} subgraphs), gap {:.1f}%\n",
                                  b, budget, totalBytes, ps.greedyHotness, ps.greedy.size(), ps.exactHotness,
                                  ps.exactOptimal ? " (optimal)" : " (not proven optimal)", ps.exact.size(), 100.0 * ps.gap);
    sp.preload.push_back(std::move(ps));
  }
  plan.stitch = std::move(sp);

  PlanSolveResult result;
  std::string feasibleCount;
  for (const auto& tp : plan.stitch->tasks) {
    int f = 0;
    for (const auto& s : tp.selections) f += s.feasible;
    feasibleCount += fmt::format("{}{}: {}/{}", feasibleCount.empty() ? "" : ", ", tp.name, f, tp.selections.size());
  }
  result.summary = fmt::format("placement order {} (best of {} orders, mean latency {:.4f} ms)\nfeasible SLO configurations per task: {}\npreloading:\n{}",
                               join(pStar, ">"), orders.size(), plan.stitch->meanLatencyMs, feasibleCount, preloadSummary);
  for (const auto& tp : plan.stitch->tasks)
    for (const auto& s : tp.selections)
      if (!s.feasible && s.miss)
        result.summary += fmt::format("  infeasible: {} under {}: closest {} misses accuracy by {:.4f}, latency by {:.4f} ms\n",
                                      tp.name, s.slo, s.miss->combination, s.miss->accuracyShort, s.miss->latencyOverMs);

  // Outputs from here on: their folders are made only now, so a run refused
  // above (bad SLOs, budgets) leaves nothing behind.
  for (const auto& f : {params.output, params.trace, params.evaluation, params.stats}) {
    if (f.empty() || f.parent_path().empty()) continue;
    std::error_code ec;
    fs::create_directories(f.parent_path(), ec);
    if (ec) return makeError("{}: cannot create its directory: {}", f.string(), ec.message());
  }

  // Visuals.
  Algorithm1Result a1;
  std::string note;
  Choice first = zooplanChoice(space, slos.front(), params.select, &a1, &note);
  if (!params.trace.empty()) {
    auto q = queriesOf(space, first, params.select.queriesPerTask);
    std::vector<int> arrival(T);
    std::iota(arrival.begin(), arrival.end(), 0);
    auto r = sim::simulateQueries(q, static_cast<int>(space.processors.size()), arrival, true);
    ZP_TRY(writeFileAtomic(params.trace, canonicalJson(chromeTrace(space, r, q, "zooplan " + slos.front().id))));
  }
  if (!params.svgDir.empty()) {
    std::error_code ec;
    fs::create_directories(params.svgDir, ec);
    if (ec) return makeError("{}: cannot create: {}", params.svgDir.string(), ec.message());
    for (size_t t = 0; t < T; ++t)
      ZP_TRY(writeFileAtomic(params.svgDir / (space.tasks[t].name + ".svg"), svgFor(space.tasks[t], pStar, firstChosen[t])));
  }

  // Evaluation against the baselines (§5.1), in the query simulator.
  if (!params.evaluation.empty()) {
    Json ev{{"queries_per_task", params.select.queriesPerTask}, {"arrival_orders", 0}, {"sets", Json::array()}};
    size_t arrivals = 1;
    for (size_t i = 2; i <= T; ++i) arrivals *= i;
    ev["arrival_orders"] = arrivals;
    std::string table = fmt::format("{:<10}", "system");
    std::vector<std::pair<std::string, SloSet>> sets = {{"grid", SloSet::Grid},
                                                        {"accuracy-guaranteed", SloSet::AccuracyGuaranteed},
                                                        {"latency-guaranteed", SloSet::LatencyGuaranteed}};
    std::map<std::string, std::map<std::string, std::pair<double, double>>> res;  // system -> set -> (violation, throughput)
    std::vector<std::string> systems = {"zooplan", "SV-AO-P", "SV-AO-NP", "SV-LO-P", "SV-LO-NP", "AV-P", "AV-NP"};
    for (const auto& [setName, set] : sets) {
      auto configs = generateSlos(space, set);
      Json sj{{"name", setName}, {"configurations", Json::array()}};
      std::map<std::string, std::pair<double, double>> sums;
      for (const auto& cfg : configs) {
        Json cj{{"id", cfg.id}, {"systems", Json::object()}};
        std::string why;
        Choice z = zooplanChoice(space, cfg, params.select, nullptr, &why);
        std::vector<Choice> all{z};
        for (auto& b : baselineChoices(space, cfg, params.select)) all.push_back(b);
        for (size_t s = 0; s < all.size(); ++s) {
          auto o = evaluate(space, cfg, all[s], params.select);
          sums[systems[s]].first += o.violationRate;
          sums[systems[s]].second += o.throughputQps;
          Json chosen = Json::object();
          for (size_t t = 0; t < T; ++t)
            chosen[space.tasks[t].name] = Json{{"variant", space.tasks[t].candidates[static_cast<size_t>(all[s].candidate[t])].id},
                                               {"placement", join(all[s].placement[t], ">")},
                                               {"simulated_latency_ms", o.taskLatencyMs[t]}};
          cj["systems"][systems[s]] = Json{{"violation_rate", o.violationRate}, {"throughput_qps", o.throughputQps}, {"choice", chosen}};
        }
        cj["zooplan_choice_from"] = why;
        sj["configurations"].push_back(cj);
      }
      Json summary = Json::object();
      for (const auto& sys : systems) {
        double v = sums[sys].first / configs.size(), th = sums[sys].second / configs.size();
        res[sys][setName] = {v, th};
        summary[sys] = Json{{"violation_rate", v}, {"throughput_qps", th}};
      }
      sj["summary"] = summary;
      double bestBaseline = kInf;
      for (size_t s = 1; s < systems.size(); ++s) bestBaseline = std::min(bestBaseline, res[systems[s]][setName].first);
      sj["violation_reduction_vs_best_baseline"] = bestBaseline > 0 ? (bestBaseline - res["zooplan"][setName].first) / bestBaseline : 0.0;
      ev["sets"].push_back(sj);
    }
    table = fmt::format("{:<10} {:>12} {:>14} {:>14} {:>16}\n", "system", "violation", "acc-guaranteed", "lat-guaranteed", "throughput (q/s)");
    for (const auto& sys : systems)
      table += fmt::format("{:<10} {:>11.1f}% {:>13.1f}% {:>13.1f}% {:>16.1f}\n", sys, 100 * res[sys]["grid"].first,
                           100 * res[sys]["accuracy-guaranteed"].first, 100 * res[sys]["latency-guaranteed"].first,
                           res[sys]["grid"].second);
    for (const auto& s : ev["sets"])
      table += fmt::format("{}: zooplan's violation rate is {:.1f}% lower than the best baseline's\n", s["name"].get<std::string>(),
                           100 * s["violation_reduction_vs_best_baseline"].get<double>());
    ev["table"] = table;
    result.evaluation = ev;
    ZP_TRY(writeFileAtomic(params.evaluation, canonicalJson(ev)));
    result.summary += "\nSLO evaluation (simulated, " + std::to_string(params.select.queriesPerTask) +
                      " queries per task, averaged over all task arrival orders):\n" + table;
  }
  ZP_TRY(artifacts::writePlan(plan, params.output));
  result.solveMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!params.stats.empty()) ZP_TRY(writeFileAtomic(params.stats, canonicalJson(Json{{"solve_ms", result.solveMs}})));
  return result;
}

}  // namespace zp::select
