// The in-memory scheduling problem the simulator and the concurrent scheduler
// share: accelerators, DNNs as chains of layer groups with per-accelerator
// costs, dependencies between DNNs, and the shared-memory contention model.
// Terms follow HaX-CoNN (§3.4,
// Table 3): t(L,a) = timeMs, tau(L,a,OUT|IN) = transitionOutMs/InMs.
#pragma once
#include <string>
#include <vector>

#include "libplan/sim/concurrent/contention.h"

namespace zp::sim {

// A layer group (the paper's L_{i,n}): the atomic unit of assignment.
struct GroupCost {
  std::string name;
  // Per accelerator (index into Problem::accelerators). timeMs < 0 means the
  // group cannot run on that accelerator.
  std::vector<double> timeMs;
  // Cost of leaving this group's accelerator after it (flush / reformat out),
  // paid when the next group (or a dependent DNN's first group) runs elsewhere.
  std::vector<double> transitionOutMs;
  // Cost of entering this group on an accelerator from another one.
  std::vector<double> transitionInMs;
  // Requested memory throughput when run standalone (same unit as the
  // contention CSV, e.g. % of peak DRAM bandwidth).
  std::vector<double> demand;

  bool allowed(int acc) const { return timeMs[static_cast<size_t>(acc)] >= 0; }
};

struct Dnn {
  std::string name;
  std::vector<GroupCost> groups;
  // Indices of DNNs whose output this DNN consumes (a pipeline, the paper's
  // scenario 3): its first group starts after all of them end. Always < own index.
  std::vector<int> deps;
};

enum class Objective { Latency, Throughput };
const char* objectiveName(Objective o);

struct Problem {
  std::vector<std::string> accelerators;
  std::vector<Dnn> dnns;
  ContentionModel contention;

  int numAccelerators() const { return static_cast<int>(accelerators.size()); }
  int numDnns() const { return static_cast<int>(dnns.size()); }
  int totalGroups() const;
};

// Group -> accelerator, per DNN. A maximal run of consecutive groups of one
// DNN on one accelerator is a *segment*; a segment occupies its accelerator
// from its first group's start to its last group's end (non-preemptive, like
// one TensorRT engine), and segments of different DNNs on one accelerator run
// in the order they became ready (FIFO; ties go to the lower DNN index).
struct Schedule {
  std::vector<std::vector<int>> assign;
  bool operator==(const Schedule&) const = default;
  bool operator<(const Schedule& o) const { return assign < o.assign; }
};

// Checks sizes and allowed accelerators (bug if violated).
bool isValidSchedule(const Problem& p, const Schedule& s);
int countTransitions(const Schedule& s, int dnn);
// related[n][m]: DNN n == m, or a chain of dependencies orders them (one
// ends before the other starts), so their groups never run at the same time.
std::vector<std::vector<bool>> dependencyRelated(const Problem& p);

// Objective value helpers. Latency (Eq. 11): max over DNNs of its end time.
// Throughput (Eq. 10): sum over DNNs of 1000 / T_n (inferences per second),
// where T_n is the DNN's end minus the time its input became available.
// `better(a, b)` is true when a is strictly better than b (relative 1e-9).
bool better(Objective o, double a, double b);
double worstValue(Objective o);

}  // namespace zp::sim
