// workload.json as plan-solve --mode concurrent reads it: parsed
// (artifacts::parseWorkloadJson), then the files it names resolved against
// testdata/concurrent and loaded into the scheduling problem
// (drivers::resolveWorkload: contention CSV, group rows CSVs, models grouped).
#include "drivers/concurrent_flow/workload.h"
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/artifacts/workload_json.h"

ZP_FUZZ_TARGET(workload_json) {
  using namespace zp;
  const auto base = fuzz::sourceDir() / "testdata/concurrent";
  auto spec = artifacts::parseWorkloadJson(std::string(fuzz::asText(data, size)), "workload.json", base);
  if (!spec.ok()) return 0;
  (void)drivers::resolveWorkload(*spec, base / "workload.json");
  return 0;
}
