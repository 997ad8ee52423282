// The cold-start problem of one model on one GEMM library (NNV12 §3.2), built
// from its measured cold profile: per executed node, in execution order, the
// options (kernel x cached or transformed weights) the enabled knobs allow, with
// their read, transform and execute times; plus the fixed costs.
//
// Cost model (what "optimal" is proven over):
//   - time 0 is the start of the load; nothing runs before setupMs (map the
//     cache, parse the skeleton, build the ops);
//   - reads are one sequential stream in execution order (the runtime reads the
//     weights ahead in file order): a node's read takes bytes / bandwidth and
//     occupies no core; cached weights read cacheBytes, others rawBytes;
//   - a transform runs on one core after its node's read; execution runs on core
//     0, node after node, each after its weights are ready (read, or transformed);
//   - the GEMM library's start-up, when some chosen kernel uses it, runs at setup
//     on the last core and every execute of a GEMM kernel waits for it.
#pragma once
#include <string>
#include <vector>

#include "libplan/profile/cold_profile.h"
#include "libplan/util/error.h"

namespace zp::coldstart {

struct Knobs {
  bool kernelSelection = true;  // off: each node runs its fastest warm kernel
  bool caching = true;          // off: every weight is transformed at load
  bool pipelining = true;       // off: read, transform and execute one after another, nothing overlaps
};

struct Option {
  std::string kernel;   // empty: a node without heavy weights
  bool cached = false;  // read the post-transformed weights from the cache
  bool usesGemm = false;
  double readMs = 0, transformMs = 0, execMs = 0, warmExecMs = 0;
  bool transforms() const { return !kernel.empty() && !cached; }
};

struct Step {
  std::string node;
  std::vector<Option> options;  // at least one
};

struct Problem {
  std::string model, gemm;
  int cores = 1;
  double setupMs = 0;
  double gemmStartupMs = 0;  // paid when some chosen option uses the GEMM library
  std::vector<Step> steps;
};

// Options of `model` under `gemm` (rows measured with it, and rows of kernels that
// use no GEMM library) that `knobs` allow. Without kernel selection a node keeps
// the kernel with the fastest warm execute time. `allowGemm` false drops every
// kernel that uses the library (a plan without its start-up); a node left with no
// option is an error.
Expected<Problem> buildProblem(const profile::ColdProfile& profile, const std::string& model, const std::string& gemm,
                               int cores, const Knobs& knobs, bool allowGemm);

// Drops options that are no faster than another one in read, transform and
// execute (NNV12 Alg. 1, line 1); keeps the first of equal options. Exact: a
// dropped option never beats the one that dominates it in the cost model.
void dropDominated(Problem& p);

}  // namespace zp::coldstart
