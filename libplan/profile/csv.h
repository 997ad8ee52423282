// Minimal RFC 4180 CSV: fields separated by `sep`, optionally double-quoted (a quote
// inside a quoted field is doubled; quoted fields may span lines); "\n" or "\r\n" ends a record.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "libplan/util/error.h"

namespace zp::profile {

struct CsvRecord {
  int line = 0;  // 1-based line where the record starts
  std::vector<std::string> fields;
};

// A trailing line end does not make an extra record. Errors: an unterminated quoted
// field, text after a closing quote ("label:LINE: ...").
Expected<std::vector<CsvRecord>> parseCsv(std::string_view text, char sep, const std::string& label);

// The field as written in a CSV: quoted when it holds sep, a quote, a line end, or
// leading/trailing spaces.
std::string csvQuote(std::string_view field, char sep);

}  // namespace zp::profile
