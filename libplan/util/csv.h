// CSV reading and writing (RFC 4180): fields separated by `sep`, optionally
// double-quoted (a quote inside a quoted field is doubled; quoted fields may
// span lines); "\n" or "\r\n" ends a record. Every CSV zooplan reads or writes
// goes through this: the profile, accuracy and features CSVs, the group rows
// and contention CSVs of a workload, OpenVINO's counters (';'-separated).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "libplan/util/error.h"

namespace zp {

struct CsvRecord {
  int line = 0;  // 1-based line where the record starts
  std::vector<std::string> fields;
  bool blank() const { return fields.size() == 1 && fields[0].empty(); }  // an empty line
};

struct CsvOptions {
  char sep = ',';
  bool trim = false;          // strip spaces and tabs around fields (outside quotes)
  bool skipComments = false;  // drop lines that start with '#'
  bool skipBlank = false;     // drop empty lines (else they are records with one empty field)
};

// A trailing line end does not make an extra record; a UTF-8 byte order mark is
// skipped. Errors ("label:LINE: ..."): an unterminated quoted field, text after
// a closing quote.
Expected<std::vector<CsvRecord>> parseCsv(std::string_view text, const std::string& label, const CsvOptions& options = {});

// The field as written in a CSV: quoted when it holds sep, a quote, a line end,
// or leading/trailing spaces.
std::string csvQuote(std::string_view field, char sep = ',');

// One record: each field through csvQuote, joined by sep, ended by "\n".
std::string csvLine(const std::vector<std::string>& fields, char sep = ',');

// The shortest decimal form that reads back to the same double ("0.25", "1e-07";
// -0 as "0"): numbers in CSVs zooplan writes, so rewriting a file gives the same bytes.
std::string formatNumber(double v);

}  // namespace zp
