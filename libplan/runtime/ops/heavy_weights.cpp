#include "libplan/runtime/ops/heavy_weights.h"

namespace zp::runtime::detail {

WeightArray viewOf(const std::string& name, const Tensor& t) {
  WeightArray a;
  a.name = name;
  a.dtype = t.dtype;
  a.count = t.size();
  a.data = t.data;
  a.owner = t.owner;
  return a;
}

bool rejectedEarlier(const BuildContext& bc, WeightInfo* info) {
  if (!bc.corruptNodes) return false;
  auto it = bc.corruptNodes->find(bc.node->name());
  if (it == bc.corruptNodes->end()) return false;
  info->cacheCorrupt = true;
  if (bc.warnings)
    bc.warnings->push_back(fmt::format("{}: node '{}': {}; using raw ONNX weights",
                                       bc.cache ? bc.cache->path().string() : std::string("weight cache"),
                                       bc.node->name(), it->second));
  return true;
}

Status weightsFromCache(const BuildContext& bc, const std::string& kernel, PackedWeights* packed, WeightInfo* info) {
  const std::string& name = bc.node->name();
  const WeightCache::Entry* e = bc.cache->entry(name);
  if (!e || !bc.cache->mapped(name, kernel, info->sources, packed)) {
    std::string srcs;
    for (const auto& s : info->sources) srcs += (srcs.empty() ? "" : ", ") + s;
    if (!e) return makeError("the weight cache has no entry for this node");
    if (e->kernel != kernel) return makeError("the weight cache holds kernel {} for this node, not {}", e->kernel, kernel);
    return makeError("the weight cache holds this node's weights made from other inputs than {}", srcs);
  }
  info->kernel = kernel;
  info->transform = e->transform;
  info->sourceCrc = e->sourceCrc;
  info->sourceCrcKnown = true;
  info->fromCache = true;
  return {};
}

Expected<double> weightZeroFraction(const BuildContext& bc, const Tensor& w) {
  if (!bc.fromCacheOnly) return zeroFraction(w.ptr<float>(), w.size());
  const WeightCache::Entry* e = bc.cache->entry(bc.node->name());
  if (!e || !e->hasZeroFraction) return makeError("the weight cache has no entry for this node");
  return e->zeroFraction;
}

}  // namespace zp::runtime::detail
