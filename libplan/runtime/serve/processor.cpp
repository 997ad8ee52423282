#include "libplan/runtime/serve/processor.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "libplan/runtime/kernels/gemm.h"
#include "libplan/util/validate.h"

namespace zp::runtime::serve {

namespace {
// "0-1,4": compact ranges for messages.
std::string coreList(const std::vector<int>& cores) {
  std::string s;
  for (size_t i = 0; i < cores.size();) {
    size_t j = i;
    while (j + 1 < cores.size() && cores[j + 1] == cores[j] + 1) ++j;
    if (!s.empty()) s += ",";
    s += j == i ? fmt::format("{}", cores[i]) : fmt::format("{}-{}", cores[i], cores[j]);
    i = j + 1;
  }
  return s;
}
}  // namespace

SessionOptions sessionOptions(const Processor& processor) {
  SessionOptions o;
  o.threads = std::max(1, processor.threads);
  o.kernels.policy = processor.policy;
  // Readers check the name (zoo.json, plan.json, checkProcessor); an unknown one keeps the default.
  (void)parseGemmLibrary(processor.gemm, &o.gemm);
  return o;
}

namespace {
// The CPU ids in `set`, ascending.
std::vector<int> coresIn(const cpu_set_t& set) {
  std::vector<int> cores;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cores.push_back(c);
  return cores;
}
}  // namespace

namespace {
std::vector<int> callingThreadCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return {};
  return coresIn(set);
}
// Read as the process starts, on its main thread: a worker pinned to one core
// (which loads a unit that starts workers of its own) still sees every core.
const std::vector<int> kProcessCores = callingThreadCores();
}  // namespace

std::vector<int> availableCores() { return kProcessCores; }

Status checkCores(const std::string& who, const std::vector<int>& cores) {
  const auto available = availableCores();
  std::set<int> seen;
  for (int c : cores) {
    if (!seen.insert(c).second) return makeError("{}: core {} is listed twice", who, c);
    if (!std::binary_search(available.begin(), available.end(), c))
      return makeError("{}: core {} is not on this machine (cores {} available)", who, c, coreList(available));
  }
  return {};
}

namespace {
Status setAffinity(const std::string& who, const std::vector<int>& cores) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cores) {
    if (c < 0 || c >= CPU_SETSIZE) return makeError("{}: core {} is not on this machine", who, c);
    CPU_SET(c, &set);
  }
  const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (rc != 0) {
    auto sorted = cores;
    std::sort(sorted.begin(), sorted.end());
    return makeError("{}: cannot pin to cores {}: {}", who, coreList(sorted), std::strerror(rc));
  }
  return {};
}

std::vector<int> threadCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) != 0) return {};
  return coresIn(set);
}
}  // namespace

Expected<std::unique_ptr<ScopedCorePin>> ScopedCorePin::pin(const std::string& who, const std::vector<int>& cores) {
  std::unique_ptr<ScopedCorePin> p(new ScopedCorePin());
  if (cores.empty()) return p;
  ZP_TRY(checkCores(who, cores));
  p->previous_ = threadCores();
  ZP_TRY(setAffinity(who, cores));
  return p;
}

ScopedCorePin::~ScopedCorePin() {
  if (!previous_.empty()) (void)setAffinity("", previous_);
}

Status checkProcessor(const Processor& p) {
  if (p.cores.empty()) return makeError("processor '{}': no cores given", p.name);
  ZP_TRY(checkCores(fmt::format("processor '{}'", p.name), p.cores));
  if (!isKnownPolicy(p.policy)) return makeError("processor '{}': unknown kernel policy '{}'", p.name, p.policy);
  if (auto problem = threadCountProblem(p.threads)) return makeError("processor '{}': {}", p.name, *problem);
  GemmLibrary gemm;
  if (!parseGemmLibrary(p.gemm, &gemm)) return makeError("processor '{}': unknown GEMM library '{}' (onednn or blis)", p.name, p.gemm);
  return {};
}

Status pinCurrentThread(const Processor& p) { return setAffinity(fmt::format("processor '{}'", p.name), p.cores); }

}  // namespace zp::runtime::serve
