// accuracy.csv: the reader on its own (rows that read back the same after
// writing), then as plan-solve reads it in a profile directory
// (drivers::readStitchSpace, the fixture around it, report.json recording its hash).
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "fuzz/stitch_space_probe.h"
#include "libplan/artifacts/accuracy_csv.h"

ZP_FUZZ_TARGET(accuracy_csv) {
  using namespace zp;
  const auto text = fuzz::asText(data, size);
  auto rows = artifacts::parseAccuracyCsvRows(text, "accuracy.csv");
  // What the parser refuses, readStitchSpace refuses the same way: only accepted text goes on.
  if (!rows.ok()) return 0;
  auto again = artifacts::parseAccuracyCsvRows(artifacts::formatAccuracyCsv(*rows), "accuracy.csv");
  fuzz::require(again.ok() && *again == *rows, "accuracy.csv: accepted rows do not read back equal");
  fuzz::probeStitchSpace(fuzz::putProfileFile("accuracy.csv", text));
  return 0;
}
