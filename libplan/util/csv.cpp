#include "libplan/util/csv.h"

#include <cassert>
#include <charconv>
#include <cmath>

namespace zp {

namespace {

bool isBlankChar(char c) { return c == ' ' || c == '\t'; }
bool endsField(char c, char sep) { return c == sep || c == '\n' || c == '\r'; }

// Reads one field starting at text[i]; leaves i on the separator or line end
// after it (or at the end of the text).
Status readField(std::string_view text, size_t& i, int& line, const std::string& label, const CsvOptions& o,
                 std::string& field) {
  field.clear();
  if (o.trim)
    while (i < text.size() && isBlankChar(text[i])) ++i;
  if (i < text.size() && text[i] == '"') {
    const int startLine = line;
    ++i;
    for (;;) {
      if (i >= text.size()) return makeError("{}:{}: unterminated quoted field", label, startLine);
      const char c = text[i++];
      if (c != '"') {
        if (c == '\n') ++line;
        field += c;
      } else if (i < text.size() && text[i] == '"') {
        field += '"';
        ++i;
      } else {
        break;
      }
    }
    if (o.trim)
      while (i < text.size() && isBlankChar(text[i])) ++i;
    if (i < text.size() && !endsField(text[i], o.sep)) return makeError("{}:{}: text after a closing quote", label, line);
    return {};
  }
  while (i < text.size() && !endsField(text[i], o.sep)) field += text[i++];
  if (o.trim)
    while (!field.empty() && isBlankChar(field.back())) field.pop_back();
  return {};
}

// Skips the rest of the line at text[i] (its line end included).
void skipLine(std::string_view text, size_t& i, int& line) {
  while (i < text.size() && text[i] != '\n') ++i;
  if (i < text.size()) ++i;
  ++line;
}

}  // namespace

Expected<std::vector<CsvRecord>> parseCsv(std::string_view text, const std::string& label, const CsvOptions& o) {
  std::vector<CsvRecord> out;
  size_t i = 0;
  int line = 1;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") i = 3;  // UTF-8 byte order mark
  while (i < text.size()) {
    if (o.skipComments && text[i] == '#') {
      skipLine(text, i, line);
      continue;
    }
    CsvRecord rec;
    rec.line = line;
    std::string field;
    for (bool endOfRecord = false; !endOfRecord;) {
      ZP_TRY(readField(text, i, line, label, o, field));
      rec.fields.push_back(field);
      if (i >= text.size()) {
        endOfRecord = true;
      } else if (text[i] == o.sep) {
        ++i;
      } else {
        if (text[i] == '\r') ++i;
        if (i < text.size() && text[i] == '\n') ++i;
        ++line;
        endOfRecord = true;
      }
    }
    if (o.skipBlank && rec.blank()) continue;
    out.push_back(std::move(rec));
  }
  return out;
}

std::string csvQuote(std::string_view field, char sep) {
  bool quote = field.find_first_of(std::string{sep, '"', '\n', '\r'}) != std::string_view::npos ||
               (!field.empty() && (field.front() == ' ' || field.back() == ' '));
  if (!quote) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string csvLine(const std::vector<std::string>& fields, char sep) {
  std::string out;
  for (size_t k = 0; k < fields.size(); ++k) {
    if (k) out += sep;
    out += csvQuote(fields[k], sep);
  }
  out += '\n';
  return out;
}

std::string formatNumber(double v) {
  assert(std::isfinite(v));
  if (v == 0) return "0";  // also turns -0 into 0
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  assert(res.ec == std::errc());
  return std::string(buf, res.ptr);
}

}  // namespace zp
