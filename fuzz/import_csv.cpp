// The generic profile CSV as zoo-profile --import NAME=csv:FILE@TASK/VARIANT
// reads it: parsed (artifacts::parseProfileCsv), then its rows taken for one
// task, variant and processor (profile::importProfileRows), node rows mapped
// onto testdata's digits dense model.
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/artifacts/profile_csv.h"
#include "libplan/profile/import.h"

ZP_FUZZ_TARGET(import_csv) {
  using namespace zp;
  auto db = artifacts::parseProfileCsv(fuzz::asText(data, size), "import.csv");
  if (!db.ok()) return 0;
  profile::ImportParams params{"digits", "dense", "npu"};
  (void)profile::importProfileRows(*db, "import.csv", &fuzz::digitsDenseModel(), params);
  return 0;
}
