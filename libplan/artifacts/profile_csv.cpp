#include "libplan/artifacts/profile_csv.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "libplan/util/csv.h"
#include "libplan/util/file.h"
#include "libplan/util/validate.h"

namespace zp::artifacts {
using namespace profile;

namespace {

enum Col {
  kKind, kTask, kPosition, kVariant, kNode, kProcessor, kPolicy, kMedian, kP90, kRuns, kMemory,
  kFrom, kTo, kBytes, kSource, kNumCols
};
constexpr std::array<std::string_view, kNumCols> kColumns = {
    "kind", "task", "position", "variant", "node", "processor", "policy", "median_ms", "p90_ms", "runs",
    "memory_bytes", "from_processor", "to_processor", "bytes", "source"};

}  // namespace

std::string_view profileCsvHeader() {
  static const std::string header = [] {
    std::string h;
    for (size_t i = 0; i < kColumns.size(); ++i) {
      if (i) h += ',';
      h += kColumns[i];
    }
    return h;
  }();
  return header;
}

namespace {

// Numbers: plain decimal (or exponent) forms only; no "nan", "inf", hex or '+'.
std::optional<std::string> parseDouble(std::string_view cell, std::string_view col, double& out) {
  const char* b = cell.data();
  const char* e = b + cell.size();
  auto res = std::from_chars(b, e, out, std::chars_format::general);
  if (res.ec == std::errc::result_out_of_range || (res.ec == std::errc() && res.ptr == e && !std::isfinite(out)))
    return fmt::format("column '{}': '{}' is not a finite number", col, cell);
  if (res.ec != std::errc() || res.ptr != e) {
    std::string lower(cell);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower.find("nan") != std::string::npos || lower.find("inf") != std::string::npos)
      return fmt::format("column '{}': '{}' is not a finite number", col, cell);
    return fmt::format("column '{}': '{}' is not a number", col, cell);
  }
  if (out < 0) return fmt::format("column '{}': '{}' is negative", col, cell);
  if (out == 0) out = 0;  // -0
  return std::nullopt;
}

std::optional<std::string> parseInt(std::string_view cell, std::string_view col, int64_t& out) {
  const char* b = cell.data();
  const char* e = b + cell.size();
  auto res = std::from_chars(b, e, out);
  if (res.ec != std::errc() || res.ptr != e) return fmt::format("column '{}': '{}' is not an integer", col, cell);
  if (out < 0) return fmt::format("column '{}': '{}' is negative", col, cell);
  return std::nullopt;
}

}  // namespace

