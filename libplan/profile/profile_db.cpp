#include "libplan/profile/profile_db.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "libplan/util/validate.h"

namespace zp::profile {

std::string_view rowKindName(RowKind k) {
  switch (k) {
    case RowKind::Group: return "group";
    case RowKind::Node: return "node";
    case RowKind::Subgraph: return "subgraph";
    case RowKind::Transition: return "transition";
  }
  assert(false);
  return "";
}

std::optional<RowKind> parseRowKind(std::string_view s) {
  if (s == "group") return RowKind::Group;
  if (s == "node") return RowKind::Node;
  if (s == "subgraph") return RowKind::Subgraph;
  if (s == "transition") return RowKind::Transition;
  return std::nullopt;
}

bool isKnownSource(std::string_view s) {
  return std::find(std::begin(kSources), std::end(kSources), s) != std::end(kSources);
}

ProfileRow::Key ProfileRow::key() const {
  return Key{kind, task, position.value_or(-1), variant, processor, policy, node, fromProcessor, toProcessor};
}

std::optional<std::string> ProfileRow::problem() const {
  auto finiteNonNeg = [](double v) { return std::isfinite(v) && v >= 0; };
  auto need = [](const std::string& v, std::string_view col) -> std::optional<std::string> {
    if (v.empty()) return fmt::format("column '{}' is required", col);
    return std::nullopt;
  };
  auto mustBeEmpty = [this](bool empty, std::string_view col) -> std::optional<std::string> {
    if (!empty) return fmt::format("column '{}' must be empty in a {} row", col, rowKindName(kind));
    return std::nullopt;
  };
#define ZP_CHECK(expr) \
  if (auto p = (expr)) return p
  ZP_CHECK(need(task, "task"));
  ZP_CHECK(need(source, "source"));
  if (!isKnownSource(source))
    return fmt::format("column 'source': unknown source '{}' (expected host, ort-json, trtexec, openvino-csv or csv)",
                       source);
  if (!finiteNonNeg(medianMs)) return fmt::format("column 'median_ms': {} is not a finite non-negative number", medianMs);
  if (p90Ms && !finiteNonNeg(*p90Ms)) return fmt::format("column 'p90_ms': {} is not a finite non-negative number", *p90Ms);
  if (medianMs > kMaxLatencyMs)
    return fmt::format("column 'median_ms': {} is above the {} ms any one run may take", medianMs, kMaxLatencyMs);
  if (p90Ms && *p90Ms > kMaxLatencyMs)
    return fmt::format("column 'p90_ms': {} is above the {} ms any one run may take", *p90Ms, kMaxLatencyMs);
  if (position && *position < 0) return fmt::format("column 'position': {} is negative", *position);
  if (runs && *runs < 1) return fmt::format("column 'runs': {} is not a positive count", *runs);
  if (runs && *runs > kMaxRuns) return fmt::format("column 'runs': {} is above {}", *runs, kMaxRuns);
  if (memoryBytes && *memoryBytes < 0) return fmt::format("column 'memory_bytes': {} is negative", *memoryBytes);
  if (memoryBytes && *memoryBytes > kMaxBytes) return fmt::format("column 'memory_bytes': {} is above {}", *memoryBytes, kMaxBytes);
  if (bytes && *bytes < 0) return fmt::format("column 'bytes': {} is negative", *bytes);
  if (bytes && *bytes > kMaxBytes) return fmt::format("column 'bytes': {} is above {}", *bytes, kMaxBytes);
  // Ids end up in file names and plans: safe ids only (node names are the model's own).
  for (auto [value, col] : {std::pair<const std::string&, std::string_view>{task, "task"}, {variant, "variant"},
                            {processor, "processor"}, {fromProcessor, "from_processor"}, {toProcessor, "to_processor"}})
    if (!value.empty())
      if (auto p = idProblem(value)) return fmt::format("column '{}': {}", col, *p);
  switch (kind) {
    case RowKind::Subgraph:
    case RowKind::Node:
      if (kind == RowKind::Subgraph && !position) return std::string("column 'position' is required");
      ZP_CHECK(need(variant, "variant"));
      ZP_CHECK(need(processor, "processor"));
      ZP_CHECK(need(policy, "policy"));
      if (kind == RowKind::Node) {
        ZP_CHECK(need(node, "node"));
      } else {
        ZP_CHECK(mustBeEmpty(node.empty(), "node"));
      }
      ZP_CHECK(mustBeEmpty(fromProcessor.empty(), "from_processor"));
      ZP_CHECK(mustBeEmpty(toProcessor.empty(), "to_processor"));
      ZP_CHECK(mustBeEmpty(!bytes, "bytes"));
      break;
    case RowKind::Group:
      if (position) return std::string("column 'position' must be empty in a group row");
      ZP_CHECK(mustBeEmpty(variant.empty(), "variant"));
      ZP_CHECK(need(processor, "processor"));
      ZP_CHECK(need(policy, "policy"));
      ZP_CHECK(mustBeEmpty(node.empty(), "node"));
      ZP_CHECK(mustBeEmpty(fromProcessor.empty(), "from_processor"));
      ZP_CHECK(mustBeEmpty(toProcessor.empty(), "to_processor"));
      ZP_CHECK(mustBeEmpty(!bytes, "bytes"));
      break;
    case RowKind::Transition:
      if (!position) return std::string("column 'position' is required");
      ZP_CHECK(need(fromProcessor, "from_processor"));
      ZP_CHECK(need(toProcessor, "to_processor"));
      if (!bytes) return std::string("column 'bytes' is required");
      ZP_CHECK(mustBeEmpty(node.empty(), "node"));
      ZP_CHECK(mustBeEmpty(processor.empty(), "processor"));
      ZP_CHECK(mustBeEmpty(policy.empty(), "policy"));
      ZP_CHECK(mustBeEmpty(!memoryBytes, "memory_bytes"));
      break;
  }
#undef ZP_CHECK
  return std::nullopt;
}

void ProfileDb::add(ProfileRow row) {
  assert(!row.problem() && "ProfileDb::add: inconsistent row");
  auto key = row.key();
  rows_.insert_or_assign(std::move(key), std::move(row));
}

void ProfileDb::merge(const ProfileDb& later) {
  for (const auto& [k, r] : later.rows_) rows_.insert_or_assign(k, r);
}

std::vector<const ProfileRow*> ProfileDb::rows() const {
  std::vector<const ProfileRow*> out;
  out.reserve(rows_.size());
  for (const auto& [k, r] : rows_) out.push_back(&r);
  return out;
}

const ProfileRow* ProfileDb::find(const std::string& task, int position, const std::string& variant,
                                  const std::string& processor, const std::string& policy) const {
  auto it = rows_.find(ProfileRow::Key{RowKind::Subgraph, task, position, variant, processor, policy, "", "", ""});
  return it == rows_.end() ? nullptr : &it->second;
}

const ProfileRow* ProfileDb::findNode(const std::string& task, const std::string& variant,
                                      const std::string& processor, const std::string& node,
                                      const std::string& policy) const {
  // Node rows may or may not carry a position; take the first in key order.
  auto lo = rows_.lower_bound(ProfileRow::Key{RowKind::Node, task, std::numeric_limits<int>::min(), "", "", "", "", "", ""});
  for (auto it = lo; it != rows_.end() && it->second.kind == RowKind::Node && it->second.task == task; ++it) {
    const ProfileRow& r = it->second;
    if (r.variant == variant && r.processor == processor && r.node == node && r.policy == policy) return &r;
  }
  return nullptr;
}

const ProfileRow* ProfileDb::findTransition(const std::string& task, int position, const std::string& from,
                                            const std::string& to, const std::string& variant) const {
  if (!variant.empty()) {
    auto it = rows_.find(ProfileRow::Key{RowKind::Transition, task, position, variant, "", "", "", from, to});
    if (it != rows_.end()) return &it->second;
  }
  auto it = rows_.find(ProfileRow::Key{RowKind::Transition, task, position, "", "", "", "", from, to});
  return it == rows_.end() ? nullptr : &it->second;
}

std::vector<const ProfileRow*> ProfileDb::select(RowKind kind, const std::string& task, const std::string& variant,
                                                 const std::string& processor) const {
  std::vector<const ProfileRow*> out;
  for (const auto& [k, r] : rows_) {
    if (r.kind != kind) continue;
    if (!task.empty() && r.task != task) continue;
    if (!variant.empty() && r.variant != variant) continue;
    if (!processor.empty() && r.processor != processor) continue;
    out.push_back(&r);
  }
  return out;
}

}  // namespace zp::profile
