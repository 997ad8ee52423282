// A host processor on `cores` for tests: the runtime with `policy`, `gemm` and `threads`.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "libplan/zoo/processor.h"

namespace zp::testing {

inline Processor pinned(std::string name, std::vector<int> cores, std::string policy = "default",
                        std::string gemm = "onednn", int threads = 1) {
  Processor p;
  p.name = std::move(name);
  p.cores = std::move(cores);
  p.policy = std::move(policy);
  p.gemm = std::move(gemm);
  p.threads = threads;
  return p;
}

}  // namespace zp::testing
