// zoo.json as zoo-stitch reads it (artifacts::parseZoo), with its referenced
// files resolved against testdata/digits; an accepted zoo must read back from
// its own JSON.
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/artifacts/zoo_json.h"

ZP_FUZZ_TARGET(zoo_json) {
  using namespace zp;
  const auto path = fuzz::sourceDir() / "testdata/digits/zoo.json";
  auto zoo = artifacts::parseZoo(std::string(fuzz::asText(data, size)), path);
  if (!zoo.ok()) return 0;
  const Json j = artifacts::zooToJson(*zoo);
  auto again = artifacts::parseZoo(j.dump(), path);
  fuzz::require(again.ok() && artifacts::zooToJson(*again) == j, "zoo.json: an accepted zoo does not read back");
  return 0;
}
