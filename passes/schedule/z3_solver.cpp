#include "passes/schedule/z3_solver.h"

#include <z3++.h>

#include <chrono>
#include <functional>
#include <limits>
#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

namespace zp::schedule {

using sim::Objective;
using sim::Problem;

namespace {

// Shortest decimal that reads back as the same double: short rationals for Z3.
std::string dec(double v) { return fmt::format("{}", v); }

double toDouble(const z3::expr& e) {
  std::string s = e.get_decimal_string(20);
  if (!s.empty() && s.back() == '?') s.pop_back();
  return std::strtod(s.c_str(), nullptr);
}

struct Model {
  z3::context& c;
  const Problem& p;
  std::vector<std::vector<z3::expr>> x, s, e, ready, head;
  std::vector<z3::expr> release, end;
  std::vector<z3::expr> constraints;

  explicit Model(z3::context& ctx, const Problem& prob) : c(ctx), p(prob) {}

  z3::expr real(double v) { return c.real_val(dec(v).c_str()); }
  // Constant depending on the accelerator of (n,i): ite(x, v1, v0).
  z3::expr byAcc(int n, int i, const std::vector<double>& v) {
    const auto& xi = x[static_cast<size_t>(n)][static_cast<size_t>(i)];
    return z3::ite(xi, real(v[1]), real(v[0]));
  }

  // The model of the whole problem: one step per kind of constraint, in this order.
  void build(int maxTransitions) {
    declareVariables();
    releaseTimes();
    readyTimesAndHeads(maxTransitions);
    const auto rel = sim::dependencyRelated(p);
    // Per group, the extra time its overlaps with unrelated DNNs' groups cost it.
    std::vector<std::vector<std::vector<z3::expr>>> extra(p.dnns.size());
    for (size_t n = 0; n < p.dnns.size(); ++n) extra[n].resize(p.dnns[n].groups.size());
    const int N = p.numDnns();
    for (int n = 0; n < N; ++n)
      for (int m = n + 1; m < N; ++m)
        if (!rel[static_cast<size_t>(n)][static_cast<size_t>(m)]) pairTerms(n, m, extra);
    durationsAndHeadStarts(rel, extra);
  }

  // x (accelerator), s (start) and e (end) of every group.
  void declareVariables() {
    const int N = p.numDnns();
    for (int n = 0; n < N; ++n) {
      const auto& d = p.dnns[static_cast<size_t>(n)];
      const int G = static_cast<int>(d.groups.size());
      std::vector<z3::expr> xs, ss, es;
      for (int i = 0; i < G; ++i) {
        const auto& g = d.groups[static_cast<size_t>(i)];
        z3::expr xv = c.bool_const(fmt::format("x_{}_{}", n, i).c_str());
        if (!g.allowed(1)) constraints.push_back(!xv);
        if (!g.allowed(0)) constraints.push_back(xv);
        xs.push_back(xv);
        ss.push_back(c.real_const(fmt::format("s_{}_{}", n, i).c_str()));
        es.push_back(c.real_const(fmt::format("e_{}_{}", n, i).c_str()));
      }
      x.push_back(xs);
      s.push_back(ss);
      e.push_back(es);
    }
  }

  void releaseTimes() {
    const int N = p.numDnns();
    // Release of each DNN (after its dependencies, plus the transition).
    for (int n = 0; n < N; ++n) {
      const auto& d = p.dnns[static_cast<size_t>(n)];
      if (d.deps.empty()) {
        release.push_back(c.real_val(0));
        continue;
      }
      z3::expr r = c.real_const(fmt::format("r_{}", n).c_str());
      z3::expr_vector eqs(c);
      for (int dep : d.deps) {
        const auto& dd = p.dnns[static_cast<size_t>(dep)];
        int li = static_cast<int>(dd.groups.size()) - 1;
        const auto& xl = x[static_cast<size_t>(dep)][static_cast<size_t>(li)];
        const auto& xf = x[static_cast<size_t>(n)][0];
        z3::expr tr = z3::ite(xl == xf, real(0), byAcc(dep, li, dd.groups[static_cast<size_t>(li)].transitionOutMs) +
                                                     byAcc(n, 0, d.groups[0].transitionInMs));
        z3::expr cand = e[static_cast<size_t>(dep)][static_cast<size_t>(li)] + tr;
        constraints.push_back(r >= cand);
        eqs.push_back(r == cand);
      }
      constraints.push_back(z3::mk_or(eqs));
      release.push_back(r);
    }
  }

