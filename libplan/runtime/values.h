// The values of a session by id: every tensor name of the graph (initializers,
// graph inputs, node outputs), its tensor, and what kind of value it is.
#pragma once
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "libplan/graph/analysis.h"
#include "libplan/graph/rewrite/fuse.h"
#include "libplan/runtime/cache/skeleton.h"
#include "libplan/runtime/tensor.h"
#include "libplan/util/error.h"

namespace zp::runtime {

struct ValueTable {
  std::vector<std::string> names;  // value id -> tensor name
  std::map<std::string, int> ids;
  std::deque<Tensor> vals;         // a deque: pointers to constants stay valid while ids are added
  std::vector<bool> isConst, isInput, isOutput;
  std::vector<bool> stripped;      // initializers a weight cache's skeleton left to the cache (no data)
  std::vector<int> aliasRoot;      // value id -> id whose storage it shares (itself if none)

  int id(const std::string& name);           // adds the name when new
  int find(const std::string& name) const;   // -1 when unknown
  const Tensor* constant(const std::string& name) const;  // null for "" and values that are not constant
  size_t size() const { return names.size(); }
  int root(int v) const;
  // Storage the memory plan does not manage: constants, graph inputs and outputs.
  bool pinned(int v) const;
  // Values that live in the arena when planned: produced by a step, not pinned, not an alias.
  bool plannable(int v) const { return !pinned(v) && aliasRoot[static_cast<size_t>(v)] == v; }
};

// The initializers of `g` as constants, viewed in place where they hold raw data
// (the model must outlive the table). `fromSkeleton`: initializers the skeleton
// left to the weight cache get their shape and type only, and so do those it
// points at the model file (listed in `modelRefs`, marked stripped until read);
// otherwise they are an error.
Status loadInitializers(const onnx::GraphProto& g, bool fromSkeleton, const std::string& label, ValueTable& values,
                        std::vector<std::pair<int, ModelFileRef>>* modelRefs = nullptr);

// Shapes known before running: those of shape inference when every graph input
// has a fixed shape, otherwise only those of constants.
class StaticShapes {
 public:
  StaticShapes(const graph::GraphView& view, const ValueTable& values, bool inputsFixed)
      : view_(&view), values_(&values), inputsFixed_(inputsFixed) {}
  std::optional<Shape> of(const std::string& name) const;
  bool inputsFixed() const { return inputsFixed_; }

 private:
  const graph::GraphView* view_;
  const ValueTable* values_;
  bool inputsFixed_;
};

// The constants of `values` as graph rewrites see them.
graph::ConstantLookup constantLookup(const ValueTable& values);

}  // namespace zp::runtime
