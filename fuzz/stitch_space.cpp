// stitch.json as plan-solve reads it behind a profile directory
// (drivers::readStitchSpace), beside the fixture's report.json (recording
// this stitch.json's hash), profile.csv, accuracy.csv, latency_model.json and
// zoo: what the manifest reader accepts must not break the space plan-solve
// builds from it, nor the latency lookups its optimizer makes.
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "fuzz/stitch_space_probe.h"

ZP_FUZZ_TARGET(stitch_space) {
  using namespace zp;
  fuzz::probeStitchSpace(fuzz::putProfileFile("stitch.json", fuzz::asText(data, size)));
  return 0;
}
