#include "libplan/artifacts/cold_profile_csv.h"

#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "libplan/util/csv.h"
#include "libplan/util/file.h"
#include "libplan/util/validate.h"

namespace zp::artifacts {
using profile::ColdModelCost;
using profile::ColdNodeCost;
using profile::ColdProfile;

namespace {

constexpr size_t kColdProfileColumns = 13;
constexpr const char* kColdProfileColumnNames[kColdProfileColumns] = {"kind",         "model",         "step",        "node",   "op_type",
                                                "kernel",       "gemm",          "raw_bytes",   "cache_bytes",
                                                "transform_ms", "first_exec_ms", "warm_exec_ms", "value"};
enum Col { Kind, Model, Step, Node, Op, Kernel, Gemm, Raw, Cache, Transform, First, Warm, Value };

std::optional<std::string> numberCell(const std::string& cell, int col, double lo, double hi, double& out) {
  auto r = std::from_chars(cell.data(), cell.data() + cell.size(), out);
  if (r.ec != std::errc() || r.ptr != cell.data() + cell.size() || numberProblem(out, lo, hi))
    return fmt::format("column '{}': '{}' is not a number in [{}, {}]", kColdProfileColumnNames[col], cell, lo, hi);
  return std::nullopt;
}

std::optional<std::string> integerCell(const std::string& cell, int col, int64_t lo, int64_t hi, int64_t& out) {
  auto r = std::from_chars(cell.data(), cell.data() + cell.size(), out);
  if (r.ec != std::errc() || r.ptr != cell.data() + cell.size() || integerProblem(out, lo, hi))
    return fmt::format("column '{}': '{}' is not an integer in [{}, {}]", kColdProfileColumnNames[col], cell, lo, hi);
  return std::nullopt;
}

// The cells of `used` columns may hold anything checked later; every other one must be empty.
std::optional<std::string> onlyColumns(const std::vector<std::string>& f, std::initializer_list<int> used) {
  std::set<int> u(used);
  for (int c = 1; c < static_cast<int>(kColdProfileColumns); ++c)
    if (!u.count(c) && !f[c].empty())
      return fmt::format("column '{}' must be empty in a '{}' row", kColdProfileColumnNames[c], f[Kind]);
  return std::nullopt;
}

std::optional<std::string> hostRow(const std::vector<std::string>& f, ColdProfile& p, std::set<std::string>& seen) {
  if (auto e = onlyColumns(f, {Node, Gemm, Value})) return e;
  const std::string& key = f[Node];
  if (key == "gemm_startup_ms") {
    if (auto e = idProblem(f[Gemm])) return "column 'gemm': " + *e;
    if (p.gemmStartupMs.count(f[Gemm])) return fmt::format("gemm_startup_ms of '{}' given twice", f[Gemm]);
    return numberCell(f[Value], Value, 0, kMaxLatencyMs, p.gemmStartupMs[f[Gemm]]);
  }
  if (!f[Gemm].empty()) return fmt::format("column 'gemm' must be empty for host key '{}'", key);
  if (!seen.insert(key).second) return fmt::format("host key '{}' given twice", key);
  int64_t n = 0;
  if (key == "cores" || key == "threads") {
    if (auto e = integerCell(f[Value], Value, 1, 4096, n)) return e;
    (key == "cores" ? p.cores : p.threads) = static_cast<int>(n);
    return std::nullopt;
  }
  if (key == "storage_probe_bytes") {
    if (auto e = integerCell(f[Value], Value, 0, kMaxBytes, n)) return e;
    p.storageProbeBytes = n;
    return std::nullopt;
  }
  if (key == "storage_read_mb_per_s") {
    if (auto e = numberCell(f[Value], Value, 1e-6, 1e9, p.storageMBps)) return e;
    return std::nullopt;
  }
  if (key == "storage_read_latency_ms") return numberCell(f[Value], Value, 0, kMaxLatencyMs, p.storageLatencyMs);
  return fmt::format("unknown host key '{}' (expected cores, threads, storage_read_mb_per_s, "
                     "storage_read_latency_ms, storage_probe_bytes or gemm_startup_ms)", key);
}

std::optional<std::string> nodeRow(const std::vector<std::string>& f, ColdNodeCost& n) {
  n.model = f[Model];
  int64_t step = 0;
  if (auto e = integerCell(f[Step], Step, 0, 10'000'000, step)) return e;
  n.step = static_cast<int>(step);
  n.node = f[Node];
  n.opType = f[Op];
  if (n.opType.empty()) return std::string("column 'op_type' is empty");
  n.kernel = f[Kernel];
  n.gemm = f[Gemm];
  if (!n.kernel.empty())
    if (auto e = idProblem(n.kernel)) return "column 'kernel': " + *e;
  if (!n.gemm.empty())
    if (auto e = idProblem(n.gemm)) return "column 'gemm': " + *e;
  if (auto e = integerCell(f[Raw], Raw, 0, kMaxBytes, n.rawBytes)) return e;
  if (auto e = integerCell(f[Cache], Cache, 0, kMaxBytes, n.cacheBytes)) return e;
  if (auto e = numberCell(f[Transform], Transform, 0, kMaxLatencyMs, n.transformMs)) return e;
  if (auto e = numberCell(f[First], First, 0, kMaxLatencyMs, n.firstExecMs)) return e;
  if (auto e = numberCell(f[Warm], Warm, 0, kMaxLatencyMs, n.warmExecMs)) return e;
  if (n.kernel.empty() && (!n.gemm.empty() || n.rawBytes || n.cacheBytes || n.transformMs))
    return std::string("a node without a kernel has no GEMM library, weights or transform");
  return std::nullopt;
}

// Whole-file checks: node rows name declared models, a step is one node, candidates are unique, steps run 0..n-1.
Status checkNodes(const ColdProfile& p, const std::string& label) {
  std::set<std::string> models;
  for (const auto& m : p.models) models.insert(m.model);
  std::map<std::pair<std::string, int>, const ColdNodeCost*> steps;
  std::set<std::tuple<std::string, int, std::string, std::string>> candidates;
  for (const auto& n : p.nodes) {
    if (!models.count(n.model)) return makeError("{}: node row of model '{}', which has no model row", label, n.model);
    auto [it, fresh] = steps.emplace(std::make_pair(n.model, n.step), &n);
    if (!fresh && (it->second->node != n.node || it->second->opType != n.opType ||
                   it->second->heavy() != n.heavy()))
      return makeError("{}: model '{}' step {}: rows disagree on the node (or whether it has weights)", label, n.model,
                       n.step);
    if (!candidates.emplace(n.model, n.step, n.kernel, n.gemm).second)
      return makeError("{}: model '{}' step {}: kernel '{}' with GEMM library '{}' given twice", label, n.model,
                       n.step, n.kernel, n.gemm);
  }
  std::map<std::string, int> count;
  for (const auto& [key, n] : steps) {
    if (key.second != count[key.first])
      return makeError("{}: model '{}': step {} is missing (steps run from 0 without gaps)", label, key.first,
                       count[key.first]);
    ++count[key.first];
  }
  return Status{};
}

}  // namespace

Expected<ColdProfile> parseColdProfileCsv(std::string_view text, const std::string& label) {
  ZP_ASSIGN_OR_RETURN(std::vector<CsvRecord> records, parseCsv(text, label));
  if (records.empty() || fmt::format("{}", fmt::join(records[0].fields, ",")) != kColdProfileCsvHeader)
    return makeError("{}: unexpected header (expected {})", label, kColdProfileCsvHeader);
  ColdProfile p;
  std::set<std::string> hostKeys;
  std::set<std::string> models;
  for (size_t r = 1; r < records.size(); ++r) {
    const CsvRecord& rec = records[r];
    if (rec.blank()) continue;
    auto fail = [&](const std::string& msg) { return makeError("{}:{}: {}", label, rec.line, msg); };
    const auto& f = rec.fields;
    if (f.size() != kColdProfileColumns) return fail(fmt::format("{} cells, the header has {}", f.size(), kColdProfileColumns));
    if (f[Kind] == "host") {
      if (auto e = hostRow(f, p, hostKeys)) return fail(fmt::format("host row '{}': {}", f[Node], *e));
    } else if (f[Kind] == "model") {
      if (auto e = onlyColumns(f, {Model, Value})) return fail(*e);
      ColdModelCost m{f[Model]};
      if (m.model.empty()) return fail("column 'model' is empty");
      if (!models.insert(m.model).second) return fail(fmt::format("model '{}' given twice", m.model));
      if (auto e = numberCell(f[Value], Value, 0, kMaxLatencyMs, m.setupMs)) return fail(*e);
      p.models.push_back(std::move(m));
    } else if (f[Kind] == "node") {
      if (!f[Value].empty()) return fail("column 'value' must be empty in a 'node' row");
      ColdNodeCost n;
      if (auto e = nodeRow(f, n)) return fail(*e);
      p.nodes.push_back(std::move(n));
    } else {
      return fail(fmt::format("column 'kind': '{}' is not host, model or node", f[Kind]));
    }
  }
  for (const char* key : {"cores", "threads", "storage_read_mb_per_s", "storage_probe_bytes"})
    if (!hostKeys.count(key)) return makeError("{}: no host row '{}'", label, key);
  ZP_TRY(checkNodes(p, label));
  return p;
}

Expected<ColdProfile> readColdProfileCsv(const std::filesystem::path& path) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  return parseColdProfileCsv(text, path.string());
}

