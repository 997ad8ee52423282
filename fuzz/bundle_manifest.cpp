// A bundle's manifest.json as plan-run and plan-emit read it
// (artifacts::readBundleManifest); an accepted manifest must read back equal
// from its own JSON, and every input path it records must resolve.
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/artifacts/bundle_manifest.h"

ZP_FUZZ_TARGET(bundle_manifest) {
  using namespace zp;
  std::filesystem::create_directories(fuzz::scratchDir() / "bundle");
  fuzz::writeInput(fuzz::asText(data, size), "bundle/manifest.json");
  const auto bundle = fuzz::scratchDir() / "bundle";
  auto m = artifacts::readBundleManifest(bundle);
  if (!m.ok()) return 0;
  auto again = artifacts::manifestFromJson(artifacts::toJson(*m), "manifest.json");
  fuzz::require(again.ok() && *again == *m, "manifest.json: an accepted manifest does not read back equal");
  for (const auto& input : m->inputs) (void)artifacts::inputPath(bundle, input);
  return 0;
}
