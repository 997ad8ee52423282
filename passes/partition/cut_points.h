// Where a graph may be cut: the points of its (topologically ordered) main
// node sequence where exactly one tensor crosses from the earlier part to the
// later one, outside fusible chains, with Q/DQ nodes (and the Cast or Clip
// between a pair) kept with the op they feed.
#pragma once
#include <string>
#include <vector>

#include "libplan/graph/analysis.h"

namespace zp::partition {

// The nodes that do the work, in topological order: constant nodes (computable
// from initializers) and activation QuantizeLinear/DequantizeLinear nodes are
// left out — the first are copied wherever needed, the second are transparent
// and travel with the op they feed.
struct MainSequence {
  std::vector<int> nodes;      // graph node indices
  std::vector<int> position;   // per graph node: its position in `nodes` (owner for Q/DQ), -1 for constants
};

MainSequence mainSequence(const graph::GraphView& view);

// A QuantizeLinear or DequantizeLinear node, or the Cast or Clip between the
// two that torch's quantized exports put there: transparent to the alignment.
bool isQdq(const graph::GraphView& view, int node);

struct CutPoint {
  int after = 0;            // the cut lies between main positions `after` and `after + 1`
  std::string tensor;       // the one tensor crossing it
  std::string producer;     // name of the node producing `tensor`
};

// Every valid cut, in order. A cut is valid when exactly one non-constant
// tensor is produced at or before `after` and read after it (a graph input
// read after the cut counts as crossing; a graph output produced before it
// makes the cut invalid), that tensor is not produced by a Q/DQ node, and the
// producer and its reader are not a fusible pair (Conv->BatchNormalization,
// Conv/BatchNormalization->activation, MatMul->Add, Add->Relu, ...).
std::vector<CutPoint> findCutPoints(const graph::GraphView& view, const MainSequence& main);
inline std::vector<CutPoint> findCutPoints(const graph::GraphView& view) {
  return findCutPoints(view, mainSequence(view));
}

// True when an op of type `consumer` reading the output of `producer` is
// normally fused with it by inference engines.
bool isFusiblePair(const std::string& producer, const std::string& consumer);

}  // namespace zp::partition
