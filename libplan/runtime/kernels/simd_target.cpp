#include "libplan/runtime/kernels/simd_target.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "libplan/runtime/kernels/simd_target.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace zp::runtime::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
int64_t FloatLanes() { return static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>())); }
}  // namespace zp::runtime::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <dnnl.hpp>

#include <algorithm>

#include <fmt/format.h>

namespace zp::runtime {
HWY_EXPORT(FloatLanes);

namespace {

struct Known {
  int64_t target;
  const char* name;
  // oneDNN's instruction-set cap for the same target.
  dnnl::cpu_isa isa;
};

// Best first.
constexpr Known kKnown[] = {
#if HWY_ARCH_X86
    {HWY_AVX3_DL, "avx512-dl", dnnl::cpu_isa::avx512_core_vnni},
    {HWY_AVX3, "avx512", dnnl::cpu_isa::avx512_core},
    {HWY_AVX2, "avx2", dnnl::cpu_isa::avx2},
#elif HWY_ARCH_ARM
    {HWY_NEON, "neon", dnnl::cpu_isa::all},
#endif
};

// Highway 1.0.3's SupportedTargets() points the dispatch at every target the CPU has
// before it applies DisableTargets' mask: after a narrowing, any call of it sent every
// kernel back to AVX-512 (plan-run --simd avx2 reports the target after narrowing).
// Pointing the dispatch at what it returns keeps the narrowing.
int64_t builtAndSupported() {
  const int64_t supported = hwy::SupportedTargets();
  hwy::GetChosenTarget().Update(supported);
  return supported & HWY_TARGETS;
}

// Every target this build has and the CPU runs: read once, before useSimdTarget
// turns any off (it reads this first).
int64_t hostTargets() {
  static const int64_t host = builtAndSupported();
  return host;
}

}  // namespace

std::vector<std::string> simdTargetsOfThisHost() {
  std::vector<std::string> out;
  const int64_t have = hostTargets();
  for (const Known& k : kKnown)
    if (have & k.target) out.push_back(k.name);
  return out;
}

std::vector<std::string> simdTargetsOfThisBuild() {
  std::vector<std::string> out;
  for (const Known& k : kKnown) out.push_back(k.name);
  return out;
}

std::string simdTargetInUse() {
  const int64_t have = builtAndSupported();
  for (const Known& k : kKnown)
    if (have & k.target) return k.name;
  return hwy::TargetName(have & -have);
}

int64_t simdFloatLanes() { return HWY_DYNAMIC_DISPATCH(FloatLanes)(); }

Status useSimdTarget(const std::string& name, bool gemmLibraries) {
  const std::vector<std::string> have = simdTargetsOfThisHost();
  if (name == "best") {
    hwy::DisableTargets(0);
    return Status::success();
  }
  const Known* chosen = nullptr;
  for (const Known& k : kKnown)
    if (k.name == name) chosen = &k;
  if (!chosen || std::find(have.begin(), have.end(), name) == have.end())
    return makeError("SIMD target '{}' is not one this CPU runs (it runs: {}; or 'best')", name, fmt::join(have, ", "));
  int64_t better = 0;
  for (const Known& k : kKnown) {
    if (&k == chosen) break;
    better |= k.target;
  }
  hwy::DisableTargets(better);
  if (gemmLibraries && chosen->isa != dnnl::cpu_isa::all && dnnl::set_max_cpu_isa(chosen->isa) != dnnl::status::success)
    return makeError("oneDNN's instruction set cannot be capped at '{}' any more (it already ran)", name);
  return Status::success();
}

}  // namespace zp::runtime
#endif  // HWY_ONCE
