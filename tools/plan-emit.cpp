// plan-emit: thin CLI. PLAN.json -o BUNDLE_DIR writes the bundle;
// --check BUNDLE_DIR [PLAN.json] says whether a bundle is stale (exit 1) or up to date.
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "drivers/emit/emit_bundle.h"
#include "libplan/util/version.h"
#include "tools/cli.h"

int main(int argc, char** argv) {
  CLI::App app{"plan-emit: write a plan's bundle (canonical plan, subgraphs, weight caches, manifest)"};
  std::vector<std::string> positional;
  std::string out, check;
  bool noCaches = false;
  app.add_option("plan", positional, "PLAN.json (with --check: optional, default the plan the bundle recorded)");
  app.add_option("-o,--output", out, "bundle directory to write: absent, empty or an earlier plan-emit bundle, replaced atomically");
  app.add_option("--check", check, "check BUNDLE_DIR against its inputs; exit 1 when stale");
  app.add_flag("--no-caches", noCaches, "do not write weight caches");
  if (auto rc = zp::cli::parse(app, argc, argv, "plan-emit")) return *rc;

  if (!check.empty()) {
    if (positional.size() > 1 || !out.empty()) {
      zp::cli::printError("plan-emit", "--check takes BUNDLE_DIR and at most one PLAN.json, and no -o");
      return zp::cli::kOptionError;
    }
    zp::drivers::CheckParams cp{check, positional.empty() ? std::string() : positional[0], zp::zooplanVersion()};
    auto r = zp::drivers::checkBundle(cp);
    if (!r.ok()) {
      zp::cli::printError("plan-emit", r.error().message);
      return 2;  // 1 means stale
    }
    std::cout << r->text();
    return r->upToDate() ? 0 : 1;
  }
  if (positional.size() != 1 || out.empty()) {
    zp::cli::printError("plan-emit", "expected PLAN.json -o BUNDLE_DIR (or --check BUNDLE_DIR [PLAN.json])");
    return zp::cli::kOptionError;
  }
  zp::drivers::EmitParams ep;
  ep.plan = positional[0];
  ep.out = out;
  ep.toolVersion = zp::zooplanVersion();
  ep.writeCaches = !noCaches;
  auto r = zp::drivers::emitBundle(ep);
  if (!r.ok()) return zp::cli::inputError("plan-emit", r.error());
  std::cout << zp::drivers::emitSummary(ep, *r);
  return 0;
}
