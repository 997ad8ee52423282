// plan.pb as plan-run reads a bundle (artifacts::parsePlanPb); an accepted
// plan must read back equal from its deterministic serialization.
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/artifacts/plan_pb.h"

ZP_FUZZ_TARGET(plan_pb) {
  using namespace zp;
  auto plan = artifacts::parsePlanPb(fuzz::asText(data, size), "plan.pb");
  if (!plan.ok()) return 0;
  const auto again = artifacts::parsePlanPb(artifacts::serializePlanPb(*plan), "plan.pb");
  fuzz::require(again.ok() && *again == *plan, "plan.pb: an accepted plan does not read back equal");
  return 0;
}
