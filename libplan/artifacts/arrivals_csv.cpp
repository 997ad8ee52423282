#include "libplan/artifacts/arrivals_csv.h"

#include <charconv>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "libplan/util/csv.h"
#include "libplan/util/file.h"
#include "libplan/util/validate.h"

namespace zp::artifacts {

using runtime::serve::Arrival;
using runtime::serve::ArrivalTrace;

namespace {

std::string knownNames(const std::vector<KnownTask>& known) {
  std::string s;
  for (const auto& k : known) s += (s.empty() ? "" : ", ") + k.name;
  return s;
}

// Parses one record into `a`; the problem as text otherwise.
std::optional<std::string> parseRecord(const std::vector<std::string>& fields, const std::vector<KnownTask>& known,
                                       Arrival* a) {
  if (fields.size() != 3) return fmt::format("expected 3 fields (time_ms,task,sample), found {}", fields.size());
  const std::string& t = fields[0];
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), a->timeMs);
  if (ec != std::errc() || end != t.data() + t.size() || t.empty()) return fmt::format("time '{}' is not a number", t);
  if (!std::isfinite(a->timeMs)) return fmt::format("time {} is not a finite number", t);
  if (a->timeMs < 0) return fmt::format("time {} is negative", t);
  // The span generated traces may have, too: beyond it a run would sleep for
  // days, or its times would lose the precision latencies are measured in.
  if (a->timeMs > kMaxLatencyMs) return fmt::format("time {} is above {:g} ms, the longest trace served", t, kMaxLatencyMs);
  a->task = -1;
  for (size_t i = 0; i < known.size(); ++i)
    if (known[i].name == fields[1]) a->task = static_cast<int>(i);
  if (a->task < 0) return fmt::format("task '{}' is not known (known: {})", fields[1], knownNames(known));
  const std::string& s = fields[2];
  auto [send, sec] = std::from_chars(s.data(), s.data() + s.size(), a->sample);
  if (sec != std::errc() || send != s.data() + s.size() || s.empty())
    return fmt::format("sample '{}' is not an integer", s);
  const KnownTask& task = known[static_cast<size_t>(a->task)];
  if (a->sample < 0 || a->sample >= task.samples)
    return fmt::format("sample {} is outside the {} samples of task '{}'{}", a->sample, task.samples, fields[1],
                       task.bound.empty() ? "" : " (" + task.bound + ")");
  return std::nullopt;
}

}  // namespace

Expected<ArrivalTrace> parseArrivalsCsv(std::string_view text, const std::string& label,
                                        const std::vector<KnownTask>& known) {
  if (text.empty()) return makeError("{}: empty file (expected the header '{}')", label, kArrivalsCsvHeader);
  ZP_ASSIGN_OR_RETURN(std::vector<CsvRecord> records, parseCsv(text, label, CsvOptions{.skipBlank = true}));
  if (records.empty() || records[0].line != 1 || fmt::format("{}", fmt::join(records[0].fields, ",")) != kArrivalsCsvHeader)
    return makeError("{}:1: expected the header '{}'", label, kArrivalsCsvHeader);
  ArrivalTrace trace;
  for (const auto& k : known) trace.tasks.push_back(k.name);
  for (size_t r = 1; r < records.size(); ++r) {
    Arrival a;
    if (auto problem = parseRecord(records[r].fields, known, &a))
      return makeError("{}:{}: {}", label, records[r].line, *problem);
    if (!trace.arrivals.empty() && a.timeMs < trace.arrivals.back().timeMs)
      return makeError("{}:{}: time {} is before the previous line's {} (times must not decrease)", label,
                       records[r].line, a.timeMs, trace.arrivals.back().timeMs);
    trace.arrivals.push_back(a);
  }
  if (trace.arrivals.empty()) return makeError("{}: no arrivals", label);
  return trace;
}

Expected<ArrivalTrace> readArrivalsCsv(const std::filesystem::path& path, const std::vector<KnownTask>& known) {
  // Far above the million queries one serving run takes (about 30 bytes a line).
  constexpr size_t kMaxArrivalsCsvBytes = size_t{128} << 20;
  ZP_ASSIGN_OR_RETURN(auto text, readFile(path, kMaxArrivalsCsvBytes));
  return parseArrivalsCsv(text, path.string(), known);
}

std::string formatArrivalsCsv(const ArrivalTrace& trace) {
  std::string out = std::string(kArrivalsCsvHeader) + "\n";
  for (const auto& a : trace.arrivals)
    out += csvLine({formatNumber(a.timeMs), trace.tasks[static_cast<size_t>(a.task)], std::to_string(a.sample)});
  return out;
}

Status writeArrivalsCsv(const std::filesystem::path& path, const ArrivalTrace& trace) {
  return writeFileAtomic(path, formatArrivalsCsv(trace));
}

}  // namespace zp::artifacts
