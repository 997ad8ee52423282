// cold_profile.csv (artifacts::parseColdProfileCsv); an accepted profile must
// read back equal after writing, and its writing must be a fixed point.
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/artifacts/cold_profile_csv.h"

ZP_FUZZ_TARGET(cold_profile_csv) {
  using namespace zp;
  auto p = artifacts::parseColdProfileCsv(fuzz::asText(data, size), "cold_profile.csv");
  if (!p.ok()) return 0;
  const std::string text = artifacts::formatColdProfileCsv(*p);
  auto again = artifacts::parseColdProfileCsv(text, "cold_profile.csv");
  fuzz::require(again.ok() && *again == *p, "cold_profile.csv: an accepted profile does not read back equal");
  fuzz::require(artifacts::formatColdProfileCsv(*again) == text, "cold_profile.csv: writing is not a fixed point");
  return 0;
}