  void readyTimesAndHeads(int maxTransitions) {
    const int N = p.numDnns();
    // Ready times and segment heads.
    for (int n = 0; n < N; ++n) {
      const auto& d = p.dnns[static_cast<size_t>(n)];
      const int G = static_cast<int>(d.groups.size());
      std::vector<z3::expr> rd, hd;
      z3::expr_vector trs(c);
      for (int i = 0; i < G; ++i) {
        if (i == 0) {
          rd.push_back(release[static_cast<size_t>(n)]);
          hd.push_back(c.bool_val(true));
          continue;
        }
        const auto& xa = x[static_cast<size_t>(n)][static_cast<size_t>(i - 1)];
        const auto& xb = x[static_cast<size_t>(n)][static_cast<size_t>(i)];
        z3::expr tr = xa != xb;  // Eq. 3
        trs.push_back(tr);
        rd.push_back(e[static_cast<size_t>(n)][static_cast<size_t>(i - 1)] +
                     byAcc(n, i - 1, d.groups[static_cast<size_t>(i - 1)].transitionOutMs) +
                     byAcc(n, i, d.groups[static_cast<size_t>(i)].transitionInMs));
        hd.push_back(tr);
        // Inside a segment the next group starts when the previous one ends.
        constraints.push_back(z3::implies(!tr, s[static_cast<size_t>(n)][static_cast<size_t>(i)] ==
                                                   e[static_cast<size_t>(n)][static_cast<size_t>(i - 1)]));
      }
      if (maxTransitions >= 0 && trs.size() > 0) {
        std::vector<int> ones(trs.size(), 1);
        constraints.push_back(z3::pble(trs, ones.data(), maxTransitions));
      }
      ready.push_back(rd);
      head.push_back(hd);
    }
  }

