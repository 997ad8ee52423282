// zoo.json: its reader (every field, type, enum, unknown field, unique id and
// referenced file checked) and its writer.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/util/error.h"
#include "libplan/util/json.h"
#include "libplan/zoo/zoo.h"

namespace zp::artifacts {

// Errors read "<file>: $.tasks[0].variants[1].onnx: <problem>".
Expected<zoo::Zoo> loadZoo(const std::filesystem::path& path);
Expected<zoo::Zoo> parseZoo(const std::string& text, const std::filesystem::path& path, bool checkFiles = true);

// The "processors" of a JSON file in zoo.json's form (another zoo.json, or an
// object holding only that list); other fields are not read. Profile files
// resolve against the file's folder.
Expected<std::vector<Processor>> loadProcessors(const std::filesystem::path& path);

// The manifest as JSON (the inverse of parseZoo).
Json zooToJson(const zoo::Zoo& zoo);

}  // namespace zp::artifacts
