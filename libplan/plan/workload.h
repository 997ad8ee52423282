// The workload a plan is made for (slo.json's "workload", schemas/slo.schema.json):
// tasks queried on request (per task a rate and the arrival process, or an
// arrivals file), frames of DNNs run at a period (each frame runs its DNNs, a
// DNN after those it depends on), and the device's memory budget.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "libplan/util/error.h"

namespace zp::plan {

struct FrameSpec {
  std::string name;
  double periodMs = 0;    // a frame arrives every period
  double latencyMs = 0;   // a frame's DNNs must all end this long after it arrives
  std::vector<std::string> dnns;  // tasks of the profile, each once
  std::vector<std::pair<std::string, std::string>> dependsOn;  // (dnn, the dnn it starts after)
  bool operator==(const FrameSpec&) const = default;
};

struct WorkloadSpec {
  std::string process = "poisson";         // poisson | periodic: of the rate_qps queries
  std::map<std::string, double> rateQps;   // task -> queries per second
  std::string arrivals;                    // an arrivals CSV instead of rates (as the file names it)
  std::vector<FrameSpec> frames;
  std::string memoryBudget;                // "60%" of the units' bytes, or bytes; empty: unbounded
  bool operator==(const WorkloadSpec&) const = default;
};

// How a frame's DNNs run: each connected set of DNNs (through dependencies) as
// one chain in an order that respects them (ties in the frame's order); sets
// without dependencies between them are chains of their own, run at once. An
// error names a dependency cycle or a DNN the frame does not run.
Expected<std::vector<std::vector<std::string>>> frameChains(const FrameSpec& frame);

}  // namespace zp::plan