  // Pairwise terms between the groups of two unrelated DNNs n < m.
  void pairTerms(int n, int m, std::vector<std::vector<std::vector<z3::expr>>>& extra) {
    const auto& dn = p.dnns[static_cast<size_t>(n)];
    const auto& dm = p.dnns[static_cast<size_t>(m)];
    const int Gi = static_cast<int>(dn.groups.size()), Gj = static_cast<int>(dm.groups.size());
    // Order atoms of every cross pair as named Booleans, with the implications
    // the chain order gives for free (s_i <= e_i <= s_{i+1}); they let the SAT
    // core propagate what linear arithmetic would only find by conflicts.
    auto grid = [&](const char* tag) {
      std::vector<std::vector<z3::expr>> g;
      for (int i = 0; i < Gi; ++i) {
        std::vector<z3::expr> row;
        for (int j = 0; j < Gj; ++j) row.push_back(c.bool_const(fmt::format("{}_{}_{}_{}_{}", tag, n, i, m, j).c_str()));
        g.push_back(row);
      }
      return g;
    };
    auto P = grid("before"), Q = grid("after"), B = grid("sfirst"), C = grid("efirst");
    for (int i = 0; i < Gi; ++i)
      for (int j = 0; j < Gj; ++j) {
        const auto& si = s[static_cast<size_t>(n)][static_cast<size_t>(i)];
        const auto& ei = e[static_cast<size_t>(n)][static_cast<size_t>(i)];
        const auto& sj = s[static_cast<size_t>(m)][static_cast<size_t>(j)];
        const auto& ej = e[static_cast<size_t>(m)][static_cast<size_t>(j)];
        const auto& pij = P[static_cast<size_t>(i)][static_cast<size_t>(j)];
        const auto& qij = Q[static_cast<size_t>(i)][static_cast<size_t>(j)];
        const auto& bij = B[static_cast<size_t>(i)][static_cast<size_t>(j)];
        const auto& cij = C[static_cast<size_t>(i)][static_cast<size_t>(j)];
        constraints.push_back(pij == (ei <= sj));
        constraints.push_back(qij == (ej <= si));
        constraints.push_back(bij == (si <= sj));
        constraints.push_back(cij == (ei <= ej));
        if (j + 1 < Gj) {
          constraints.push_back(z3::implies(pij, P[static_cast<size_t>(i)][static_cast<size_t>(j + 1)]));
          constraints.push_back(z3::implies(bij, B[static_cast<size_t>(i)][static_cast<size_t>(j + 1)]));
          constraints.push_back(z3::implies(cij, C[static_cast<size_t>(i)][static_cast<size_t>(j + 1)]));
        }
        if (i > 0) {
          constraints.push_back(z3::implies(pij, P[static_cast<size_t>(i - 1)][static_cast<size_t>(j)]));
          constraints.push_back(z3::implies(bij, B[static_cast<size_t>(i - 1)][static_cast<size_t>(j)]));
          constraints.push_back(z3::implies(cij, C[static_cast<size_t>(i - 1)][static_cast<size_t>(j)]));
        }
        if (i + 1 < Gi) constraints.push_back(z3::implies(qij, Q[static_cast<size_t>(i + 1)][static_cast<size_t>(j)]));
        if (j > 0) constraints.push_back(z3::implies(qij, Q[static_cast<size_t>(i)][static_cast<size_t>(j - 1)]));
        constraints.push_back(z3::implies(pij, bij && cij));
        constraints.push_back(z3::implies(qij, !bij && !cij));

        const auto& xi = x[static_cast<size_t>(n)][static_cast<size_t>(i)];
        const auto& xj = x[static_cast<size_t>(m)][static_cast<size_t>(j)];
        z3::expr same = xi == xj;
        // Eq. 9: one group at a time per accelerator.
        constraints.push_back(z3::implies(same, pij || qij));
        // FIFO among segment heads: the one ready first starts first (tie: lower DNN index n).
        const auto& hi = head[static_cast<size_t>(n)][static_cast<size_t>(i)];
        const auto& hj = head[static_cast<size_t>(m)][static_cast<size_t>(j)];
        const auto& ri = ready[static_cast<size_t>(n)][static_cast<size_t>(i)];
        const auto& rj = ready[static_cast<size_t>(m)][static_cast<size_t>(j)];
        constraints.push_back(z3::implies(same && hi && hj && ri <= rj, bij));
        constraints.push_back(z3::implies(same && hi && hj && rj < ri, !bij));
        // Eq. 8: overlap length; Eq. 7: the slowdown it causes on each side.
        z3::expr ov = c.real_const(fmt::format("ov_{}_{}_{}_{}", n, i, m, j).c_str());
        constraints.push_back(ov == z3::ite(pij || qij, real(0), z3::ite(cij, ei, ej) - z3::ite(bij, sj, si)));
        // Redundant bounds that tighten the linear relaxation.
        constraints.push_back(ov >= 0 && ov <= ei - si && ov <= ej - sj);
        const auto& gi = dn.groups[static_cast<size_t>(i)];
        const auto& gj = dm.groups[static_cast<size_t>(j)];
        // Slowdown s while overlapping: progress ov/s, so the group takes
        // ov * (1 - 1/s) = ov * (s-1)/s longer (exact rational in Z3).
        auto slow = [&](const sim::GroupCost& a, int accA, const sim::GroupCost& b, int accB) {
          if (!a.allowed(accA) || !b.allowed(accB)) return 1.0;
          return p.contention.slowdown(accA, a.demand[static_cast<size_t>(accA)], b.demand[static_cast<size_t>(accB)]);
        };
        auto coef = [&](double sl) { return (real(sl) - real(1)) / real(sl); };
        double i1 = slow(gi, 1, gj, 0), i0 = slow(gi, 0, gj, 1);
        double j1 = slow(gj, 1, gi, 0), j0 = slow(gj, 0, gi, 1);
        if (i1 != 1 || i0 != 1)
          extra[static_cast<size_t>(n)][static_cast<size_t>(i)].push_back(
              z3::ite(xi, coef(i1) * ov, coef(i0) * ov));
        if (j1 != 1 || j0 != 1)
          extra[static_cast<size_t>(m)][static_cast<size_t>(j)].push_back(
              z3::ite(xj, coef(j1) * ov, coef(j0) * ov));
      }
    }

