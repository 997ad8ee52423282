// What Conv and the constant-matrix Gemm/MatMul share: their weights come from a
// weight cache (checked, or viewed unchecked in sessions built from the cache alone),
// from their own transform, or are the ONNX weights used in place.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "libplan/graph/rewrite/fuse.h"
#include "libplan/runtime/cache/crc32c.h"
#include "libplan/runtime/cache/weight_cache.h"
#include "libplan/runtime/ops/op.h"
#include "libplan/util/stats.h"

namespace zp::runtime::detail {


// A packed array that views a constant tensor (kept alive through its owner).
WeightArray viewOf(const std::string& name, const Tensor& t);

// CRC-32C of t chained onto seed (seed itself for an absent tensor).
inline uint32_t crcOf(uint32_t seed, const Tensor* t) {
  if (!t) return seed;
  return crc32c(t->data, t->bytes(), seed);
}

// A node whose cache entry an earlier session of this model found corrupt (while
// running from the cache alone) uses its raw weights; says so once.
bool rejectedEarlier(const BuildContext& bc, WeightInfo* info);

// Resolves cached or transformed weights for a heavy node. `transform` runs only
// when the cache has no usable entry.
template <typename TransformFn>
void resolveWeights(const BuildContext& bc, const std::string& kernel, const std::string& transformName,
                    uint32_t sourceCrc, TransformFn transform, PackedWeights* packed, WeightInfo* info) {
  info->kernel = kernel;
  info->transform = transformName;
  info->sourceCrc = sourceCrc;
  info->sourceCrcKnown = true;
  const std::string& name = bc.node->name();
  if (rejectedEarlier(bc, info)) {
    // warned there
  } else if (bc.cache) {
    std::string why;
    switch (bc.cache->lookup(name, kernel, sourceCrc, packed, &why)) {
      case WeightCache::Result::Hit:
        info->fromCache = true;
        return;
      case WeightCache::Result::Corrupt:
        info->cacheCorrupt = true;
        if (bc.warnings)
          bc.warnings->push_back(fmt::format("{}: node '{}': {}; using raw ONNX weights",
                                             bc.cache->path().string(), name, why));
        break;
      case WeightCache::Result::Miss: break;
    }
  } else if (!bc.cacheRejected.empty() && bc.warnings) {
    bc.warnings->push_back(fmt::format("{}; node '{}' uses raw ONNX weights", bc.cacheRejected, name));
  }
  auto t0 = std::chrono::steady_clock::now();
  *packed = transform();
  info->transformMs = msSince(t0);
}

// Sessions built from a cache's model skeleton: the weights of (node, kernel) as
// the cache holds them, viewed in place; their checksums are verified before the
// node first runs.
Status weightsFromCache(const BuildContext& bc, const std::string& kernel, PackedWeights* packed, WeightInfo* info);
// Sessions built from a skeleton take a node's weights from the cache when it
// holds them for `kernel`, or when the ONNX weights `w` are not at hand; otherwise
// (a cold plan's cache points at the model file for them) they are transformed.
bool takeFromCache(const BuildContext& bc, const std::string& kernel, const Tensor& w);

// What graph::fuseIntoHeavyNodes folded into a node of the fused domain (nothing
// for a node of the standard domain).
struct FusedParts {
  Epilogue epilogue;                       // Relu or Clip
  std::vector<const Tensor*> batchNorm;    // Conv: BatchNormalization's scale, bias, mean, var
  std::vector<std::string> batchNormNames;
  float bnEpsilon = 1e-5f;
  bool residual = false;                   // Conv: input 7 is added to the output before the epilogue's clamp
};
Expected<FusedParts> fusedParts(const BuildContext& bc);
// The activation a node of the fused domain carries (none for the standard domain).
Expected<Epilogue> fusedEpilogue(const onnx::NodeProto& n);

// The zero fraction of a heavy node's weight matrix: recorded in the cache when
// the weights are not at hand.
Expected<double> weightZeroFraction(const BuildContext& bc, const Tensor& w);

}  // namespace zp::runtime::detail
