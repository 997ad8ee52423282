#include "libplan/runtime/ops/heavy_weights.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "libplan/runtime/ops/attributes.h"

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
  const WeightCache::Entry* e = bc.cache->entry(name, kernel);
  if (!e || !bc.cache->mapped(name, kernel, info->sources, packed)) {
    std::string srcs;
    for (const auto& s : info->sources) srcs += (srcs.empty() ? "" : ", ") + s;
    const WeightCache::Entry* any = bc.cache->entry(name);
    if (!any) return makeError("the weight cache has no entry for this node");
    if (!e) return makeError("the weight cache holds kernel {} for this node, not {}", any->kernel, kernel);
    return makeError("the weight cache holds this node's weights made from other inputs than {}", srcs);
  }
  info->kernel = kernel;
  info->transform = e->transform;
  info->sourceCrc = e->sourceCrc;
  info->sourceCrcKnown = true;
  info->fromCache = true;
  return {};
}

bool takeFromCache(const BuildContext& bc, const std::string& kernel, const Tensor& w) {
  return bc.fromCacheOnly && (bc.cache->entry(bc.node->name(), kernel) || !w.data);
}

Expected<double> weightZeroFraction(const BuildContext& bc, const Tensor& w) {
  if (bc.fromCacheOnly) {
    const WeightCache::Entry* e = bc.cache->entry(bc.node->name());
    if (e && e->hasZeroFraction) return e->zeroFraction;
  }
  if (w.data) return zeroFraction(w.ptr<float>(), w.size());
  return makeError("the weight cache has no entry for this node");
}

Expected<Epilogue> fusedEpilogue(const onnx::NodeProto& n) {
  Epilogue e;
  if (n.domain() != graph::kFusedDomain) return e;
  const std::string activation = attrString(n, graph::kFusedActivation, "");
  static const std::pair<const char*, ActFn> kFunctions[] = {
      {"Sigmoid", ActFn::Sigmoid}, {"Silu", ActFn::Silu},  {"HardSigmoid", ActFn::HardSigmoid},
      {"HardSwish", ActFn::HardSwish}, {"Gelu", ActFn::Gelu}, {"Tanh", ActFn::Tanh}};
  if (activation == "Relu") {
    e.kind = Epilogue::Relu;
  } else if (activation == "Clip") {
    e.kind = Epilogue::Clip;
    e.lo = attrFloat(n, graph::kFusedActivationMin, -INFINITY);
    e.hi = attrFloat(n, graph::kFusedActivationMax, INFINITY);
  } else if (!activation.empty()) {
    auto it = std::find_if(std::begin(kFunctions), std::end(kFunctions),
                           [&](const auto& f) { return activation == f.first; });
    if (it == std::end(kFunctions)) return makeError("fused activation '{}' is not supported", activation);
    e.kind = Epilogue::Function;
    e.fn = it->second;
    e.params.alpha = attrFloat(n, graph::kFusedActivationAlpha, 0.2f);
    e.params.beta = attrFloat(n, graph::kFusedActivationBeta, 0.5f);
  }
  return e;
}

Expected<FusedParts> fusedParts(const BuildContext& bc) {
  FusedParts f;
  const auto& n = *bc.node;
  if (n.domain() != graph::kFusedDomain) return f;
  ZP_ASSIGN_OR_RETURN(f.epilogue, fusedEpilogue(n));
  if (n.input_size() <= 3) return f;
  if (n.op_type() != "Conv" || (n.input_size() != 7 && n.input_size() != graph::kFusedResidualInput + 1))
    return makeError("a fused Conv takes 7 inputs or 8 (a residual), not a {} with {}", n.op_type(), n.input_size());
  if (n.input_size() > graph::kFusedResidualInput) {
    if (n.input(graph::kFusedResidualInput).empty()) return makeError("a fused Conv's residual input is empty");
    if (f.epilogue.kind == Epilogue::Function)
      return makeError("a fused Conv with a residual takes Relu or Clip, not {}", attrString(n, graph::kFusedActivation, ""));
    f.residual = true;
  }
  const int bnGiven = static_cast<int>(std::count_if(n.input().begin() + 3, n.input().begin() + 7,
                                                     [](const std::string& s) { return !s.empty(); }));
  if (bnGiven == 0) return f;
  if (bnGiven != 4) return makeError("a fused BatchNormalization needs its 4 parameters, the Conv names {}", bnGiven);
  for (int k = 3; k < 7; ++k) {
    const Tensor* t = bc.constInputs[static_cast<size_t>(k)];
    if (!t || t->dtype != DType::F32)
      return makeError("fused BatchNormalization parameter '{}' must be a float32 constant", n.input(k));
    f.batchNorm.push_back(t);
    f.batchNormNames.push_back(n.input(k));
  }
  f.bnEpsilon = attrFloat(n, graph::kFusedBnEpsilon, 1e-5f);
  return f;
}

}  // namespace zp::runtime::detail