  void durationsAndHeadStarts(const std::vector<std::vector<bool>>& rel,
                              const std::vector<std::vector<std::vector<z3::expr>>>& extra) {
    const int N = p.numDnns();
    // Durations and head start times.
    for (int n = 0; n < N; ++n) {
      const auto& d = p.dnns[static_cast<size_t>(n)];
      for (int i = 0; i < static_cast<int>(d.groups.size()); ++i) {
        const auto& si = s[static_cast<size_t>(n)][static_cast<size_t>(i)];
        const auto& ei = e[static_cast<size_t>(n)][static_cast<size_t>(i)];
        std::vector<double> t = d.groups[static_cast<size_t>(i)].timeMs;
        for (auto& v : t) v = std::max(v, 0.0);
        z3::expr dur = byAcc(n, i, t);
        for (const auto& x2 : extra[static_cast<size_t>(n)][static_cast<size_t>(i)]) dur = dur + x2;
        constraints.push_back(ei == si + dur);
        // Redundant: contention only slows a group down, and every group
        // needs its fastest standalone time; tails of the chain likewise.
        double tmin = std::numeric_limits<double>::infinity(), tmax = 0;
        for (double v : d.groups[static_cast<size_t>(i)].timeMs)
          if (v >= 0) tmin = std::min(tmin, v), tmax = std::max(tmax, v);
        constraints.push_back(ei - si >= real(tmin));
        z3::expr tail = real(0);  // summed exactly: a double sum may round above the exact one
        for (size_t k = static_cast<size_t>(i) + 1; k < d.groups.size(); ++k) {
          double b = std::numeric_limits<double>::infinity();
          for (double v : d.groups[k].timeMs)
            if (v >= 0) b = std::min(b, v);
          tail = tail + real(b);
        }
        constraints.push_back(e[static_cast<size_t>(n)].back() >= ei + tail);
        // A head starts when ready, or exactly when another DNN's group on its
        // accelerator ends (no inserted idle time).
        const auto& hi = head[static_cast<size_t>(n)][static_cast<size_t>(i)];
        const auto& ri = ready[static_cast<size_t>(n)][static_cast<size_t>(i)];
        z3::expr_vector alts(c);
        alts.push_back(si == ri);
        for (int m = 0; m < N; ++m) {
          if (rel[static_cast<size_t>(n)][static_cast<size_t>(m)]) continue;
          for (size_t j = 0; j < p.dnns[static_cast<size_t>(m)].groups.size(); ++j)
            alts.push_back(x[static_cast<size_t>(m)][j] == x[static_cast<size_t>(n)][static_cast<size_t>(i)] &&
                           si == e[static_cast<size_t>(m)][j]);
        }
        constraints.push_back(z3::implies(hi, si >= ri && z3::mk_or(alts)));
      }
      end.push_back(e[static_cast<size_t>(n)].back());
    }
    }

  void extract(const z3::model& mdl, Z3Result& out) {
    sim::Schedule sch;
    out.times.clear();
    for (size_t n = 0; n < x.size(); ++n) {
      std::vector<int> a;
      std::vector<std::pair<double, double>> t;
      for (size_t i = 0; i < x[n].size(); ++i) {
        a.push_back(mdl.eval(x[n][i], true).is_true() ? 1 : 0);
        t.emplace_back(toDouble(mdl.eval(s[n][i], true)), toDouble(mdl.eval(e[n][i], true)));
      }
      sch.assign.push_back(a);
      out.times.push_back(t);
    }
    out.best = sch;
  }
};

// A DNN's groups each on its fastest accelerator, back to back, alone: no
// schedule finishes it sooner (the bound both objectives start from).
template <typename Dnn>
double fastestChainMs(const Dnn& d) {
  double chain = 0;
  for (const auto& g : d.groups) {
    double best = std::numeric_limits<double>::infinity();
    for (double t : g.timeMs)
      if (t >= 0) best = std::min(best, t);
    chain += best;
  }
  return chain;
}

}  // namespace

namespace {

// One solveZ3 call: the context, the model, the incumbent and the clock.
struct Z3Run {
  const Problem& p;
  const Z3Params& prm;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  z3::context c;
  Model m{c, p};
  Z3Result out;
  unsigned timeoutMs = static_cast<unsigned>(std::max(1.0, prm.timeLimitS * 1000.0));
  unsigned seed = static_cast<unsigned>(prm.seed & 0xffffffffu);

