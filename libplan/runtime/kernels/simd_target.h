// The SIMD target the hand-written kernels run on. They are written once over
// Highway, compiled for every target of the architecture (x86-64: AVX2 and
// AVX-512; aarch64: NEON) and dispatched at run time to the best one this CPU
// has. A narrower target can be chosen instead, to measure the path a smaller CPU
// runs (an AVX-512 host measuring its AVX2 path).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "libplan/util/error.h"

namespace zp::runtime {

// The targets this build has that this CPU runs, best first: "avx512", "avx2", "neon".
std::vector<std::string> simdTargetsOfThisHost();
// Every target this build's architecture names, best first, whether or not this CPU runs it.
std::vector<std::string> simdTargetsOfThisBuild();
// The target the kernels dispatch to now.
std::string simdTargetInUse();
// Floats per vector on that target.
int64_t simdFloatLanes();
// Dispatch the kernels to `name` (one of simdTargetsOfThisHost()) or, with "best",
// to the best again. With gemmLibraries, oneDNN's kernels are capped at the same
// instruction set; that holds for the whole process and only before its first
// product, so a tool sets it first.
Status useSimdTarget(const std::string& name, bool gemmLibraries = false);

}  // namespace zp::runtime
