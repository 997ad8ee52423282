// Calibrating the cold-start cost model against measured cold runs. The cold
// profile measures each piece alone, in a process that has run before: a node's
// first execution, a transform on an idle core, a sequential read. A cold start in
// a fresh process pays more for each (page faults and cold caches in the first
// executions; transforms sharing a core with the reader, which faults the weights
// in and checks them). Given runs of a model's cold plan (plan-run --cold --json in
// fresh processes), each piece of work (a node's execution, read or transform, a
// library's start-up) is taken at its median over the runs (one run's slow spell is
// not a trend), then: execute time against the profile's first execution (ratio of
// sums), and likewise the GEMM library start-ups (which share their core with the
// reader and the transforms in a cold run); read time against bytes and transform
// time against the profile's transform as lines fitted by least squares (a fixed
// cost per read or transform, then a rate: many small reads pay the storage's
// latency, many small transforms their thread's wake-up), a ratio of sums where a
// line does not fit (negative cost or slope, one distinct size); the setup (the
// load before the first read) as the median of the runs' over the profiled; and
// execute time per heavy kernel where enough nodes ran it.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "libplan/profile/cold_profile.h"
#include "libplan/profile/cold_run.h"
#include "libplan/util/error.h"

namespace zp::coldstart {

struct Calibration {
  int runs = 0;                   // measured runs it comes from; 0: none (the identity)
  double readMBps = 0;            // read bandwidth; 0: the profile's
  double readLatencyMs = 0;       // fixed cost of each read
  double executeFactor = 1;       // measured execute / profiled first execute
  double transformFactor = 1;     // measured transform per profiled transform ms
  double transformOverheadMs = 0; // fixed cost of each transform
  double startupFactor = 1;       // measured GEMM library start-up / profiled (ratio of sums)
  double setupFactor = 1;         // median measured setup / profiled setup
  // Per heavy kernel (kernelKey): measured execute / profiled first execute of the
  // nodes that ran it, where at least kMinKernelNodes did; the others take
  // executeFactor. In a fresh process kernels pay differently for their first run
  // (sparse ones about 2.2x their profile, GEMM-based ones 0.8-1.8x).
  std::map<std::string, double> kernelExecuteFactor;
};

// Nodes a kernel must have run on for a factor of its own: one node's first run
// mixes the kernel with its place in the run (the stem's first touch of memory).
inline constexpr int kMinKernelNodes = 2;

// "kernel" or "kernel/gemm": a cold profile row's kernel and its GEMM library.
std::string kernelKey(const std::string& kernel, const std::string& gemm);

// Errors name the run (by `sources[i]`, the file it came from) and the node: a run
// of another model, a kernel the profile has no row for, a run with no node executed.
Expected<Calibration> calibrate(const profile::ColdProfile& profile, const std::string& model,
                                const std::vector<profile::MeasuredColdRun>& runs,
                                const std::vector<std::string>& sources);

// `profile` with `model`'s first executions, transforms (the fixed cost plus the
// factor times the profiled) and setup scaled, its GEMM start-ups scaled, and the storage's bandwidth and
// latency replaced as `c` says (the identity for runs == 0).
profile::ColdProfile applyCalibration(const profile::ColdProfile& profile, const std::string& model,
                                      const Calibration& c);

}  // namespace zp::coldstart
