#include "libplan/runtime/serve/processor.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <set>

#include <fmt/format.h>

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

SessionOptions sessionOptions(const ProcessorConfig& processor) {
  SessionOptions o;
  o.threads = processor.threads;
  o.kernels.policy = processor.policy;
  o.gemm = processor.gemm;
  return o;
}

std::vector<int> availableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cores;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cores;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cores.push_back(c);
  return cores;
}

Status checkProcessor(const ProcessorConfig& p) {
  if (p.cores.empty()) return makeError("processor '{}': no cores given", p.name);
  const auto available = availableCores();
  std::set<int> seen;
  for (int c : p.cores) {
    if (!seen.insert(c).second) return makeError("processor '{}': core {} is listed twice", p.name, c);
    if (!std::binary_search(available.begin(), available.end(), c))
      return makeError("processor '{}': core {} is not on this machine (cores {} available)", p.name, c,
                       coreList(available));
  }
  if (!isKnownPolicy(p.policy)) return makeError("processor '{}': unknown kernel policy '{}'", p.name, p.policy);
  if (auto problem = threadCountProblem(p.threads)) return makeError("processor '{}': {}", p.name, *problem);
  return {};
}

Status pinCurrentThread(const ProcessorConfig& p) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : p.cores) {
    if (c < 0 || c >= CPU_SETSIZE) return makeError("processor '{}': core {} is not on this machine", p.name, c);
    CPU_SET(c, &set);
  }
  const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (rc != 0) {
    auto sorted = p.cores;
    std::sort(sorted.begin(), sorted.end());
    return makeError("processor '{}': cannot pin to cores {}: {}", p.name, coreList(sorted), std::strerror(rc));
  }
  return {};
}

}  // namespace zp::runtime::serve
