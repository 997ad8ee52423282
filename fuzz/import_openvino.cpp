// OpenVINO benchmark_app counters CSV as zoo-profile --import
// NAME=openvino-csv:FILE reads it (importOpenVinoCounters), mapped onto
// testdata's digits dense model.
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/profile/import.h"

ZP_FUZZ_TARGET(import_openvino) {
  using namespace zp;
  const auto file = fuzz::writeInput(fuzz::asText(data, size), "openvino.csv");
  profile::ImportParams params{"digits", "dense", "npu"};
  (void)profile::importOpenVinoCounters(file, fuzz::digitsDenseModel(), params);
  return 0;
}
