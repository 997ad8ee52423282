// Chrome-trace / Perfetto JSON of a simulated schedule: one track per
// accelerator, one for transitions; a group slowed by contention has
// "[contention xS]" in its name and nested "contention xS" spans (cname
// "terrible") for each contention interval in which it ran slower.
#pragma once
#include <string>

#include "libplan/sim/concurrent/simulator.h"
#include "libplan/util/json.h"

namespace zp::sim {

Json chromeTrace(const Problem& problem, const SimResult& result, const std::string& title);

}  // namespace zp::sim
