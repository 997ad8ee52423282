// A workload's group rows CSV (artifacts::parseGroupRowsCsv) for the
// accelerators GPU and DLA: every accepted group has a cost per accelerator.
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/artifacts/group_rows_csv.h"

ZP_FUZZ_TARGET(group_rows_csv) {
  using namespace zp;
  auto groups = artifacts::parseGroupRowsCsv(std::string(fuzz::asText(data, size)), "groups.csv", {"GPU", "DLA"});
  if (!groups.ok()) return 0;
  for (const auto& g : *groups)
    fuzz::require(g.timeMs.size() == 2 && g.transitionOutMs.size() == 2 && g.transitionInMs.size() == 2 &&
                      g.demand.size() == 2,
                  "group rows: a group has no cost for every accelerator");
  return 0;
}
