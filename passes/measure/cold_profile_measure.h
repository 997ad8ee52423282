// Measuring the cold cost profile (libplan/profile/cold_profile.h) with the
// runtime: the host's storage read bandwidth and GEMM library start-up, and per
// model every executed node under every kernel the runtime can give it, with
// each GEMM library for kernels that use one.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/profile/cold_profile.h"
#include "libplan/util/error.h"

namespace zp::measure {

struct ColdProfileParams {
  int threads = 1;
  int warmRepeat = 5;  // warm runs per kernel policy (per-node median), after the first run
  // Kernel policies forced in turn (besides "default"); naive is left out (a reference, never a candidate).
  std::vector<std::string> kernels = {"im2col", "gemm1x1", "winograd", "depthwise", "sparse", "packed1x1", "direct", "blas"};
  std::vector<std::string> gemmLibraries = {"onednn", "blis"};
  int64_t probeBytes = int64_t{32} << 20;  // storage probe file
  std::filesystem::path workDir;           // scratch for caches and the probe: on the storage being measured
};

// Cores, threads, storage bandwidth (a probe file written to workDir, evicted from
// the page cache, read sequentially; median of 3) and each library's start-up
// (its first product in this process). Must run before any product of those
// libraries in this process: an error otherwise.
Status measureColdHost(const ColdProfileParams& params, profile::ColdProfile& out);

// Appends the model row and node rows of `model` (labelled `label`). Every
// policy's session is loaded from the ONNX file (transforms timed per node), run
// once (first-run execute per node) and `warmRepeat` times (warm median per node),
// and writes a weight cache (payload bytes per node; the ONNX initializers it was
// made from give the raw bytes). Setup is a cold load from a cache of the default
// kernels with the first library (model and cache evicted).
Status measureColdModel(const std::filesystem::path& model, const std::string& label, const ColdProfileParams& params,
                        profile::ColdProfile& out);

}  // namespace zp::measure
