// The multitask groups of a zoo (zoo.json "multitask_groups"): which task models
// share parameters and may be stitched into one graph by MTS. Shared parameters
// are found by content; a group may also name initializers that every member
// must hold with the same shape and content, and bound the stitched graph's bytes.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "libplan/util/error.h"
#include "libplan/util/json.h"
#include "libplan/zoo/zoo.h"

namespace zp::zoo {

struct GroupMember {
  std::string task;
  std::string variant;  // resolved: the task's first variant when zoo.json names only the task
  std::string onnx;     // the variant's ONNX path as written in zoo.json
};

struct MultitaskGroup {
  std::string name;
  std::vector<GroupMember> members;
  std::vector<std::string> shared;           // declared shared initializers
  std::optional<int64_t> memoryBudgetBytes;  // weights + auxiliary constants of the stitched graph
  bool sharedInput = false;                  // members of one input shape read one input (one image, many tasks)
};

// Reads "multitask_groups" of zoo.json text (empty when absent); members must
// name tasks (and variants) of `zoo`. Errors: "<file>: $.multitask_groups[0].members[2]: ...".
// Reads zoo.file again and parses its groups.

// The inverse of parseMultitaskGroups (members written as TASK/VARIANT).

}  // namespace zp::zoo
