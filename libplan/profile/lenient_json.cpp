#include "libplan/profile/lenient_json.h"

#include <cctype>

#include <fmt/format.h>

#include "libplan/util/json_reader.h"

namespace zp::profile {

namespace {

bool isHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// Does the quote at text[i] close the string? Yes when the next non-blank character
// is a JSON delimiter after a string, a line end, or the end of the text.
bool closesString(std::string_view text, size_t i) {
  size_t j = i + 1;
  while (j < text.size() && (text[j] == ' ' || text[j] == '\t')) ++j;
  if (j >= text.size()) return true;
  char c = text[j];
  return c == ':' || c == ',' || c == '}' || c == ']' || c == '\n' || c == '\r';
}

}  // namespace

std::string repairJsonStrings(std::string_view text, const JsonRepair& options) {
  std::string out;
  out.reserve(text.size() + 64);
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (!inString) {
      out += c;
      if (c == '"') inString = true;
      continue;
    }
    if (c == '"') {
      if (closesString(text, i)) {
        out += '"';
        inString = false;
      } else {
        out += "\\\"";
      }
    } else if (c == '\\') {
      bool validEscape = false;
      if (!options.backslashesLiteral && i + 1 < text.size()) {
        char n = text[i + 1];
        if (n == '\\' || n == '/' || n == 'b' || n == 'f' || n == 'n' || n == 'r' || n == 't') {
          validEscape = true;
        } else if (n == '"') {
          // \" is an escaped quote unless it is the string's end (a name ending in '\').
          validEscape = !closesString(text, i + 1);
        } else if (n == 'u') {
          validEscape = i + 5 < text.size() && isHex(text[i + 2]) && isHex(text[i + 3]) && isHex(text[i + 4]) &&
                        isHex(text[i + 5]);
        }
      }
      if (validEscape) {
        out += c;
        out += text[++i];
      } else {
        out += "\\\\";
      }
    } else if (static_cast<unsigned char>(c) < 0x20) {
      if (c == '\n') {  // a string never spans lines in these files: the quote was missing
        out += '"';
        out += c;
        inString = false;
      } else {
        out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
      }
    } else {
      out += c;
    }
  }
  return out;
}

Expected<Json> parseLenientJson(std::string_view text, const std::string& label, const JsonRepair& options,
                                bool* repaired) {
  if (repaired) *repaired = false;
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded()) return j;
  std::string fixed = repairJsonStrings(text, options);
  try {
    j = Json::parse(fixed);
  } catch (const Json::exception& e) {  // syntax, and numbers beyond double's range (out_of_range.406)
    return makeError("{}: not valid JSON (even after repairing unescaped names): {}", label, jsonExceptionText(e));
  }
  if (repaired) *repaired = true;
  return j;
}

}  // namespace zp::profile
