// The weight-shared multitask section of the plan (MTS): the stitched groups
// zoo-mts wrote, each a unit placed whole on one host processor, with the
// measured costs the placement was decided from and the systems plan-run
// --serve runs beside it (the members' own models one after another, all units
// on one processor).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "libplan/plan/stitch_plan.h"

namespace zp::plan {

// A member task of a group; its own model is the plan's unit model:GROUP/TASK.
struct MtsPlanMember : GroupMember {
  std::vector<double> ms;      // one run of its own model on each processor (the section's order), measured
  bool operator==(const MtsPlanMember&) const = default;
};

// A weight-shared group; its stitched graph is the plan's unit group:GROUP.
struct MtsUnit {
  std::string group;             // mts.json group name
  bool sharedInput = false;      // members of one input shape read one stitched input
  std::vector<MtsPlanMember> members;
  int64_t weightBytes = 0;       // stitched graph: shared + exclusive + auxiliary
  int64_t memberBytes = 0;       // the members' own models together
  std::vector<double> stitchedMs;  // one run of the stitched graph on each processor, measured
  // The members' own models one after another on processor p (their ms summed).
  double sequentialMs(size_t p) const {
    double sum = 0;
    for (const auto& m : members) sum += m.ms.at(p);
    return sum;
  }
  bool operator==(const MtsUnit&) const = default;
};

// What one system runs: per unit, its processor, and whether the unit runs as
// its stitched graph or as its members' own models one after another.
struct MtsSystem {
  std::string name;                    // "zooplan", "mts", "sequential", "one-processor"
  std::string description;
  std::vector<std::string> placement;  // per unit: processor
  std::vector<bool> stitched;          // per unit: its stitched graph (else its members' own models)
  double makespanMs = 0;               // one query of every unit released at once, from the measured costs
  bool operator==(const MtsSystem&) const = default;
};

struct MtsPlan {
  std::string manifest;        // mts.json, as the header's inputs name it
  std::vector<std::string> processors;  // the processors it plans on, by name (the plan's processors define them)
  std::string costSource = "measured";
  std::vector<MtsUnit> units;
  std::string solver;          // "enumeration" (every assignment) | "lpt" (too many to enumerate)
  std::string status;          // "optimal" (proven: every assignment evaluated) | "heuristic"
  double lowerBoundMs = 0;     // on the optimal makespan
  uint64_t assignments = 0;    // evaluated
  uint64_t seed = 0;           // of the measurement's random inputs
  std::vector<MtsSystem> systems;  // zooplan first
  bool operator==(const MtsPlan&) const = default;
};

}  // namespace zp::plan
