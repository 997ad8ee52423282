// slo.json as plan-solve --slo reads it (artifacts::readSloFile) for a profile
// of the tasks "digits" and "kws"; accepted configurations must read back
// equal from their own JSON.
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/artifacts/slo_json.h"

ZP_FUZZ_TARGET(slo_json) {
  using namespace zp;
  const std::vector<std::string> tasks = {"digits", "kws"};
  auto configs = artifacts::readSloFile(fuzz::writeInput(fuzz::asText(data, size), "slo.json"), tasks);
  if (!configs.ok()) return 0;
  const Json j = artifacts::sloFileJson(*configs);
  auto again = artifacts::readSloFile(fuzz::writeInput(j.dump(), "slo.json"), tasks);
  fuzz::require(again.ok() && artifacts::sloFileJson(*again) == j, "slo.json: accepted configurations do not read back");
  return 0;
}
