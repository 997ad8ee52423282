#include "libplan/estimate/latency_model.h"

#include <algorithm>
#include <cassert>
#include <functional>

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

}  // namespace zp::estimate