  Z3Run(const Problem& problem, const Z3Params& params) : p(problem), prm(params) {}
  double elapsed() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

  // The anytime loop of both objectives: check within the time left, hand each model
  // to `onModel` (which records it and adds a cut excluding it and worse), until UNSAT
  // proves the incumbent optimal, Z3 gives up, or time runs out.
  Status strengthen(z3::solver& sol, const std::function<void(const z3::model&)>& onModel) {
    for (;;) {
      const double left = prm.timeLimitS * 1000.0 - elapsed();
      if (left <= 1) return {};
      z3::params pt(c);
      pt.set("timeout", static_cast<unsigned>(left));
      pt.set("random_seed", seed);
      sol.set(pt);
      const z3::check_result r = sol.check();
      ++out.checks;
      if (r == z3::unsat) {
        if (!out.best) return makeError("z3 solver: the formulation is unsatisfiable (bug)");
        out.optimal = true;
        out.bound = out.value;
        return {};
      }
      if (r == z3::unknown) return {};
      onModel(sol.get_model());
    }
  }

  double makespan(const z3::model& mdl) const {
    double mk = 0;
    for (const auto& en : m.end) mk = std::max(mk, toDouble(mdl.eval(en, true)));
    return mk;
  }

  // The assignment determines every time: one model is the answer.
  Expected<Z3Result> solveFixed() {
    z3::solver sol(c);
    z3::params pt(c);
    pt.set("timeout", timeoutMs);
    sol.set(pt);
    for (const auto& k : m.constraints) sol.add(k);
    z3::check_result r = sol.check();
    ++out.checks;
    if (r == z3::unsat) return makeError("z3 solver: the formulation is unsatisfiable for the given schedule (bug)");
    if (r == z3::sat) {
      z3::model mdl = sol.get_model();
      m.extract(mdl, out);
      out.value = makespan(mdl);
      out.bound = out.value;
      out.optimal = true;
    }
    out.elapsedMs = elapsed();
    return out;
  }

  // Latency with Z3's optimizer (one check).
  Expected<Z3Result> solveLatencyOptimize() {
    z3::optimize opt(c);
    z3::params ps(c);
    ps.set("timeout", timeoutMs);
    opt.set(ps);
    z3::set_param("smt.random_seed", static_cast<int>(seed));
    for (const auto& k : m.constraints) opt.add(k);
    z3::expr z = c.real_const("makespan");
    for (const auto& en : m.end) opt.add(z >= en);
    auto h = opt.minimize(z);
    z3::check_result r = opt.check();
    ++out.checks;
    if (r == z3::unsat) return makeError("z3 solver: the formulation is unsatisfiable (bug)");
    out.optimal = r == z3::sat;
    z3::model mdl = opt.get_model();
    if (mdl.size() == 0) {
      out.bound = toDouble(opt.lower(h));
      out.elapsedMs = elapsed();
      return out;  // no schedule within the time limit
    }
    m.extract(mdl, out);
    const double mk = makespan(mdl);
    out.value = mk;
    z3::expr lb = opt.lower(h);
    out.bound = out.optimal ? mk : (lb.is_numeral() ? toDouble(lb) : 0.0);
    if (prm.onImprove) prm.onImprove(elapsed(), mk, "z3-optimize");
    out.elapsedMs = elapsed();
    return out;
  }

