// The cold cost profile of models on one host (NNV12 §2-3): per executed node and
// candidate kernel (with the GEMM library it ran on), what a cold start of that
// node costs — bytes to read from the ONNX file or from a cache of post-transformed
// weights, the weight transform, the first execution in a freshly loaded session
// and the warm execution — plus what the host adds to every cold start: the
// storage's sequential read bandwidth and each GEMM library's one-time start-up.
// Measured by passes/measure/cold_profile_measure.h, stored as cold_profile.csv
// (libplan/artifacts/cold_profile_csv.h), read by the cold-start pass.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace zp::profile {

// One candidate of one executed node. A node without heavy weights has one row
// with an empty kernel (it only executes).
struct ColdNodeCost {
  std::string model;        // the model's label (file stem, or task/position/variant in a zoo)
  int step = 0;             // execution index within the model
  std::string node, opType;
  std::string kernel;       // runtime kernel name; empty: no heavy weights
  std::string gemm;         // GEMM library the row was measured with: "onednn" | "blis" | "" (kernel uses none)
  int64_t rawBytes = 0;     // the ONNX initializers the node's weights are made from
  int64_t cacheBytes = 0;   // its payload in a weight cache (post-transformed weights)
  double transformMs = 0;   // weight transform at load, from the raw weights
  double firstExecMs = 0;   // first run of a freshly loaded session (library already started)
  double warmExecMs = 0;    // median over the warm runs
  bool heavy() const { return !kernel.empty(); }
  bool operator==(const ColdNodeCost&) const = default;
};

// What a model's cold start costs besides its nodes.
struct ColdModelCost {
  std::string model;
  double setupMs = 0;  // cold load from a cache: map it, parse the skeleton, build ops, plan memory
  bool operator==(const ColdModelCost&) const = default;
};

struct ColdProfile {
  int cores = 1;                   // cores of the host the profile was measured on
  int threads = 1;                 // runtime threads of the node measurements
  double storageMBps = 0;          // sequential read of an evicted file, MB (1e6 bytes) per second
  double storageLatencyMs = 0;     // per read, on top of bytes / bandwidth (0: not measured; a calibration fits it)
  int64_t storageProbeBytes = 0;   // size of the file read for it
  std::map<std::string, double> gemmStartupMs;  // library key -> first product of a process, ms
  std::vector<ColdModelCost> models;
  std::vector<ColdNodeCost> nodes;  // by model (as in `models`), step, then kernel and GEMM library
  bool operator==(const ColdProfile&) const = default;
};

}  // namespace zp::profile
