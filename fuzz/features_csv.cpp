// features.csv (artifacts::parseFeaturesCsv); accepted rows must read back
// equal after writing.
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/artifacts/features_csv.h"

ZP_FUZZ_TARGET(features_csv) {
  using namespace zp;
  auto rows = artifacts::parseFeaturesCsv(fuzz::asText(data, size), "features.csv");
  if (!rows.ok()) return 0;
  auto again = artifacts::parseFeaturesCsv(artifacts::formatFeaturesCsv(*rows), "features.csv");
  fuzz::require(again.ok() && *again == *rows, "features.csv: accepted rows do not read back equal");
  return 0;
}