std::string formatColdProfileCsv(const ColdProfile& p) {
  std::string out = std::string(kColdProfileCsvHeader) + "\n";
  auto host = [&](const std::string& key, const std::string& gemm, const std::string& value) {
    out += csvLine({"host", "", "", key, "", "", gemm, "", "", "", "", "", value});
  };
  host("cores", "", std::to_string(p.cores));
  host("threads", "", std::to_string(p.threads));
  host("storage_read_mb_per_s", "", formatNumber(p.storageMBps));
  if (p.storageLatencyMs > 0) host("storage_read_latency_ms", "", formatNumber(p.storageLatencyMs));
  host("storage_probe_bytes", "", std::to_string(p.storageProbeBytes));
  for (const auto& [gemm, ms] : p.gemmStartupMs) host("gemm_startup_ms", gemm, formatNumber(ms));
  for (const auto& m : p.models) out += csvLine({"model", m.model, "", "", "", "", "", "", "", "", "", "", formatNumber(m.setupMs)});
  for (const auto& n : p.nodes)
    out += csvLine({"node", n.model, std::to_string(n.step), n.node, n.opType, n.kernel, n.gemm,
                    std::to_string(n.rawBytes), std::to_string(n.cacheBytes), formatNumber(n.transformMs),
                    formatNumber(n.firstExecMs), formatNumber(n.warmExecMs), ""});
  return out;
}

Status writeColdProfileCsv(const ColdProfile& p, const std::filesystem::path& path) {
  return writeFileAtomic(path, formatColdProfileCsv(p));
}

}  // namespace zp::artifacts
