// report.json as plan-solve reads a profile directory (drivers::readStitchSpace),
// beside the fixture's profile.csv, accuracy.csv, latency_model.json, stitch
// directory and zoo.
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "fuzz/stitch_space_probe.h"

ZP_FUZZ_TARGET(report_json) {
  using namespace zp;
  const auto prof = fuzz::profileFixture();
  fuzz::writeInput(fuzz::asText(data, size), "profile/prof/report.json");
  fuzz::probeStitchSpace(prof);
  return 0;
}
