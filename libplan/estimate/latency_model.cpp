#include "libplan/estimate/latency_model.h"

#include <algorithm>
#include <cassert>
#include <functional>

#include <fmt/format.h>

#include "libplan/util/validate.h"

namespace zp::estimate {

void LatencyModel::setSubgraph(int position, const std::string& variant, const std::string& processor, double ms) {
  subgraphMs_[{position, variant, processor}] = ms;
}
void LatencyModel::setOverhead(const std::string& processor, double ms) { overheadMs_[processor] = ms; }
void LatencyModel::setTransition(const std::string& from, const std::string& to, TransitionCost cost) {
  transitions_[{from, to}] = cost;
}

std::optional<double> LatencyModel::subgraph(int position, const std::string& variant, const std::string& processor) const {
  auto it = subgraphMs_.find({position, variant, processor});
  if (it == subgraphMs_.end()) return std::nullopt;
  return it->second;
}

double LatencyModel::overhead(const std::string& processor) const {
  auto it = overheadMs_.find(processor);
  return it == overheadMs_.end() ? 0.0 : it->second;
}

double LatencyModel::transition(const std::string& from, const std::string& to, double bytes) const {
  if (from == to) return 0.0;
  auto it = transitions_.find({from, to});
  if (it == transitions_.end()) return 0.0;
  return it->second.fixedMs + it->second.msPerByte * bytes;
}

std::optional<double> LatencyModel::estimate(const std::vector<std::string>& variants,
                                             const std::vector<std::string>& placement,
                                             const std::vector<double>& boundaryBytes) const {
  assert(variants.size() == placement.size());
  double total = 0;
  for (size_t p = 0; p < variants.size(); ++p) {
    auto ms = subgraph(static_cast<int>(p), variants[p], placement[p]);
    if (!ms) return std::nullopt;
    total += *ms - overhead(placement[p]);
    bool runStarts = p == 0 || placement[p - 1] != placement[p];
    if (runStarts) total += overhead(placement[p]);
    if (p > 0 && placement[p - 1] != placement[p])
      total += transition(placement[p - 1], placement[p], p - 1 < boundaryBytes.size() ? boundaryBytes[p - 1] : 0.0);
  }
  return total;
}

std::vector<std::vector<std::string>> placementOrders(const std::vector<std::string>& processors, int positions) {
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> current;
  std::vector<bool> used(processors.size(), false);
  std::function<void()> rec = [&]() {
    if (static_cast<int>(current.size()) == positions) {
      out.push_back(current);
      return;
    }
    for (size_t i = 0; i < processors.size(); ++i) {
      if (used[i]) continue;
      used[i] = true;
      current.push_back(processors[i]);
      rec();
      current.pop_back();
      used[i] = false;
    }
  };
  rec();
  return out;
}

std::vector<std::vector<std::string>> searchOrders(const std::vector<std::string>& processors, int positions) {
  if (positions <= static_cast<int>(processors.size())) return placementOrders(processors, positions);
  std::vector<std::vector<std::string>> out{{}};
  for (int p = 0; p < positions; ++p) {
    std::vector<std::vector<std::string>> next;
    for (const auto& prefix : out)
      for (const auto& proc : processors) {
        auto v = prefix;
        v.push_back(proc);
        next.push_back(std::move(v));
      }
    out = std::move(next);
  }
  return out;
}

std::optional<uint64_t> searchOrderCount(size_t processors, int positions, uint64_t limit) {
  if (positions < 0) return std::nullopt;
  const uint64_t s = static_cast<uint64_t>(positions), p = processors;
  if (s > p) return checkedPow(p, s, limit);
  uint64_t n = 1;  // p! / (p - s)!
  for (uint64_t k = 0; k < s; ++k) {
    auto next = checkedMul(n, p - k, limit);
    if (!next) return std::nullopt;
    n = *next;
  }
  return n;
}

Status checkPlacementSearch(const std::string& label, const std::string& task, uint64_t combinations,
                            size_t processors, int positions) {
  auto orders = searchOrderCount(processors, positions, kMaxPlacementSearch);
  if (orders && checkedMul(combinations, *orders, kMaxPlacementSearch)) return {};
  return makeError("{}: task '{}': {} stitched variants x {} placement orders of {} positions on {} processors "
                   "exceed the {} this tool can search; use fewer subgraphs, variants or processors",
                   label, task, combinations, orders ? fmt::format("{}", *orders) : std::string("too many"), positions,
                   processors, kMaxPlacementSearch);
}

}  // namespace zp::estimate
