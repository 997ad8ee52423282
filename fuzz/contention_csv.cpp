// The contention CSV a workload names (artifacts::parseContentionCsv), for
// the accelerators GPU and DLA; an accepted model must give a finite slowdown
// of at least 1 anywhere on and off its grid.
#include <cmath>

#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/artifacts/contention_csv.h"

ZP_FUZZ_TARGET(contention_csv) {
  using namespace zp;
  auto model = artifacts::parseContentionCsv(std::string(fuzz::asText(data, size)), "contention.csv", {"GPU", "DLA"});
  if (!model.ok()) return 0;
  for (int a = 0; a < 2; ++a)
    for (double own : {0.0, 17.0, 100.0, 1e9})
      for (double ext : {0.0, 45.5, 120.0, 1e9}) {
        const double s = model->slowdown(a, own, ext);
        fuzz::require(std::isfinite(s) && s >= 1.0, "contention.csv: an accepted model gives a slowdown below 1 or not finite");
      }
  return 0;
}
