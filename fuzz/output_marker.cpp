// The output marker (.zooplan-output) as every tool reads it before replacing
// a directory (util::inspectDestination), in a directory holding plan.json,
// manifest.json and notes.txt: the marker decides whether -o may replace the
// directory, so a marker that names a file the directory does not hold for
// that tool must never let it through.
#include <fstream>

#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/util/output_dir.h"
#include "libplan/util/json.h"

ZP_FUZZ_TARGET(output_marker) {
  using namespace zp;
  namespace fs = std::filesystem;
  static const fs::path dir = [] {
    const fs::path d = fuzz::scratchDir() / "out";
    fs::create_directories(d);
    for (const char* f : {"plan.json", "manifest.json", "notes.txt"}) std::ofstream(d / f) << "{}";
    return d;
  }();
  const auto text = fuzz::asText(data, size);
  fuzz::writeInput(text, "out/.zooplan-output");
  auto state = inspectDestination(dir, "plan-emit");
  if (!state.ok()) return 0;
  // Accepted: the marker is plan-emit's and lists notes.txt (the only file no bundle holds).
  const Json j = Json::parse(text, nullptr, false);
  bool listsNotes = false;
  if (j.is_object() && j.contains("entries") && j["entries"].is_array())
    for (const auto& e : j["entries"]) listsNotes = listsNotes || e == "notes.txt";
  fuzz::require(*state == DestinationState::EarlierRun && listsNotes && j.value("tool", "") == "plan-emit",
                "output marker: a directory with a file no earlier run wrote may be replaced");
  return 0;
}
