#include "libplan/artifacts/node_profile_csv.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "libplan/util/csv.h"
#include "libplan/util/file.h"
#include "libplan/util/validate.h"

namespace zp::artifacts {
namespace {

constexpr size_t kNodeProfileColumns = 27;
constexpr size_t kColumnsNoActivation = 24;

std::optional<std::string> numberCell(const std::string& cell, const char* column, double lo, double hi, double& out) {
  auto r = std::from_chars(cell.data(), cell.data() + cell.size(), out);
  if (r.ec != std::errc() || r.ptr != cell.data() + cell.size() || !std::isfinite(out) || out < lo || out > hi)
    return fmt::format("column '{}': '{}' is not a number in [{}, {}]", column, cell, lo, hi);
  return std::nullopt;
}

std::optional<std::string> integerCell(const std::string& cell, const char* column, int64_t lo, int64_t hi, int64_t& out) {
  auto r = std::from_chars(cell.data(), cell.data() + cell.size(), out);
  if (r.ec != std::errc() || r.ptr != cell.data() + cell.size() || out < lo || out > hi)
    return fmt::format("column '{}': '{}' is not an integer in [{}, {}]", column, cell, lo, hi);
  return std::nullopt;
}

// The figures from cell `at` on into the row, or why not; `context`: the file has
// the cache-context columns.
std::optional<std::string> parseFigures(const std::vector<std::string>& f, size_t at, bool context, NodeProfileRow& row) {
  auto& o = row.features;
  const int64_t bigInt = int64_t{1} << 40;
  const double big = std::numeric_limits<double>::max();
  struct IntCol { const char* name; int64_t* out; };
  const IntCol ints[] = {{"batch", &o.batch},         {"in_channels", &o.inChannels}, {"in_h", &o.inH},
                         {"in_w", &o.inW},             {"out_channels", &o.outChannels}, {"kernel_h", &o.kernelH},
                         {"kernel_w", &o.kernelW},     {"stride", &o.stride},          {"groups", &o.groups}};
  for (size_t i = 0; i < std::size(ints); ++i)
    if (auto p = integerCell(f[at + i], ints[i].name, 0, bigInt, *ints[i].out)) return p;
  struct NumCol { const char* name; double hi; double* out; };
  std::vector<NumCol> nums = {{"flops", big, &o.flops},
                              {"intensity", big, &o.intensity},
                              {"bytes", big, &o.bytes},
                              {"weight_sparsity", 1, &o.weightSparsity},
                              {"input_sparsity", 1, &o.inputSparsity},
                              {"output_sparsity", 1, &o.outputSparsity}};
  if (context) nums.insert(nums.end(), {{"input_reuse_bytes", big, &o.inputReuseBytes}, {"model_bytes", big, &o.modelBytes}});
  nums.insert(nums.end(), {{"ms", kMaxLatencyMs, &row.ms}, {"ms_odd", kMaxLatencyMs, &row.msOdd},
                           {"ms_even", kMaxLatencyMs, &row.msEven}});
  for (size_t i = 0; i < nums.size(); ++i)
    if (auto p = numberCell(f[at + std::size(ints) + i], nums[i].name, 0, nums[i].hi, *nums[i].out)) return p;
  return std::nullopt;
}

}  // namespace

Expected<std::vector<NodeProfileRow>> parseNodeProfileCsv(std::string_view text, const std::string& label) {
  ZP_ASSIGN_OR_RETURN(std::vector<CsvRecord> records, parseCsv(text, label));
  const std::string header = records.empty() ? "" : fmt::format("{}", fmt::join(records[0].fields, ","));
  const bool hasActivation = header == kNodeProfileCsvHeader;
  if (!hasActivation && header != kNodeProfileCsvHeaderNoActivation)
    return makeError("{}: unexpected header (expected {})", label, kNodeProfileCsvHeader);
  const size_t columns = hasActivation ? kNodeProfileColumns : kColumnsNoActivation;
  std::vector<NodeProfileRow> out;
  for (size_t r = 1; r < records.size(); ++r) {
    const CsvRecord& rec = records[r];
    if (rec.blank()) continue;
    auto fail = [&](const std::string& msg) { return makeError("{}:{}: {}", label, rec.line, msg); };
    const auto& f = rec.fields;
    if (f.size() != columns) return fail(fmt::format("{} cells, the header has {}", f.size(), columns));
    NodeProfileRow row;
    if (f[0].empty()) return fail("column 'model': empty");
    row.model = f[0];
    if (auto p = idProblem(f[1])) return fail("column 'policy': " + *p);
    row.policy = f[1];
    int64_t threads = 0;
    if (auto p = integerCell(f[2], "threads", 1, 1024, threads)) return fail(*p);
    row.threads = static_cast<int>(threads);
    row.node = f[3];
    row.features.opType = f[4];
    if (f[4].empty()) return fail("column 'op_type': empty");
    row.features.kernel = f[5];
    if (hasActivation) row.features.activation = f[6];
    if (auto p = parseFigures(f, hasActivation ? 7 : 6, hasActivation, row)) return fail(*p);
    out.push_back(std::move(row));
  }
  return out;
}

Expected<std::vector<NodeProfileRow>> readNodeProfileCsv(const std::filesystem::path& path) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  return parseNodeProfileCsv(text, path.string());
}

std::string formatNodeProfileCsv(const std::vector<NodeProfileRow>& rows) {
  std::string out = std::string(kNodeProfileCsvHeader) + "\n";
  for (const auto& r : rows) {
    const auto& o = r.features;
    std::vector<std::string> cells = {r.model,  r.policy, std::to_string(r.threads), r.node,
                                      o.opType, o.kernel, o.activation};
    for (int64_t v : {o.batch, o.inChannels, o.inH, o.inW, o.outChannels, o.kernelH, o.kernelW, o.stride, o.groups})
      cells.push_back(std::to_string(v));
    for (double v : {o.flops, o.intensity, o.bytes, o.weightSparsity, o.inputSparsity, o.outputSparsity,
                     o.inputReuseBytes, o.modelBytes, r.ms, r.msOdd, r.msEven})
      cells.push_back(formatNumber(v));
    out += csvLine(cells);
  }
  return out;
}

}  // namespace zp::artifacts
