// The accuracy of a task's stitched variants as the selection sees them,
// asked per combination number (combinations.h) and never listed: each valid
// combination has a predicted accuracy (the estimator's, SparseLoom §3.2) and,
// where zoo-profile measured it, a measured one. The searches over
// combinations (combination_search.h) also ask for bounds over every
// combination that starts with a given prefix of variants, so that a whole
// subtree no combination of which can reach an accuracy SLO is skipped.
//
// Two models: a table of every combination (what zoo-profile's accuracy.csv
// holds; its bounds per prefix are exact) and the mean of the source
// variants' accuracies (SparseLoom's Eq. 2 feature, evaluated when asked; the
// generated instances of bench_select and the tests).
#pragma once
#include <cstdint>
#include <limits>
#include <vector>

#include "passes/select/combinations.h"

namespace zp::select {

// Bounds of the decision accuracy over the valid combinations of a subtree.
struct AccuracyBounds {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  bool complete = false;  // every combination of the subtree is valid
  bool empty() const { return !(lo <= hi); }
};

class AccuracyModel {
 public:
  explicit AccuracyModel(Combinations combinations) : combinations_(std::move(combinations)) {}
  virtual ~AccuracyModel() = default;
  const Combinations& combinations() const { return combinations_; }

  // Whether combination k is a stitched variant (its boundaries chain).
  virtual bool valid(uint64_t k) const = 0;
  // Of a valid combination.
  virtual double predicted(uint64_t k) const = 0;
  virtual double measured(uint64_t k) const = 0;  // < 0: not measured
  // Bounds of decision(k, measuredForDecisions) over the valid combinations whose
  // first `depth` digits are prefix[0, depth) (`prefixNumber`: those digits as a
  // number). Sound, not necessarily tight.
  virtual AccuracyBounds bounds(const int* prefix, uint64_t prefixNumber, int depth,
                                bool measuredForDecisions) const = 0;

  // What a decision uses: measured for originals (zoo-profile measures them all)
  // and, with measuredForDecisions, for every measured combination; else predicted.
  double decision(uint64_t k, bool measuredForDecisions) const {
    const double m = measured(k);
    return (measuredForDecisions || combinations_.original(k)) && m >= 0 ? m : predicted(k);
  }
  // What the simulator judges with: measured where measured.
  double judged(uint64_t k) const {
    const double m = measured(k);
    return m >= 0 ? m : predicted(k);
  }

 private:
  Combinations combinations_;
};

// One valid combination's accuracies.
struct AccuracyEntry {
  uint64_t combination = 0;
  double predicted = 0;
  double measured = -1;  // < 0: not measured
};

// Every valid combination's accuracies in a table (a value per combination
// number) with the exact bounds of every prefix precomputed: memory grows with
// V^S, so this is the model for spaces zoo-profile already listed.
class AccuracyTable final : public AccuracyModel {
 public:
  // `entries`: the valid combinations, each once; the rest are invalid.
  AccuracyTable(Combinations combinations, const std::vector<AccuracyEntry>& entries);

  bool valid(uint64_t k) const override { return predicted_[k] == predicted_[k]; }
  double predicted(uint64_t k) const override { return predicted_[k]; }
  double measured(uint64_t k) const override { return measured_[k]; }
  AccuracyBounds bounds(const int* prefix, uint64_t prefixNumber, int depth,
                        bool measuredForDecisions) const override;

 private:
  std::vector<double> predicted_;  // NaN: not a valid combination
  std::vector<double> measured_;
  // [measuredForDecisions][depth][prefix number]
  std::vector<std::vector<double>> lo_[2], hi_[2];
  std::vector<std::vector<uint64_t>> validCount_;  // [depth][prefix number]
};

// The accuracy of a combination as the mean over positions of a per-(position,
// variant) accuracy — the accuracy of the variant each position comes from
// (SparseLoom Eq. 2) — summed in position order, then divided by S. Every
// combination is valid and counts as measured at that value.
class MeanSourceAccuracy final : public AccuracyModel {
 public:
  // perPosition[position][variant].
  MeanSourceAccuracy(Combinations combinations, std::vector<std::vector<double>> perPosition);

  bool valid(uint64_t) const override { return true; }
  double predicted(uint64_t k) const override;
  double measured(uint64_t k) const override { return predicted(k); }
  AccuracyBounds bounds(const int* prefix, uint64_t prefixNumber, int depth,
                        bool measuredForDecisions) const override;

 private:
  std::vector<std::vector<double>> perPosition_;
  std::vector<double> lowest_, highest_;  // per position
};

}  // namespace zp::select
