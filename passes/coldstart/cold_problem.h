// The cold-start problem of one model on one GEMM library (NNV12 §3.2), built
// from its measured cold profile: per executed node, in execution order, the
// options (kernel x cached or transformed weights) the enabled knobs allow, with
// their read, transform and execute times; plus the fixed costs.
//
// Cost model (what "optimal" is proven over):
//   - time 0 is the start of the load; nothing runs before setupMs (map the
//     cache, parse the skeleton, build the ops);
//   - reads are one sequential stream in execution order (the runtime reads the
//     weights ahead in file order): a node's read takes the storage's latency plus
//     bytes / bandwidth and occupies no core; cached weights read cacheBytes, others
//     rawBytes;
//   - a transform runs on one core after its node's read; execution runs on core
//     0, node after node, each after its weights are ready (read, or transformed);
//   - each GEMM library some chosen kernel uses starts up at setup on the last
//     core, one after another in the problem's library order (cheapest first), and
//     every execute of a kernel on that library waits for its start-up; kernels
//     of different nodes may use different libraries (BLIS, with nothing to
//     generate, where start-up matters; oneDNN where warm speed does).
#pragma once
#include <optional>
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
  int gemm = -1;        // index into Problem::libraries of the library its products use; -1: none
  double readMs = 0, transformMs = 0, execMs = 0, warmExecMs = 0;
  bool transforms() const { return !kernel.empty() && !cached; }
  bool usesGemm() const { return gemm >= 0; }
};

struct Library {
  std::string name;       // "onednn", "blis"
  double startupMs = 0;   // its first product in a process
};

struct Step {
  std::string node;
  std::vector<Option> options;  // at least one
};

struct Problem {
  std::string model;
  std::vector<Library> libraries;  // start-up order; a start-up is paid when some chosen option uses it
  int cores = 1;
  double setupMs = 0;
  std::vector<Step> steps;
};

// Options of `model` on `libraries` (rows measured with one of them, and rows of
// kernels that use no GEMM library) that `knobs` allow; the libraries are ordered
// by start-up time. Without kernel selection a node keeps the kernel with the
// fastest warm execute time. A node left with no option is an error.
Expected<Problem> buildProblem(const profile::ColdProfile& profile, const std::string& model,
                               const std::vector<std::string>& libraries, int cores, const Knobs& knobs);

// `p` with only the options whose library is in `libraries` (a bit set over
// p.libraries) or that use none; `index[i][k]` is the k-th kept option's index in
// `p`. Nothing when some step keeps no option.
std::optional<Problem> restrictLibraries(const Problem& p, unsigned libraries, std::vector<std::vector<int>>* index);

// Drops options that are no faster than another one in read, transform and
// execute (NNV12 Alg. 1, line 1) and use no other library than it; keeps the first
// of equal options. Exact: a dropped option never beats the one that dominates it
// in the cost model.
void dropDominated(Problem& p);

}  // namespace zp::coldstart
