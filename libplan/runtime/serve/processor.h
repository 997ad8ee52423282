// A processor of the host: the CPU cores it owns beside the engine it runs (the
// runtime's kernel policy, GEMM library and threads). Processors on disjoint
// cores run at the same time and share caches and memory bandwidth, as an SoC's
// processors share DRAM.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "libplan/runtime/session.h"
#include "libplan/util/error.h"

namespace zp::runtime::serve {

struct ProcessorConfig {
  std::string name;
  std::vector<int> cores;             // CPU ids the processor's worker is pinned to
  std::string policy = "default";     // kernel policy (kernel_policy.h)
  GemmLibrary gemm = GemmLibrary::OneDnn;
  int threads = 1;                    // the runtime's threads inside one subgraph
};

// Session options of a subgraph run on `processor` (kernel policy, GEMM library, threads).
SessionOptions sessionOptions(const ProcessorConfig& processor);

// The CPU ids this process may run on (sched_getaffinity), ascending.
std::vector<int> availableCores();

// A processor whose cores this process can run on, whose kernel policy is known
// and whose thread count is sane; otherwise "processor 'npu': core 5 is not on
// this machine (cores 0-1 available)".
Status checkProcessor(const ProcessorConfig& processor);

// Pins the calling thread to exactly the processor's cores.
Status pinCurrentThread(const ProcessorConfig& processor);

// Cores named for `who` (e.g. "processor 'npu'") that this process can run on;
// otherwise "processor 'npu': core 5 is not on this machine (cores 0-1 available)".
Status checkCores(const std::string& who, const std::vector<int>& cores);

// Pins the calling thread to `cores` for the object's lifetime and restores the
// thread's previous affinity after (no cores: leaves the thread alone).
class ScopedCorePin {
 public:
  static Expected<std::unique_ptr<ScopedCorePin>> pin(const std::string& who, const std::vector<int>& cores);
  ~ScopedCorePin();
  ScopedCorePin(const ScopedCorePin&) = delete;
  ScopedCorePin& operator=(const ScopedCorePin&) = delete;

 private:
  ScopedCorePin() = default;
  std::vector<int> previous_;
};

}  // namespace zp::runtime::serve
