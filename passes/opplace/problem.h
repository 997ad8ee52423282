// Per-operator placement of one DNN (SparOA §4): the graph, the processors,
// what each operator costs on each, and the list-schedule cost model that
// turns an assignment into the latency of one inference.
//
// Cost model. Operators are dispatched in the graph's (topological) order.
// An operator v placed on processor p starts when every input is ready on p
// and p is free: start(v) = max(free(p), max over edges u->v of finish(u) +
// handoff(proc(u), p, bytes(u->v))) with no hand-off cost when proc(u) = p;
// finish(v) = start(v) + ms[v][p]; free(p) = finish(v). Processors run
// concurrently, so independent branches placed apart overlap. A hand-off is a
// delay (a copy through shared memory), not a resource. The latency is the
// last finish. Graph inputs are on every processor at time 0.
//
// Processors may share hardware: with `cores` given, processor p occupies the
// cores cores[p], free(p) is the latest finish on any of them, and an operator
// on p makes all of them busy until it finishes. "One processor with all
// cores" (intra-operator threads over both cores) is then a processor beside
// the two single-core ones, and a placement may use it for some operators only.
#pragma once
#include <string>
#include <vector>

#include "libplan/estimate/transition_cost.h"
#include "libplan/util/error.h"

namespace zp::opplace {

struct OpNode {
  std::string name, opType;
  double activationSparsity = 0;  // SparOA's rho (Eq. 1) of the node's output
  double intensity = 0;           // SparOA's I (Eq. 2): FLOPs
};

struct OpEdge {
  int from = 0, to = 0;  // node indices, from < to
  double bytes = 0;      // tensor handed over
};

// A configuration that only runs the whole graph alone (e.g. one processor
// with all cores and intra-operator threads): a baseline, not a placement target.
struct AloneConfig {
  std::string name;
  std::vector<double> ms;  // per node
};

struct Problem {
  std::vector<OpNode> nodes;        // in a topological order: the dispatch order
  std::vector<OpEdge> edges;
  std::vector<std::string> processors;
  std::vector<std::vector<double>> ms;         // [node][processor], finite, >= 0
  std::vector<std::vector<estimate::TransitionCost>> handoff;   // [from][to]; the diagonal is unused
  std::vector<AloneConfig> alone;
  // Per processor the cores (ids >= 0) it occupies; empty: every processor is its own.
  std::vector<std::vector<int>> cores;
};

// Per processor the cores it occupies, ids 0..coreCount-1 (problem.cores, or
// processor q alone on core q when none are given).
struct CoreMap {
  std::vector<std::vector<int>> of;
  int count = 0;
};
CoreMap coreMap(const Problem& problem);

// Errors name the problem: mismatched sizes, edges not going forward, negative costs.
Status validate(const Problem& problem);

// Node -> processor index.
using Assignment = std::vector<int>;

struct Timeline {
  std::vector<double> startMs, finishMs;
  double latencyMs = 0;
  int handoffs = 0;  // edges crossing processors
};

Timeline listSchedule(const Problem& problem, const Assignment& assignment);
inline double latencyOf(const Problem& problem, const Assignment& a) { return listSchedule(problem, a).latencyMs; }

// Predecessor edges per node (indices into problem.edges).
std::vector<std::vector<int>> inEdges(const Problem& problem);

// True when the nodes form one path in dispatch order (each edge goes i -> i+1).
bool isChain(const Problem& problem);

}  // namespace zp::opplace
