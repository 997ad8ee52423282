#include "fuzz/stitch_space_probe.h"

#include <cmath>
#include <string>
#include <vector>

#include "drivers/stitch_flow/stitch_space_read.h"
#include "fuzz/fuzz_util.h"

namespace zp::fuzz {

void probeStitchSpace(const std::filesystem::path& profileDir) {
  auto space = drivers::readStitchSpace(profileDir);
  if (!space.ok()) return;
  for (const auto& task : space->tasks) {
    for (size_t p = 0; p < space->processors.size(); ++p) {
      const std::vector<std::string> byName(task.positions, space->processors[p].name);
      const std::vector<int> byIndex(task.positions, static_cast<int>(p));
      for (uint64_t c : task.validCombinations()) {
        const double named = task.latencyMs(task.candidate(c), byName);
        const double dense = task.latencyMs(c, byIndex);
        require(!std::isnan(named) && !std::isnan(dense), "stitch space: a latency is NaN");
        require(named == dense || std::fabs(named - dense) <= 1e-9 * std::fabs(named),
                "stitch space: the dense latency table disagrees with the latency model");
      }
    }
  }
}

}  // namespace zp::fuzz
