#include "libplan/artifacts/features_csv.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "libplan/util/csv.h"
#include "libplan/util/file.h"
#include "libplan/util/validate.h"
#include "libplan/zoo/stitch_manifest.h"

namespace zp::artifacts {

namespace {

// A finite number in [lo, hi], or why not.
std::optional<std::string> numberCell(const std::string& cell, const char* column, double lo, double hi, double& out) {
  auto r = std::from_chars(cell.data(), cell.data() + cell.size(), out);
  if (r.ec != std::errc() || r.ptr != cell.data() + cell.size() || !std::isfinite(out) || out < lo || out > hi)
    return fmt::format("column '{}': '{}' is not a number in [{}, {}]", column, cell, lo, hi);
  return std::nullopt;
}

}  // namespace

Expected<std::vector<FeatureRow>> parseFeaturesCsv(std::string_view text, const std::string& label) {
  ZP_ASSIGN_OR_RETURN(std::vector<CsvRecord> records, parseCsv(text, label));
  if (records.empty() || fmt::format("{}", fmt::join(records[0].fields, ",")) != kFeaturesCsvHeader)
    return makeError("{}: unexpected header (expected {})", label, kFeaturesCsvHeader);
  std::vector<FeatureRow> out;
  for (size_t r = 1; r < records.size(); ++r) {
    const CsvRecord& rec = records[r];
    if (rec.blank()) continue;
    auto fail = [&](const std::string& msg) { return makeError("{}:{}: {}", label, rec.line, msg); };
    const auto& f = rec.fields;
    if (f.size() != 11) return fail(fmt::format("{} cells, the header has 11", f.size()));
    FeatureRow row;
    if (auto p = idProblem(f[0])) return fail("column 'task': " + *p);
    row.task = f[0];
    int64_t position = 0;
    auto pr = std::from_chars(f[1].data(), f[1].data() + f[1].size(), position);
    if (pr.ec != std::errc() || pr.ptr != f[1].data() + f[1].size() || integerProblem(position, 0, zoo::kMaxPositions - 1))
      return fail(fmt::format("column 'position': '{}' is not a position", f[1]));
    row.position = static_cast<int>(position);
    if (auto p = idProblem(f[2])) return fail("column 'variant': " + *p);
    row.variant = f[2];
    row.node = f[3];  // the model's own name; may be empty
    row.opType = f[4];
    row.kernel = f[5];
    const double big = std::numeric_limits<double>::max();
    if (auto p = numberCell(f[6], "flops", 0, big, row.flops)) return fail(*p);
    if (auto p = numberCell(f[7], "weight_sparsity", 0, 1, row.weightSparsity)) return fail(*p);
    if (auto p = numberCell(f[8], "activation_sparsity", 0, 1, row.activationSparsity)) return fail(*p);
    if (auto p = numberCell(f[9], "intensity", 0, big, row.intensity)) return fail(*p);
    if (auto p = numberCell(f[10], "ms", 0, kMaxLatencyMs, row.ms)) return fail(*p);
    out.push_back(std::move(row));
  }
  return out;
}

Expected<std::vector<FeatureRow>> readFeaturesCsv(const std::filesystem::path& path) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  return parseFeaturesCsv(text, path.string());
}

std::string formatFeaturesCsv(const std::vector<FeatureRow>& rows) {
  std::string out = std::string(kFeaturesCsvHeader) + "\n";
  for (const auto& r : rows)
    out += csvLine({r.task, std::to_string(r.position), r.variant, r.node, r.opType, r.kernel, formatNumber(r.flops),
                    formatNumber(r.weightSparsity), formatNumber(r.activationSparsity), formatNumber(r.intensity),
                    formatNumber(r.ms)});
  return out;
}

}  // namespace zp::artifacts
