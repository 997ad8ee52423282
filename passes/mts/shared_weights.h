// Which task models share weights by content, as heads trained on one frozen
// backbone do: candidates for a weight-shared group (zoo.json's
// multitask_groups), found from the models alone so that a zoo written from a
// folder of exports (zoo-init) needs no hand-written group.
#pragma once
#include <cstdint>
#include <vector>

#include <onnx/onnx_pb.h>

namespace zp::mts {

struct SharedWeightFamily {
  std::vector<int> members;   // model indices, ascending
  int64_t sharedBytes = 0;    // initializer bytes every member holds with the same content
  int64_t smallestBytes = 0;  // the smallest member's initializer bytes
};

// Two models are linked when the initializers they hold in common (same element
// type, shape and bytes) make up at least `minShare` of the smaller one's
// initializer bytes; a family is a connected set of two or more (in the order
// of their smallest index). Pure: no file is read.
std::vector<SharedWeightFamily> sharedWeightFamilies(const std::vector<const onnx::ModelProto*>& models,
                                                     double minShare);

}  // namespace zp::mts
