// .npy files as plan-run --input and zoo-profile's datasets read them
// (readNpy); an accepted array must read back equal from its own encoding.
#include <cstring>

#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/runtime/npy.h"

ZP_FUZZ_TARGET(npy) {
  using namespace zp;
  auto t = runtime::readNpy(fuzz::writeInput(fuzz::asText(data, size), "input.npy"));
  if (!t.ok()) return 0;
  auto again = runtime::readNpy(fuzz::writeInput(runtime::encodeNpy(*t), "input.npy"));
  fuzz::require(again.ok() && again->dtype == t->dtype && again->shape == t->shape && again->bytes() == t->bytes() &&
                    (t->bytes() == 0 || std::memcmp(again->data, t->data, t->bytes()) == 0),
                ".npy: an accepted array does not read back equal");
  return 0;
}
