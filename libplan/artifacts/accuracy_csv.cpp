#include "libplan/artifacts/accuracy_csv.h"
#include "libplan/zoo/stitch_manifest.h"

#include <charconv>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "libplan/util/csv.h"
#include "libplan/util/file.h"
#include "libplan/util/validate.h"

namespace zp::artifacts {

namespace {

std::optional<double> fraction(const std::string& cell) {
  double v = 0;
  auto r = std::from_chars(cell.data(), cell.data() + cell.size(), v);
  if (r.ec != std::errc() || r.ptr != cell.data() + cell.size() || !(v >= 0.0 && v <= 1.0)) return std::nullopt;
  return v;
}

}  // namespace

Expected<std::vector<AccuracyCsvRow>> parseAccuracyCsvRows(std::string_view text, const std::string& label) {
  ZP_ASSIGN_OR_RETURN(std::vector<CsvRecord> records, parseCsv(text, label));
  if (records.empty() || fmt::format("{}", fmt::join(records[0].fields, ",")) != kAccuracyCsvHeader)
    return makeError("{}: unexpected header (expected {})", label, kAccuracyCsvHeader);
  std::vector<AccuracyCsvRow> out;
  std::set<std::pair<std::string, std::string>> seen;
  for (size_t r = 1; r < records.size(); ++r) {
    const CsvRecord& rec = records[r];
    if (rec.fields.size() == 1 && rec.fields[0].empty()) continue;  // blank line
    auto fail = [&](const std::string& msg) { return makeError("{}:{}: {}", label, rec.line, msg); };
    if (rec.fields.size() != 6) return fail(fmt::format("{} cells, the header has 6", rec.fields.size()));
    const auto& f = rec.fields;
    if (auto p = idProblem(f[0])) return fail("column 'task': " + *p);
    if (auto p = zoo::combinationIdProblem(f[1])) return fail("column 'combination': " + *p);
    AccuracyRow row;
    if (f[2] != "original" && f[2] != "stitched")
      return fail(fmt::format("column 'kind': '{}' is not original or stitched", f[2]));
    row.original = f[2] == "original";
    if (!f[3].empty()) {
      row.measured = fraction(f[3]);
      if (!row.measured) return fail(fmt::format("column 'measured_accuracy': '{}' is not a number in [0, 1]", f[3]));
    }
    auto predicted = fraction(f[4]);
    if (!predicted) return fail(fmt::format("column 'predicted_accuracy': '{}' is not a number in [0, 1]", f[4]));
    row.predicted = *predicted;
    if (f[5] != "0" && f[5] != "1") return fail(fmt::format("column 'in_training_sample': '{}' is not 0 or 1", f[5]));
    row.inTrainingSample = f[5] == "1";
    if (!seen.emplace(f[0], f[1]).second) return fail(fmt::format("a second row for {}/{}", f[0], f[1]));
    out.push_back(AccuracyCsvRow{f[0], f[1], row});
  }
  return out;
}

Expected<AccuracyTable> parseAccuracyCsv(std::string_view text, const std::string& label) {
  ZP_ASSIGN_OR_RETURN(auto rows, parseAccuracyCsvRows(text, label));
  AccuracyTable out;
  for (auto& r : rows) out.emplace(std::make_pair(std::move(r.task), std::move(r.combination)), r.row);
  return out;
}

Expected<AccuracyTable> readAccuracyCsv(const std::filesystem::path& path) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  return parseAccuracyCsv(text, path.string());
}

std::string formatAccuracyCsv(const std::vector<AccuracyCsvRow>& rows) {
  std::string out = std::string(kAccuracyCsvHeader) + "\n";
  for (const auto& r : rows)
    out += csvLine({r.task, r.combination, r.row.original ? "original" : "stitched",
                    r.row.measured ? formatNumber(*r.row.measured) : "", formatNumber(r.row.predicted),
                    r.row.inTrainingSample ? "1" : "0"});
  return out;
}

}  // namespace zp::artifacts
