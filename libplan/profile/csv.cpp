#include "libplan/profile/csv.h"

namespace zp::profile {

Expected<std::vector<CsvRecord>> parseCsv(std::string_view text, char sep, const std::string& label) {
  std::vector<CsvRecord> out;
  size_t i = 0;
  int line = 1;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") i = 3;  // UTF-8 byte order mark
  while (i < text.size()) {
    CsvRecord rec;
    rec.line = line;
    std::string field;
    bool endOfRecord = false;
    while (!endOfRecord) {
      field.clear();
      if (i < text.size() && text[i] == '"') {
        int startLine = line;
        ++i;
        for (;;) {
          if (i >= text.size()) return makeError("{}:{}: unterminated quoted field", label, startLine);
          char c = text[i++];
          if (c == '"') {
            if (i < text.size() && text[i] == '"') {
              field += '"';
              ++i;
            } else {
              break;
            }
          } else {
            if (c == '\n') ++line;
            field += c;
          }
        }
        if (i < text.size() && text[i] != sep && text[i] != '\n' && text[i] != '\r')
          return makeError("{}:{}: text after a closing quote", label, line);
      } else {
        while (i < text.size() && text[i] != sep && text[i] != '\n' && text[i] != '\r') field += text[i++];
      }
      rec.fields.push_back(field);
      if (i >= text.size()) {
        endOfRecord = true;
      } else if (text[i] == sep) {
        ++i;
      } else {
        if (text[i] == '\r') ++i;
        if (i < text.size() && text[i] == '\n') ++i;
        ++line;
        endOfRecord = true;
      }
    }
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

}  // namespace zp::profile
