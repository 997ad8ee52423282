// How a member task of a weight-shared group reads and answers in the group's
// stitched graph: its input and outputs in its own model and in the stitched one.
// One type from where MTS stitches a group (passes/mts) through mts.json
// (mts_manifest.h) to the plan (plan::GroupMember).
#pragma once
#include <string>
#include <vector>

namespace zp::zoo {

struct MemberIo {
  std::string task;
  std::string input, stitchedInput;
  std::vector<std::string> outputs, stitchedOutputs;  // same order
  bool operator==(const MemberIo&) const = default;
};

}  // namespace zp::zoo
