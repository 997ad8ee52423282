// plan-run's measured cold run as plan-solve --calibrate reads it
// (artifacts::readColdRunReport); an accepted run must read back equal from the
// JSON its writer makes of it.
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/artifacts/cold_run_json.h"

ZP_FUZZ_TARGET(cold_run_json) {
  using namespace zp;
  auto run = artifacts::readColdRunReport(fuzz::writeInput(fuzz::asText(data, size), "cold_run.json"));
  if (!run.ok()) return 0;
  auto again = artifacts::parseColdRunReport(artifacts::coldRunReportJson(*run), "cold_run.json");
  fuzz::require(again.ok() && *again == *run, "cold_run.json: an accepted run does not read back");
  return 0;
}