Expected<ProfileDb> parseProfileCsv(std::string_view text, const std::string& label) {
  ZP_ASSIGN_OR_RETURN(std::vector<CsvRecord> records, parseCsv(text, label));
  if (records.empty() || (records.size() == 1 && records[0].fields.size() == 1 && records[0].fields[0].empty()))
    return makeError("{}: empty file (expected the header {})", label, profileCsvHeader());
  const CsvRecord& header = records[0];
  std::array<int, kNumCols> colOf;
  colOf.fill(-1);
  for (size_t i = 0; i < header.fields.size(); ++i) {
    const std::string& name = header.fields[i];
    auto it = std::find(kColumns.begin(), kColumns.end(), name);
    if (it == kColumns.end())
      return makeError("{}:{}: header: unknown column '{}' (expected {})", label, header.line, name,
                       profileCsvHeader());
    int c = static_cast<int>(it - kColumns.begin());
    if (colOf[static_cast<size_t>(c)] >= 0)
      return makeError("{}:{}: header: column '{}' appears twice", label, header.line, name);
    colOf[static_cast<size_t>(c)] = static_cast<int>(i);
  }
  std::vector<std::string> missing;
  for (size_t c = 0; c < kColumns.size(); ++c)
    if (colOf[c] < 0) missing.emplace_back(kColumns[c]);
  if (!missing.empty())
    return makeError("{}:{}: header: missing column{} '{}'", label, header.line, missing.size() > 1 ? "s" : "",
                     fmt::join(missing, "', '"));

  ProfileDb db;
  std::map<ProfileRow::Key, int> firstLine;
  for (size_t r = 1; r < records.size(); ++r) {
    const CsvRecord& rec = records[r];
    if (rec.fields.size() == 1 && rec.fields[0].empty()) continue;  // blank line
    if (rec.fields.size() != header.fields.size())
      return makeError("{}:{}: {} cells, the header has {}", label, rec.line, rec.fields.size(), header.fields.size());
    auto cell = [&](Col c) -> const std::string& { return rec.fields[static_cast<size_t>(colOf[c])]; };
    auto fail = [&](const std::string& msg) { return makeError("{}:{}: {}", label, rec.line, msg); };

    ProfileRow row;
    auto kind = parseRowKind(cell(kKind));
    if (!kind)
      return fail(fmt::format("column 'kind': unknown kind '{}' (expected subgraph, node, transition or group)", cell(kKind)));
    row.kind = *kind;
    row.task = cell(kTask);
    row.variant = cell(kVariant);
    row.node = cell(kNode);
    row.processor = cell(kProcessor);
    row.policy = cell(kPolicy);
    if (row.policy.empty() && row.kind != RowKind::Transition) row.policy = std::string(kDefaultPolicy);
    row.fromProcessor = cell(kFrom);
    row.toProcessor = cell(kTo);
    row.source = cell(kSource);
    int64_t iv = 0;
    if (!cell(kPosition).empty()) {
      if (auto p = parseInt(cell(kPosition), "position", iv)) return fail(*p);
      if (iv > std::numeric_limits<int>::max()) return fail(fmt::format("column 'position': {} is too large", iv));
      row.position = static_cast<int>(iv);
    }
    if (cell(kMedian).empty()) return fail("column 'median_ms' is required");
    if (auto p = parseDouble(cell(kMedian), "median_ms", row.medianMs)) return fail(*p);
    if (!cell(kP90).empty()) {
      double v = 0;
      if (auto p = parseDouble(cell(kP90), "p90_ms", v)) return fail(*p);
      row.p90Ms = v;
    }
    if (!cell(kRuns).empty()) {
      if (auto p = parseInt(cell(kRuns), "runs", iv)) return fail(*p);
      row.runs = iv;
    }
    if (!cell(kMemory).empty()) {
      if (auto p = parseInt(cell(kMemory), "memory_bytes", iv)) return fail(*p);
      row.memoryBytes = iv;
    }
    if (!cell(kBytes).empty()) {
      if (auto p = parseInt(cell(kBytes), "bytes", iv)) return fail(*p);
      row.bytes = iv;
    }
    if (auto p = row.problem()) return fail(*p);
    auto key = row.key();
    auto [it, inserted] = firstLine.emplace(key, rec.line);
    if (!inserted) return fail(fmt::format("duplicate row (same key as line {})", it->second));
    db.add(std::move(row));
  }
  return db;
}

Expected<ProfileDb> readProfileCsv(const std::filesystem::path& path) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  return parseProfileCsv(text, path.string());
}

std::string formatProfileCsv(const ProfileDb& db) {
  std::string out(profileCsvHeader());
  out += '\n';
  auto opt = [](const auto& o) -> std::string {
    if (!o) return "";
    if constexpr (std::is_same_v<std::decay_t<decltype(*o)>, double>)
      return formatNumber(*o);
    else
      return std::to_string(*o);
  };
  for (const ProfileRow* r : db.rows()) {
    std::array<std::string, kNumCols> cells = {
        std::string(rowKindName(r->kind)), r->task, opt(r->position), r->variant, r->node, r->processor,
        r->policy, formatNumber(r->medianMs), opt(r->p90Ms), opt(r->runs), opt(r->memoryBytes),
        r->fromProcessor, r->toProcessor, opt(r->bytes), r->source};
    out += csvLine(std::vector<std::string>(cells.begin(), cells.end()));
  }
  return out;
}

Status writeProfileCsv(const ProfileDb& db, const std::filesystem::path& path) {
  return writeFileAtomic(path, formatProfileCsv(db));
}

}  // namespace zp::artifacts
