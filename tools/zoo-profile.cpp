// zoo-profile: measure and import subgraph profiles, measure accuracy, train the
// estimators and calibrate the latency model every stitched variant is estimated with.
#include <fmt/core.h>

#include <atomic>
#include <csignal>

#include "libplan/util/signals.h"
#include "tools/cli.h"
#include "tools/zoo_profile_options.h"

namespace {
std::atomic<bool> g_stop{false};
volatile std::sig_atomic_t g_signal = 0;
// Ctrl-C or SIGTERM: stop measuring; the measured rows are kept for the next run.
void onStop(int sig) {
  g_signal = sig;
  g_stop = true;
}

// A failed run: its one line, and the exit code (128 + the signal when stopped).
int failed(const zp::Error& e) {
  zp::cli::printError("zoo-profile", e.message);
  return g_stop ? 128 + g_signal : zp::cli::kInputError;
}
}  // namespace

int main(int argc, char** argv) {
  auto parsed = zp::cli::parseZooProfileArgs(argc, argv);
  if (const int* rc = std::get_if<int>(&parsed)) return *rc;
  auto& req = std::get<zp::cli::ZooProfileRequest>(parsed);
  zp::installStopHandler(onStop);
  req.params.stop = &g_stop;
  const std::string out = req.outDir.string();
  if (req.shard) {
    auto line = zp::drivers::runZooProfileShard(req.stitchDir, req.outDir, req.params, *req.shard);
    if (!line.ok()) return failed(line.error());
    fmt::print("{}wrote {}/shard.json\n", *line, out);
    return 0;
  }
  auto result = req.mergeDirs.empty() ? zp::drivers::runZooProfile(req.stitchDir, req.outDir, req.params)
                                      : zp::drivers::mergeZooProfileShards(req.mergeDirs, req.outDir, req.params);
  if (!result.ok()) return failed(result.error());
  fmt::print("{}", result->summary);
  if (result->interrupted) return 128 + g_signal;
  fmt::print("wrote {}/{{profile.csv, node_profile.csv, accuracy.csv, latency_model.json, report.json{}}}\n", out,
             req.params.coldProfile ? ", cold_profile.csv" : "");
  return 0;
}
