// profile.csv: the reader on its own (a database whose written bytes read back
// to the same bytes), then as plan-solve reads it in a profile directory
// (drivers::readStitchSpace, the fixture around it, report.json recording its hash).
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "fuzz/stitch_space_probe.h"
#include "libplan/artifacts/profile_csv.h"

ZP_FUZZ_TARGET(profile_csv) {
  using namespace zp;
  const auto text = fuzz::asText(data, size);
  auto db = artifacts::parseProfileCsv(text, "profile.csv");
  // What the parser refuses, readStitchSpace refuses the same way: only accepted text goes on.
  if (!db.ok()) return 0;
  const std::string written = artifacts::formatProfileCsv(*db);
  auto again = artifacts::parseProfileCsv(written, "profile.csv");
  fuzz::require(again.ok() && artifacts::formatProfileCsv(*again) == written,
                "profile.csv: a written profile does not read back to the same bytes");
  fuzz::probeStitchSpace(fuzz::putProfileFile("profile.csv", text));
  return 0;
}
