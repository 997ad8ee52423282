// Canonical JSON output: sorted keys (nlohmann::json's std::map objects),
// two-space indent, stable float formatting, trailing newline. Every artifact
// that must be byte-identical across runs is written through this.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace zp {

using Json = nlohmann::json;

// Floats are rounded to 9 significant digits before printing, so values that
// went through different but equivalent arithmetic still print the same.
std::string canonicalJson(const Json& j);

// The same layout with every float printed in full (the shortest form that
// reads back to the same double): for artifacts whose numbers are inputs to a
// later computation (latency_model.json), so the reader computes with exactly
// what the writer had.
std::string canonicalJsonExact(const Json& j);

// Rounds a double to `digits` significant digits (stable printing).
double roundSig(double v, int digits = 9);

}  // namespace zp
