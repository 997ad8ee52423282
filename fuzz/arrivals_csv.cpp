// An arrivals CSV as plan-run --serve --arrivals reads it
// (artifacts::parseArrivalsCsv) for the tasks "digits" (8 samples) and "kws"
// (3); an accepted trace must read back equal from its own CSV.
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/artifacts/arrivals_csv.h"

ZP_FUZZ_TARGET(arrivals_csv) {
  using namespace zp;
  const std::vector<artifacts::KnownTask> known = {{"digits", 8, ""}, {"kws", 3, "raise --samples"}};
  auto trace = artifacts::parseArrivalsCsv(fuzz::asText(data, size), "arrivals.csv", known);
  if (!trace.ok()) return 0;
  const std::string text = artifacts::formatArrivalsCsv(*trace);
  auto again = artifacts::parseArrivalsCsv(text, "arrivals.csv", known);
  fuzz::require(again.ok() && artifacts::formatArrivalsCsv(*again) == text,
                "arrivals.csv: an accepted trace does not read back");
  return 0;
}
