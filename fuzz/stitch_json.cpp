// stitch.json as zoo-profile and plan-solve read it
// (artifacts::loadStitchManifest); an accepted manifest must read back from
// its own JSON.
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/artifacts/stitch_json.h"

ZP_FUZZ_TARGET(stitch_json) {
  using namespace zp;
  fuzz::writeInput(fuzz::asText(data, size), "stitch.json");
  auto m = artifacts::loadStitchManifest(fuzz::scratchDir());
  if (!m.ok()) return 0;
  const Json j = artifacts::toJson(*m);
  auto again = artifacts::stitchManifestFromJson(j, "stitch.json");
  fuzz::require(again.ok() && artifacts::toJson(*again) == j, "stitch.json: an accepted manifest does not read back");
  return 0;
}
