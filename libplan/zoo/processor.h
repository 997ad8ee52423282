// A processor of the target SoC, one type from zoo.json to the runtime: what
// zoo.json names, what zoo-profile measures it as (or imports its costs from),
// what the plan records and what plan-run pins and runs. On this host every
// processor is the runtime on some CPU cores; the engine fields (policy,
// threads, GEMM library, cores) say how.
#pragma once
#include <compare>
#include <string>
#include <vector>

namespace zp {

inline constexpr const char* kHostSource = "host";

struct Processor {
  std::string name;
  std::string kind = "cpu";     // cpu | gpu | npu | dla | dsp
  // Where its costs come from: measured on this host by the runtime, or
  // imported from a device profiler's output (ort-json | trtexec | openvino-csv | csv).
  std::string source = kHostSource;
  // The engine: how the runtime runs on it.
  std::string policy = "default";  // the runtime's kernel policy (kernel_policy.h)
  int threads = 1;                 // the runtime's threads inside one run
  std::vector<int> cores;          // CPU ids its work is pinned to (empty: not pinned)
  std::string gemm = "onednn";     // GEMM library: "onednn" | "blis"
  std::string profileFile;         // an imported source's output, as zoo.json wrote it (empty for the host)

  bool host() const { return source == kHostSource; }
  // "policy@threads": how a host measurement names the configuration it ran under.
  std::string label() const { return policy + "@" + std::to_string(threads); }
  // The processor as the runtime on this host sees it: the engine fields only
  // (no name; kind and source the defaults), so that processors that run alike
  // compare equal.
  Processor engine() const {
    Processor e;
    e.policy = policy;
    e.threads = threads;
    e.cores = cores;
    e.gemm = gemm;
    return e;
  }
  auto operator<=>(const Processor&) const = default;
  bool operator==(const Processor&) const = default;
};

}  // namespace zp
