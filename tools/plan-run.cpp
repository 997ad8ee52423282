// plan-run: run a model with the thin runtime and report cold/warm timings,
// or (when the argument is a directory) run or serve a plan-emit bundle.
#include <iostream>
#include <variant>

#include "libplan/runtime/kernels/simd_target.h"
#include "tools/cli.h"
#include "tools/plan_run_options.h"

namespace {

int printModelRun(const zp::drivers::RunModelOptions& o, bool json) {
  auto r = zp::drivers::runModel(o);
  if (!r.ok()) return zp::cli::inputError("plan-run", r.error());
  for (const auto& w : r->warnings) std::cerr << "warning: " << w << "\n";
  if (json) std::cout << zp::canonicalJson(r->report);
  else std::cout << r->text;
  return 0;
}

int printBundleRun(const zp::drivers::BundleRunParams& p, bool json) {
  auto r = zp::drivers::runBundle(p);
  if (!r.ok()) return zp::cli::inputError("plan-run", r.error());
  for (const auto& w : r->warnings) std::cerr << "warning: " << w << "\n";
  if (json) std::cout << zp::canonicalJson(r->json());
  else std::cout << r->table();
  return r->ok() ? 0 : 1;
}

int printServe(const zp::drivers::ServeBundleParams& p) {
  auto r = zp::drivers::serveBundle(p);
  if (!r.ok()) return zp::cli::inputError("plan-run", r.error());
  for (const auto& n : r->notes) std::cerr << "note: " << n << "\n";
  std::cout << r->table;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  auto parsed = zp::cli::parsePlanRunArgs(argc, argv);
  if (const int* rc = std::get_if<int>(&parsed)) return *rc;
  const auto& req = std::get<zp::cli::PlanRunRequest>(parsed);
  if (auto s = zp::runtime::useSimdTarget(req.simdTarget, true); !s.ok()) return zp::cli::inputError("plan-run", s.error());
  switch (req.kind) {
    case zp::cli::PlanRunRequest::Kind::Serve: return printServe(req.serve);
    case zp::cli::PlanRunRequest::Kind::Bundle: return printBundleRun(req.bundle, req.json);
    case zp::cli::PlanRunRequest::Kind::Model: return printModelRun(req.model, req.json);
  }
  return 1;
}
