// The profile database: rows of subgraph, node and transition latencies, with
// lookups and merging. Its file form, profile.csv (schemas/profile.schema.json),
// is read and written by libplan/artifacts/profile_csv.h.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "libplan/util/error.h"

namespace zp::profile {

// Group: one run of a weight-shared group's stitched graph (its name in `task`).
enum class RowKind { Group, Node, Subgraph, Transition };  // declaration order = sort order (alphabetical)
std::string_view rowKindName(RowKind k);
std::optional<RowKind> parseRowKind(std::string_view s);

// Where a row's numbers come from (the `source` column).
inline constexpr std::string_view kSources[] = {"host", "ort-json", "trtexec", "openvino-csv", "csv"};
bool isKnownSource(std::string_view s);

inline constexpr std::string_view kDefaultPolicy = "default";

struct ProfileRow {
  RowKind kind = RowKind::Subgraph;
  std::string task;
  std::optional<int> position;
  std::string variant;
  std::string node;
  std::string processor;
  std::string policy;                // kernel policy; "default" for subgraph/node rows when not applicable
  double medianMs = 0;
  std::optional<double> p90Ms;
  std::optional<int64_t> runs;
  std::optional<int64_t> memoryBytes;
  std::string fromProcessor, toProcessor;
  std::optional<int64_t> bytes;
  std::string source;

  // The identity of a row: two rows with the same key describe the same thing.
  using Key = std::tuple<RowKind, std::string, int, std::string, std::string, std::string, std::string,
                         std::string, std::string>;
  Key key() const;

  // The row's own consistency (required cells per kind, finite non-negative numbers);
  // an error message without a location, for the caller to prefix.
  std::optional<std::string> problem() const;
};

class ProfileDb {
 public:
  // Inserts a row; a row with the same key is replaced (the later one wins).
  // Asserts the row is consistent (ProfileRow::problem); readers check first.
  void add(ProfileRow row);
  // Adds every row of `later`, replacing rows with the same key.
  void merge(const ProfileDb& later);

  // Rows in key order.
  std::vector<const ProfileRow*> rows() const;
  size_t size() const { return rows_.size(); }
  bool empty() const { return rows_.empty(); }

  const ProfileRow* find(const std::string& task, int position, const std::string& variant,
                         const std::string& processor, const std::string& policy = std::string(kDefaultPolicy)) const;
  const ProfileRow* findNode(const std::string& task, const std::string& variant, const std::string& processor,
                             const std::string& node, const std::string& policy = std::string(kDefaultPolicy)) const;
  // The transition row for (task, position, from, to) with an empty variant, or, when
  // `variant` is given and a variant-specific row exists, that one.
  const ProfileRow* findTransition(const std::string& task, int position, const std::string& from,
                                   const std::string& to, const std::string& variant = {}) const;

  // All rows of one kind, in key order; optionally only those of `task`/`variant`/`processor` (empty: any).
  std::vector<const ProfileRow*> select(RowKind kind, const std::string& task = {}, const std::string& variant = {},
                                        const std::string& processor = {}) const;

 private:
  std::map<ProfileRow::Key, ProfileRow> rows_;
};

}  // namespace zp::profile