  // Strengthening loop (anytime): each model's makespan becomes a strict upper
  // bound for the next check; UNSAT proves the last model optimal.
  Expected<Z3Result> solveLatencyLoop() {
    z3::solver sol(c);
    for (const auto& k : m.constraints) sol.add(k);
    z3::expr z = c.real_const("makespan");
    for (const auto& en : m.end) sol.add(z >= en);
    double lb = 0;
    for (const auto& d : p.dnns) lb = std::max(lb, fastestChainMs(d));
    out.bound = lb;
    ZP_TRY(strengthen(sol, [&](const z3::model& mdl) {
      m.extract(mdl, out);
      z3::expr v(c);
      double mk = -1;
      for (const auto& en : m.end) {
        z3::expr ev = mdl.eval(en, true);
        if (toDouble(ev) > mk) {
          mk = toDouble(ev);
          v = ev;
        }
      }
      out.value = mk;
      if (prm.onImprove) prm.onImprove(elapsed(), mk, "z3-strengthen");
      sol.add(z < v);
    }));
    out.elapsedMs = elapsed();
    return out;
  }

  // Throughput (Eq. 10) is not linear in the times. The loop stays in linear
  // arithmetic: every schedule better than the incumbent has some T_n smaller
  // than in each schedule found so far (1000/T is decreasing), and each T_n
  // alone must beat what the other DNNs could at best contribute. Each model
  // satisfies these cuts; UNSAT proves the incumbent optimal.
  Expected<Z3Result> solveThroughputLoop() {
    const int N = p.numDnns();
    z3::solver sol(c);
    z3::params ps(c);
    ps.set("random_seed", seed);
    sol.set(ps);
    for (const auto& k : m.constraints) sol.add(k);
    std::vector<z3::expr> T;
    std::vector<double> minChain(static_cast<size_t>(N), 0);
    double ub = 0;
    for (int n = 0; n < N; ++n) {
      T.push_back(m.end[static_cast<size_t>(n)] - m.release[static_cast<size_t>(n)]);
      minChain[static_cast<size_t>(n)] = fastestChainMs(p.dnns[static_cast<size_t>(n)]);
      ub += 1000.0 / minChain[static_cast<size_t>(n)];
    }
    out.bound = ub;
    ZP_TRY(strengthen(sol, [&](const z3::model& mdl) {
      Z3Result cand;
      m.extract(mdl, cand);
      double v = 0;
      z3::expr_vector smaller(c);
      for (int n = 0; n < N; ++n) {
        z3::expr tn = mdl.eval(T[static_cast<size_t>(n)], true);
        v += 1000.0 / toDouble(tn);
        smaller.push_back(T[static_cast<size_t>(n)] < tn);
      }
      sol.add(z3::mk_or(smaller));  // Pareto cut: not dominated by this schedule
      if (!out.best || sim::better(Objective::Throughput, v, out.value)) {
        cand.value = v;
        cand.bound = out.bound;
        cand.checks = out.checks;
        out = std::move(cand);
        if (prm.onImprove) prm.onImprove(elapsed(), v, "z3-pareto");
        for (int n = 0; n < N; ++n) {
          double others = 0;
          for (int k = 0; k < N; ++k)
            if (k != n) others += 1000.0 / minChain[static_cast<size_t>(k)];
          double need = v - others;  // 1000/T_n must exceed this
          // Loosened by 1e-9: the bound is computed in floating point.
          if (need > 0) sol.add(T[static_cast<size_t>(n)] < m.real(1000.0 / need * (1 + 1e-9)));
        }
      }
    }));
    out.elapsedMs = elapsed();
    return out;
  }
};

}  // namespace

Expected<Z3Result> solveZ3(const Problem& p, const Z3Params& prm) {
  if (p.numAccelerators() != 2)
    return makeError("z3 solver: the formulation models contention between exactly 2 accelerators; "
                     "this workload has {} (use the exact search)", p.numAccelerators());
  auto run = std::make_unique<Z3Run>(p, prm);
  Model& m = run->m;
  m.build(prm.maxTransitionsPerDnn);
  if (prm.fixed) {
    for (size_t n = 0; n < m.x.size(); ++n)
      for (size_t i = 0; i < m.x[n].size(); ++i)
        m.constraints.push_back(prm.fixed->assign[n][i] == 1 ? m.x[n][i] : !m.x[n][i]);
    return run->solveFixed();
  }
  if (prm.objective == Objective::Latency)
    return prm.useOptimize ? run->solveLatencyOptimize() : run->solveLatencyLoop();
  return run->solveThroughputLoop();
}

}  // namespace zp::schedule
