// A stitched variant's accuracy composed from per-sample correctness, beside
// SparseLoom's feature-based estimator (§3.2). Every part of a stitched
// variant comes from a source variant whose correctness on each test sample is
// measured. Where every source is right the stitched variant almost always is
// too, so it runs only on the samples some source gets wrong (counted exactly)
// and on a seeded audit of the rest, whose failures give the rate at which
// stitching breaks a sample every source gets right.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace zp::estimate {

struct ContestedPlan {
  std::vector<size_t> contested;  // samples some source variant gets wrong
  std::vector<size_t> audit;      // seeded share of the samples every source gets right
  size_t agreeing = 0;            // samples every source gets right (the audit included)
  size_t total = 0;               // samples in the test set

  // The samples the stitched variant runs on: contested and audit, sorted.
  std::vector<size_t> samples() const;
};

// `sources`: each distinct source variant's correctness (1/0 per sample, all
// the same length). The audit takes ceil(auditFraction * agreeing) samples.
ContestedPlan contestedPlan(const std::vector<const std::vector<uint8_t>*>& sources, double auditFraction,
                            uint64_t seed);

// What a stitched variant's run on plan.samples() showed.
struct ContestedRun {
  size_t contestedRight = 0;  // contested samples it gets right
  size_t audited = 0, broken = 0;  // audit samples, and those it gets wrong
};
// `correct`: its verdicts on plan.samples(), in that order.
ContestedRun tallyContestedRun(const ContestedPlan& plan, const std::vector<uint8_t>& correct);

// Each variant's breakage rate (broken / audited) shrunk toward the pooled
// rate of all of them: a beta-binomial prior fitted by the method of moments,
// so that one broken sample in a small audit does not condemn a variant
// unless the variants' rates really differ that much.
std::vector<double> pooledBreakage(const std::vector<ContestedRun>& runs);

// The composed accuracy: contested samples as measured, audited ones as
// measured, the other agreeing samples right at 1 - breakage.
double composedAccuracy(const ContestedPlan& plan, const ContestedRun& run, double breakage);

}  // namespace zp::estimate
