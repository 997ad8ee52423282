// Whether the two cores slow each other down: one one-thread session of a model alone
// on the first CPU, then two one-thread sessions of it at once, one pinned to each CPU
// (median warm run of each, per round). Where the pair runs as fast as one alone, the
// cores share no bottleneck (memory bandwidth, a cache, a core's turbo budget), and
// what a two-thread session loses against twice one thread comes from the data its
// threads hand each other (bench-shared-lines prices that).
//
//   build/bin/bench-two-sessions MODEL.onnx --input NAME=FILE.npy [--input ...]
//                                [--cpus 0 1] [--runs 60] [--rounds 3]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bench/runtime/pin_thread.h"

#include "libplan/runtime/npy.h"
#include "libplan/runtime/session.h"

namespace {

using zp::runtime::Session;
using zp::runtime::TensorMap;

using zp::bench::pinTo;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Warm runs of `s` on `cpu`, each timed; false when a run fails or the CPU cannot be pinned.
bool timeRuns(Session& s, const TensorMap& in, int cpu, int runs, std::vector<double>& ms) {
  if (!pinTo(cpu)) return false;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!s.run(in)) return false;
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return true;
}

int fail(const std::string& msg) {
  std::fprintf(stderr, "bench-two-sessions: %s\n", msg.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model;
  TensorMap inputs;
  int cpus[2] = {0, 1}, runs = 60, rounds = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cpus" && i + 2 < argc) {
      cpus[0] = std::atoi(argv[++i]);
      cpus[1] = std::atoi(argv[++i]);
    } else if (a == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--input" && i + 1 < argc) {
      const std::string spec = argv[++i];
      const size_t eq = spec.find('=');
      if (eq == std::string::npos || eq == 0) return fail("--input " + spec + ": expected NAME=FILE.npy");
      auto t = zp::runtime::readNpy(spec.substr(eq + 1));
      if (!t) return fail(t.error().message);
      inputs[spec.substr(0, eq)] = std::move(*t);
    } else if (!a.empty() && a[0] != '-' && model.empty()) {
      model = a;
    } else {
      return fail("unknown argument '" + a +
                  "' (usage: MODEL.onnx --input NAME=FILE.npy [--cpus A B] [--runs N] [--rounds N])");
    }
  }
  if (model.empty()) return fail("no model given");
  zp::runtime::SessionOptions options;
  options.threads = 1;
  auto first = Session::load(model, options);
  if (!first) return fail(first.error().message);
  auto second = Session::load(model, options);
  if (!second) return fail(second.error().message);
  for (auto* s : {first->get(), second->get()}) {
    std::vector<double> warm;
    if (!timeRuns(*s, inputs, cpus[0], 5, warm)) return fail(model + ": a warm-up run failed (inputs?)");
  }
  std::printf("%s: one-thread sessions on CPUs %d and %d, median of %d runs, ms\n\n", model.c_str(), cpus[0], cpus[1],
              runs);
  std::printf("| round | alone (CPU %d) | together, CPU %d | together, CPU %d | together / alone |\n", cpus[0], cpus[0],
              cpus[1]);
  std::printf("|---|---|---|---|---|\n");
  for (int r = 0; r < rounds; ++r) {
    std::vector<double> alone, a, b;
    bool ok = true;
    std::thread solo([&] { ok = timeRuns(**first, inputs, cpus[0], runs, alone); });
    solo.join();
    bool okA = true, okB = true;
    std::thread ta([&] { okA = timeRuns(**first, inputs, cpus[0], runs, a); });
    std::thread tb([&] { okB = timeRuns(**second, inputs, cpus[1], runs, b); });
    ta.join();
    tb.join();
    if (!ok || !okA || !okB) return fail("a run failed or a CPU could not be pinned (--cpus)");
    const double m = median(alone), ma = median(a), mb = median(b);
    std::printf("| %d | %.3f | %.3f | %.3f | %.3f |\n", r + 1, m, ma, mb, std::max(ma, mb) / m);
  }
  return 0;
}
