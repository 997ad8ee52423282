// What the harnesses share: the input as text, a private scratch directory for
// readers that only take a path, the source tree's test data, and the profile
// directory fixture that several harnesses read around the file they fuzz.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "libplan/graph/analysis.h"

namespace zp::fuzz {

inline std::string_view asText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The source tree (testdata/, fuzz/fixtures/), fixed at build time.
std::filesystem::path sourceDir();

// A directory private to this process, removed when it exits.
const std::filesystem::path& scratchDir();

// Writes `bytes` to scratchDir()/name (replacing what was there) and returns the path:
// the "bytes -> file -> reader" step for readers that take a path.
std::filesystem::path writeInput(std::string_view bytes, const std::string& name);

// A property the readers promise (a written artifact reads back the same) does
// not hold: prints `what` and aborts, so libFuzzer keeps the input as a crash.
void require(bool ok, const char* what);

// testdata/digits/models/dense.onnx, loaded once: the model importers map
// profiler names onto.
const graph::GraphView& digitsDenseModel();

// A profile directory as plan-solve reads it: scratchDir()/profile/prof holds a
// copy of fuzz/fixtures/profile/prof (report.json, profile.csv, accuracy.csv,
// latency_model.json) beside the fixture's stitch directory (st/) and zoo (two
// processors, three digits variants, two positions) whose models are
// testdata's. Set up on first use; returns the prof directory.
std::filesystem::path profileFixture();

// Puts `bytes` in the fixture as `file` ("profile.csv", "accuracy.csv",
// "latency_model.json" in prof/, or "stitch.json" in st/) and rewrites report.json to record the hash of these
// bytes, as zoo-profile would have: the reader then gets past its consistency
// check to the parsing behind it (the check itself is fuzzed by report_json).
// Returns the prof directory.
std::filesystem::path putProfileFile(const std::string& file, std::string_view bytes);

}  // namespace zp::fuzz
