// ONNX Runtime profiling JSON as zoo-profile --import NAME=ort-json:FILE reads it
// (importOrtProfile), mapped onto testdata's digits dense model.
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/profile/import.h"

ZP_FUZZ_TARGET(import_ort) {
  using namespace zp;
  const auto file = fuzz::writeInput(fuzz::asText(data, size), "ort.json");
  profile::ImportParams params{"digits", "dense", "npu"};
  (void)profile::importOrtProfile(file, fuzz::digitsDenseModel(), params);
  return 0;
}
