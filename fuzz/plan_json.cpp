// plan.json as plan-emit and plan-run read it (artifacts::readPlan); an
// accepted plan must read back equal from its canonical text.
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/artifacts/plan_json.h"

ZP_FUZZ_TARGET(plan_json) {
  using namespace zp;
  auto plan = artifacts::readPlan(fuzz::writeInput(fuzz::asText(data, size), "plan.json"));
  if (!plan.ok()) return 0;
  const auto again = artifacts::readPlan(fuzz::writeInput(artifacts::planToText(*plan), "plan.json"));
  fuzz::require(again.ok() && *again == *plan, "plan.json: an accepted plan does not read back equal");
  return 0;
}
