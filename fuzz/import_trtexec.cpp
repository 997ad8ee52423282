// trtexec --exportProfile JSON, and after a NUL byte the optional
// --exportLayerInfo JSON, as zoo-profile --import NAME=trtexec:FILE[,LAYERINFO]
// reads them (importTrtexecProfile), mapped onto testdata's digits dense model.
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/profile/import.h"

ZP_FUZZ_TARGET(import_trtexec) {
  using namespace zp;
  const std::string_view input = fuzz::asText(data, size);
  const size_t nul = input.find('\0');
  const auto profile = fuzz::writeInput(input.substr(0, nul), "trtexec_profile.json");
  std::optional<std::filesystem::path> layerInfo;
  if (nul != std::string_view::npos) layerInfo = fuzz::writeInput(input.substr(nul + 1), "trtexec_layerinfo.json");
  profile::ImportParams params{"digits", "dense", "npu"};
  (void)profile::importTrtexecProfile(profile, layerInfo, fuzz::digitsDenseModel(), params);
  return 0;
}
