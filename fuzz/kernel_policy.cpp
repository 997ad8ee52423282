// The kernel policy file of plan-run --kernels FILE (runtime::parseKernelPolicy).
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/runtime/measure.h"

ZP_FUZZ_TARGET(kernel_policy) {
  using namespace zp;
  (void)runtime::parseKernelPolicy(fuzz::writeInput(fuzz::asText(data, size), "kernels.json").string());
  return 0;
}
