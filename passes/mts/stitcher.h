// The state of one stitching run (internal to passes/mts): the stitched value of
// every member tensor, the batch rows of every member, and the steps that turn
// one aligned node of all members into stitched nodes.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "passes/mts/emitter.h"
#include "passes/mts/layout.h"
#include "passes/mts/mts_stitch.h"
#include "passes/mts/task_net.h"

namespace zp::mts {

// The weights of a group of output columns that read the same input segments.
struct WeightBlock {
  std::vector<int> need;        // input segments read
  std::vector<Column> cols;     // output columns
  std::vector<int64_t> sel;     // input columns read, in layout order
  std::vector<float> w, bias;   // [cols][sel][kernel], [cols]
};

// A stitched activation: [rows, columns(, H, W)]. `clean`: every entry of a row
// in a column its member does not own is zero.
struct Value {
  std::string name;
  Layout layout;
  bool clean = true;
  size_t rank = 4;
};

class Stitcher {
 public:
  Stitcher(const std::vector<TaskNet>& nets, const StitchParams& params, onnx::GraphProto* graph);
  Status run();  // inputs, every aligned node, outputs
  StitchStats& stats() { return stats_; }
  const std::vector<MemberIo>& memberIo() const { return io_; }

 private:
  int members() const { return static_cast<int>(nets_.size()); }
  bool netFuse() const { return params_.mode == StitchMode::NetFuse; }
  Owners all() const { return members() == kMaxMembers ? ~Owners{0} : (Owners{1} << members()) - 1; }
  const TaskOp& op(int t, size_t i) const { return nets_[static_cast<size_t>(t)].ops[i]; }

  Status inputs();
  Status outputs();
  Expected<Value> value(const std::string& tensor) const;
  std::string masked(const Value& v);
  Expected<Value> weighted(size_t i);
  Expected<Value> add(size_t i);
  Expected<Value> unary(size_t i);
  std::vector<Column> mergeColumns(size_t i, const Layout& in) const;
  bool sameNeuron(size_t i, int t, int u, int64_t o, const Layout& in) const;
  void account(size_t i, const std::vector<Column>& cols, const Layout& in, const std::vector<int>& need);
  std::vector<WeightBlock> planBlocks(size_t i, const Layout& in, std::vector<Column>& cols) const;
  void fillBlock(size_t i, const Layout& in, WeightBlock& b, bool& clean) const;
  std::string emitWeighted(size_t i, const std::string& input, int64_t width, std::vector<WeightBlock>& blocks);
  std::string emitBlock(size_t i, const std::string& x, const WeightBlock& b, bool hasBias, int64_t groups,
                        const std::string& base);

  const std::vector<TaskNet>& nets_;
  StitchParams params_;
  Emitter em_;
  onnx::GraphProto* graph_;
  StitchStats stats_;
  std::vector<MemberIo> io_;
  std::vector<int64_t> rowBegin_, rowCount_;
  std::vector<int> rowMember_;  // member of every stitched batch row (mode Mts)
  std::map<std::string, Value> values_;
  std::map<std::string, std::string> masked_;
};

}  // namespace zp::mts
