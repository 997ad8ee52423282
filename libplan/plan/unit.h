// The unit of work every technique decides about: a task's subgraph at one
// position cut from one variant (SparseLoom), a weight-shared stitched group
// (MTS), or a whole model (HaX-CoNN's DNNs, SparOA's placed model, NNV12's
// cold-started model). A plan lists its units once, each with its ONNX file and
// content hash and the decisions that hold for the unit wherever it runs; the
// plan's sections (serving choices, timeline, operator placement, cold
// schedules, groups) refer to units by id.
#pragma once
#include <compare>
#include <optional>
#include <string>
#include <vector>

#include "libplan/util/error.h"
#include "libplan/zoo/member_io.h"

namespace zp::plan {

enum class UnitKind { Subgraph, Group, Model };

struct UnitId {
  UnitKind kind = UnitKind::Model;
  std::string name;     // Subgraph: its task; Group: the group; Model: the model (a DNN, task or file stem)
  int position = -1;    // Subgraph: its position in the task
  std::string variant;  // Subgraph: the variant it is cut from

  static UnitId subgraph(std::string task, int position, std::string variant);
  static UnitId group(std::string name);
  static UnitId model(std::string name);

  // "subgraph:digits/0/u50" | "group:vision" | "model:resnet": what plan.json writes.
  std::string str() const;
  // The key the profiles (cold_profile.csv) use: "digits/0/u50" for a subgraph, the name otherwise.
  std::string profileKey() const;
  auto operator<=>(const UnitId&) const = default;
  bool operator==(const UnitId&) const = default;
};

// The id str() wrote; otherwise "unit id 'x': expected subgraph:TASK/POSITION/VARIANT, group:NAME or model:NAME".
Expected<UnitId> parseUnitId(const std::string& text);

// How a unit comes to be in memory when it runs.
inline constexpr const char* kResidentUnit = "resident";      // loaded before the first request or frame
inline constexpr const char* kPreloadSetUnit = "preload-set";  // resident when in the served preload set, else loaded on demand
inline constexpr const char* kColdUnit = "cold";               // loaded following its cold section (NNV12)

struct Unit {
  UnitId id;
  std::string file;    // its ONNX file as the plan's header inputs name it (a subgraph: relative to the stitch directory)
  std::string sha256;  // of that file
  // Decisions that hold wherever the unit runs.
  std::string processor;        // the one processor it runs on; empty: chosen per SLO configuration, or per operator
  bool operatorPlaced = false;  // its operators are placed across processors (the plan's operator placement)
  std::string residency = kResidentUnit;  // kResidentUnit | kPreloadSetUnit | kColdUnit
  std::optional<UnitId> group;  // the weight-shared group it is a member of
  bool operator==(const Unit&) const = default;
};

// How a member task of a weight-shared group reads and answers in the group's
// stitched graph (the type MTS stitching and mts.json use too).
using GroupMember = zoo::MemberIo;

// The unit with `id` in `units`, or null.
const Unit* findUnit(const std::vector<Unit>& units, const UnitId& id);

}  // namespace zp::plan
