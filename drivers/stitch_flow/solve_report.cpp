// plan-solve's pictures of a stitch plan: the simulated query schedule as a
// Chrome trace and each task's accuracy-latency space as an SVG.
#include "drivers/stitch_flow/solve_report.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "libplan/util/trace.h"
#include "libplan/util/infinity.h"

namespace zp::drivers {
using select::StitchSpace;
using select::TaskSpace;
namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

}  // namespace

Json queryScheduleTrace(const StitchSpace& space, const sim::QuerySimResult& r, const std::vector<sim::TaskQueries>& q,
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

std::string accuracyLatencySvg(const TaskSpace& ts, const std::vector<std::string>& order, int64_t chosen) {
  struct Pt { double x, y; bool original, chosen, pareto; std::string id; };
  std::vector<Pt> pts;
  std::vector<std::string> pl(order.begin(), order.begin() + ts.positions);
  for (uint64_t k : ts.validCombinations()) {  // a plot of every combination: the one list plan-solve makes
    const select::Candidate c = ts.candidate(k);
    double x = ts.latencyMs(c, pl);
    if (!std::isfinite(x)) continue;
    pts.push_back(Pt{x, c.accuracy(true), c.original, static_cast<int64_t>(k) == chosen, false, c.id});
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

std::string predictedServingTable(const plan::StitchPlan& plan) {
  if (!plan.workload || plan.systems.empty()) return "";
  const bool inTurn = plan.systems.front().predictedInTurn.has_value();
  std::string turn = ", and served in turn as plan-run --serve serves them";
  if (!plan.workload->servedInTurn.empty()) turn += " (" + fmt::format("{}", fmt::join(plan.workload->servedInTurn, ", ")) + ")";
  // Judged slowed down too: each rate beside the one with every calibrated time that many times as long.
  const double slowdown = plan.workload->slowdownJudged;
  const bool slowed = slowdown != 1.0;
  const std::string slowedHeader = slowed ? fmt::format(" / x{:g}", slowdown) : "";
  auto rates = [&](double calibrated, double slow) {
    return slowed && slow >= 0 ? fmt::format("{:.1f}% / {:.1f}%", 100 * calibrated, 100 * slow)
                               : fmt::format("{:.1f}%", 100 * calibrated);
  };
  std::string out = fmt::format("predicted at the workload (calibrated serving simulator{}), mean over {} SLO "
                                "configuration(s) each alone{}:\n{:<12} {:>18} {:>16}{}\n",
                                slowed ? fmt::format("; and with every calibrated time x{:g}, choices compared by the "
                                                     "mean of the two",
                                                     slowdown)
                                       : "",
                                plan.systems.front().selections.size(), inTurn ? turn : "", "system",
                                "violations" + slowedHeader, "throughput q/s",
                                inTurn ? "   in turn: violations" + slowedHeader : "");
  for (const auto& sys : plan.systems) {
    double violations = 0, slow = 0, qps = 0;
    int n = 0;
    for (const auto& sel : sys.selections)
      if (sel.predicted) {
        violations += sel.predicted->violationRate, qps += sel.predicted->throughputQps, ++n;
        slow = slow < 0 || sel.predicted->slowedViolationRate < 0 ? -1 : slow + sel.predicted->slowedViolationRate;
      }
    if (n == 0) continue;
    out += fmt::format("{:<12} {:>18} {:>16.1f}", sys.name, rates(violations / n, slow < 0 ? -1 : slow / n), qps / n);
    if (sys.predictedInTurn)
      out += fmt::format(" {:>21}",
                         rates(sys.predictedInTurn->violationRate, sys.predictedInTurn->slowedViolationRate));
    out += "\n";
  }
  // A single technique (--only) makes no joint choice (nothing judged): no line.
  if (inTurn && plan.systems.front().predictedInTurn->judged > 0) {
    const auto& z = *plan.systems.front().predictedInTurn;
    out += fmt::format("zooplan's choices judged together, served in turn: {} joint choice(s) judged, each moving one "
                       "task's decision under one configuration to the one it has under another; {}\n",
                       z.judged,
                       z.provenBest ? std::string("proven best of the choices reachable so (the violation bound met)")
                                    : fmt::format("not proven optimal, gap to the bound {:.2f} points",
                                                  100 * (z.judgedViolationRate() - z.violationBound)));
  }
  // zooplan's search: proven best among every mix of its candidates' decisions, or the gap to the bound.
  int proven = 0, n = 0;
  double worstGap = 0;
  std::string worstAt;
  for (const auto& sel : plan.systems.front().selections) {
    if (!sel.predicted || sel.predicted->judged == 0) continue;
    ++n;
    proven += sel.predicted->provenBest;
    const double gap = sel.predicted->judgedViolationRate() - sel.predicted->violationBound;
    if (!sel.predicted->provenBest && (worstAt.empty() || gap > worstGap)) worstGap = gap, worstAt = sel.slo;
  }
  if (n > 0)
    out += fmt::format("zooplan's choice: proven best of every mix of its candidates' decisions in {} of {} "
                       "configuration(s) (every mix judged, or the violation bound met){}\n",
                       proven, n,
                       worstAt.empty() ? ""
                                       : fmt::format("; not proven optimal in the others, gap to the bound up to {:.2f} "
                                                     "points ({})",
                                                     100 * worstGap, worstAt));
  const auto& chosen = plan.systems.front();
  if (chosen.servingOrder == ServingOrder::EarliestDeadline && chosen.predictedFirstCome) {
    // One configuration served: the one named, else the first.
    const std::string one = plan.workload->servedInTurn.empty() ? "" : plan.workload->servedInTurn.front();
    auto sel = std::find_if(chosen.selections.begin(), chosen.selections.end(),
                            [&](const plan::SystemSelection& x) { return x.slo == one; });
    if (sel == chosen.selections.end()) sel = chosen.selections.begin();
    const auto& served = chosen.predictedInTurn ? *chosen.predictedInTurn : *sel->predicted;
    // The order is kept for any gain, which one decimal may round away: small rates in two significant digits.
    auto percent = [](double rate) {
      return 100 * rate >= 1 ? fmt::format("{:.1f}%", 100 * rate) : fmt::format("{:.2g}%", 100 * rate);
    };
    out += fmt::format("zooplan's processors take the queued query with the earliest deadline first: {} "
                       "violations predicted{}, against {} for its best choices served first come first served "
                       "(as the other systems are)\n",
                       percent(served.violationRate), chosen.predictedInTurn ? " in turn" : "",
                       percent(chosen.predictedFirstCome->violationRate));
  }
  return out;
}

}  // namespace zp::drivers
