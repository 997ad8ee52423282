#include "passes/select/placement_set.h"
#include "libplan/util/infinity.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <set>

namespace zp::select {
namespace {

bool noRepeat(const std::vector<int>& placement) {
  std::set<int> seen(placement.begin(), placement.end());
  return seen.size() == placement.size();
}

// P^S and P! / (P - S)!, saturating at `cap`.
uint64_t sequences(int P, int S, bool withoutRepeat, uint64_t cap) {
  uint64_t n = 1;
  for (int i = 0; i < S; ++i) {
    if (withoutRepeat && P - i <= 0) return 0;
    const uint64_t factor = static_cast<uint64_t>(withoutRepeat ? P - i : P);
    if (n > cap / std::max<uint64_t>(factor, 1)) return cap;
    n *= factor;
  }
  return n;
}
}  // namespace

PlacementSet PlacementSet::of(const std::vector<std::vector<int>>& placements, int processors, int positions) {
  std::set<std::vector<int>> distinct(placements.begin(), placements.end());
  PlacementSet s;
  s.processors_ = processors;
  s.positions_ = positions;
  s.listed_.assign(distinct.begin(), distinct.end());
  s.states_ = s.listed_.size();
  // A family's program costs P x P (or 2^P x P x P) per position, a list one per placement.
  const uint64_t n = distinct.size(), P = static_cast<uint64_t>(processors);
  const uint64_t cap = uint64_t{1} << 40;
  if (n == sequences(processors, positions, false, cap) && n > P * P) {
    s.kind_ = Kind::EverySequence;
    s.states_ = static_cast<size_t>(P);
  } else if (processors < 20 && n == sequences(processors, positions, true, cap) &&
             std::all_of(distinct.begin(), distinct.end(), noRepeat) && n > (uint64_t{1} << P) * P * P) {
    s.kind_ = Kind::NoRepeat;
    s.states_ = static_cast<size_t>((uint64_t{1} << P) * P);
  }
  if (s.kind_ != Kind::Listed) s.listed_.clear();
  return s;
}

PlacementSet PlacementSet::single(const std::vector<int>& placement, int processors) {
  return of({placement}, processors, static_cast<int>(placement.size()));
}

double PlacementSet::add(const TaskSpace& ts, double partial, int position, int from, int to, double work) {
  double total = partial + work;
  if (position == 0 || from != to) {
    total += ts.runOverhead(to);
    if (position > 0) total += ts.transfer(position - 1, from, to);
  }
  return total;
}

void PlacementSet::advance(const TaskSpace& ts, int position, const double* work, const double* in, double* out) const {
  const int P = processors_;
  switch (kind_) {
    case Kind::Listed:
      for (size_t i = 0; i < listed_.size(); ++i) {
        const auto& pl = listed_[i];
        const int to = pl[static_cast<size_t>(position)];
        out[i] = position == 0 ? add(ts, 0.0, 0, -1, to, work[to])
                               : add(ts, in[i], position, pl[static_cast<size_t>(position - 1)], to, work[to]);
      }
      return;
    case Kind::EverySequence:
      for (int q = 0; q < P; ++q) {
        if (position == 0) {
          out[q] = add(ts, 0.0, 0, -1, q, work[q]);
          continue;
        }
        double best = kInf;
        for (int r = 0; r < P; ++r) best = std::min(best, add(ts, in[r], position, r, q, work[q]));
        out[q] = best;
      }
      return;
    case Kind::NoRepeat:
      std::fill(out, out + states_, kInf);
      if (position == 0) {
        for (int q = 0; q < P; ++q) out[(size_t{1} << q) * static_cast<size_t>(P) + static_cast<size_t>(q)] = add(ts, 0.0, 0, -1, q, work[q]);
        return;
      }
      for (size_t mask = 0; mask < (size_t{1} << P); ++mask)
        for (int r = 0; r < P; ++r) {
          const double x = in[mask * static_cast<size_t>(P) + static_cast<size_t>(r)];
          if (x == kInf) continue;  // unreachable (or unprofiled): stays infinite
          for (int q = 0; q < P; ++q) {
            if (mask & (size_t{1} << q)) continue;
            double& o = out[(mask | (size_t{1} << q)) * static_cast<size_t>(P) + static_cast<size_t>(q)];
            o = std::min(o, add(ts, x, position, r, q, work[q]));
          }
        }
      return;
  }
}

void PlacementSet::step(const TaskSpace& ts, int position, int variant, const double* in, double* out) const {
  advance(ts, position, ts.works(position, variant), in, out);
}

double PlacementSet::complete(const TaskSpace& ts, int position, const double* in, const std::vector<double>& cost,
                              double* scratch) const {
  const double* cur = in;
  double* buffers[2] = {scratch, scratch + states_};
  for (int j = position, b = 0; j < positions_; ++j, b ^= 1) {
    advance(ts, j, cost.data() + static_cast<size_t>(j) * static_cast<size_t>(processors_), cur, buffers[b]);
    cur = buffers[b];
  }
  return least(cur);
}

double PlacementSet::least(const double* states) const {
  double best = kInf;
  for (size_t i = 0; i < states_; ++i) best = std::min(best, states[i]);
  return best;
}

}  // namespace zp::select
