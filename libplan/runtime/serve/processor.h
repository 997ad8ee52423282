// Running on a processor (zp::Processor): the CPU cores it owns beside the
// engine it runs (the runtime's kernel policy, GEMM library and threads).
// Processors on disjoint cores run at the same time and share caches and memory
// bandwidth, as an SoC's processors share DRAM.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "libplan/runtime/session.h"
#include "libplan/util/error.h"
#include "libplan/zoo/processor.h"

namespace zp::runtime::serve {

// Session options of a subgraph run on `processor` (kernel policy, GEMM library, threads).
SessionOptions sessionOptions(const Processor& processor);

// The CPU ids this process may run on (sched_getaffinity as it started), ascending.
std::vector<int> availableCores();

// A processor whose cores this process can run on, whose kernel policy is known
// and whose thread count is sane; otherwise "processor 'npu': core 5 is not on
// this machine (cores 0-1 available)".
Status checkProcessor(const Processor& processor);

// Pins the calling thread to exactly the processor's cores.
Status pinCurrentThread(const Processor& processor);

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
