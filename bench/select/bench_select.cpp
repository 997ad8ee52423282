// bench_select: plan-solve's optimizer (Algorithm 1 + the simulator-checked
// choice) on generated instances of the profile schema's shape — T tasks, V
// variants, S positions, P processors, every V^S stitched variant — timing how
// the solve grows. Prints a table and writes JSON.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <chrono>
#include <random>

#include "libplan/util/file.h"
#include "libplan/util/json.h"
#include "passes/select/select.h"

using namespace zp;

namespace {

select::StitchSpace generate(int T, int V, int S, int P, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  select::StitchSpace sp;
  for (int p = 0; p < P; ++p) sp.processors.push_back(plan::PlanProcessor{fmt::format("p{}", p), "cpu", "host", "default", 1, {}, {}});
  for (int t = 0; t < T; ++t) {
    select::TaskSpace ts;
    ts.name = fmt::format("t{}", t);
    ts.positions = S;
    std::vector<double> acc(static_cast<size_t>(V)), speed(static_cast<size_t>(V));
    for (int v = 0; v < V; ++v) {
      acc[static_cast<size_t>(v)] = 0.80 + 0.15 * u(rng);
      speed[static_cast<size_t>(v)] = 0.5 + u(rng);
    }
    for (int j = 0; j < S; ++j)
      for (int v = 0; v < V; ++v)
        for (int p = 0; p < P; ++p)
          ts.latency.setSubgraph(j, fmt::format("v{}", v), fmt::format("p{}", p), speed[static_cast<size_t>(v)] * (0.5 + u(rng)));
    for (int p = 0; p < P; ++p) ts.latency.setOverhead(fmt::format("p{}", p), 0.01);
    ts.boundaryBytes.assign(static_cast<size_t>(S - 1), 4096.0);
    std::vector<int> digits(static_cast<size_t>(S), 0);
    while (true) {
      select::Candidate c;
      double a = 0;
      for (int j = 0; j < S; ++j) {
        c.variants.push_back(fmt::format("v{}", digits[static_cast<size_t>(j)]));
        c.id += (j ? "+" : "") + c.variants.back();
        a += acc[static_cast<size_t>(digits[static_cast<size_t>(j)])];
      }
      c.predictedAccuracy = c.measuredAccuracy = a / S;
      c.original = std::all_of(digits.begin(), digits.end(), [&](int d) { return d == digits[0]; });
      ts.candidates.push_back(std::move(c));
      int j = S - 1;
      while (j >= 0 && ++digits[static_cast<size_t>(j)] == V) digits[static_cast<size_t>(j--)] = 0;
      if (j < 0) break;
    }
    std::vector<std::string> names;
    for (const auto& p : sp.processors) names.push_back(p.name);
    ts.buildDense(names);
    sp.tasks.push_back(std::move(ts));
  }
  return sp;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_select: plan-solve's optimizer on generated instances"};
  std::string out = "bench_select.json";
  bool full = false;
  app.add_option("--json", out, "where to write the JSON results");
  app.add_flag("--full", full, "also the large instances (V=16, S=5/6)");
  CLI11_PARSE(app, argc, argv);
  struct Shape { int T, V, S, P; };
  std::vector<Shape> shapes = {{4, 6, 3, 3}, {4, 8, 4, 3}, {4, 10, 4, 3}, {4, 12, 4, 3}};
  if (full) shapes.insert(shapes.end(), {{4, 16, 4, 3}, {4, 16, 5, 3}});
  Json results = Json::array();
  fmt::print("{:>3} {:>4} {:>3} {:>3} {:>12} {:>9} {:>14} {:>16}\n", "T", "V", "S", "P", "variants/task", "orders",
             "algorithm1 ms", "with simulator ms");
  for (const auto& s : shapes) {
    auto space = generate(s.T, s.V, s.S, s.P, 1);
    plan::SloConfiguration slo;
    slo.id = "mid";
    for (const auto& t : space.tasks) slo.tasks[t.name] = plan::TaskSlo{0.875, 1.0 * s.S};
    select::SelectParams params;
    auto orders = select::globalOrders(space);
    auto t0 = std::chrono::steady_clock::now();
    auto a1 = select::algorithm1(space, slo, orders, params, false, "zooplan");
    double a1Ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    t0 = std::chrono::steady_clock::now();
    std::string note;
    select::zooplanChoice(space, slo, params, nullptr, &note);
    double fullMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("{:>3} {:>4} {:>3} {:>3} {:>12} {:>9} {:>14.1f} {:>16.1f}\n", s.T, s.V, s.S, s.P,
               space.tasks[0].candidates.size(), orders.size(), a1Ms, fullMs);
    results.push_back(Json{{"T", s.T}, {"V", s.V}, {"S", s.S}, {"P", s.P},
                           {"variants_per_task", space.tasks[0].candidates.size()}, {"orders", orders.size()},
                           {"algorithm1_ms", a1Ms}, {"with_simulator_ms", fullMs}, {"mean_latency_ms", a1.meanLatencyMs}});
  }
  auto st = writeFileAtomic(out, canonicalJson(Json{{"results", results}}));
  if (!st.ok()) return fmt::print(stderr, "bench_select: {}\n", st.error().message), 1;
  fmt::print("wrote {}\n", out);
  return 0;
}
