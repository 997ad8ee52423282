// node_profile.csv (artifacts::parseNodeProfileCsv); accepted rows must read back
// equal after writing.
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/artifacts/node_profile_csv.h"

ZP_FUZZ_TARGET(node_profile_csv) {
  using namespace zp;
  auto rows = artifacts::parseNodeProfileCsv(fuzz::asText(data, size), "node_profile.csv");
  if (!rows.ok()) return 0;
  auto again = artifacts::parseNodeProfileCsv(artifacts::formatNodeProfileCsv(*rows), "node_profile.csv");
  fuzz::require(again.ok() && *again == *rows, "node_profile.csv: accepted rows do not read back equal");
  return 0;
}
