// latency_model.json: the reader on its own (models that read back equal after
// writing), then as plan-solve reads it in a profile directory
// (drivers::readStitchSpace, the fixture around it, report.json recording its hash).
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "fuzz/stitch_space_probe.h"
#include "libplan/artifacts/latency_model_json.h"

ZP_FUZZ_TARGET(latency_model_json) {
  using namespace zp;
  const auto text = fuzz::asText(data, size);
  auto models = artifacts::parseLatencyModel(text, "latency_model.json");
  // What the parser refuses, readStitchSpace refuses the same way: only accepted text goes on.
  if (!models.ok()) return 0;
  const std::string written = artifacts::formatLatencyModel(*models);
  auto again = artifacts::parseLatencyModel(written, "latency_model.json");
  fuzz::require(again.ok() && artifacts::formatLatencyModel(*again) == written,
                "latency_model.json: a written model does not read back to the same bytes");
  fuzz::probeStitchSpace(fuzz::putProfileFile("latency_model.json", text));
  return 0;
}
