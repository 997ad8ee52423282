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
  int64_t rowBegin = 0, rows = 0;  // the batch rows it is computed on
  bool clean = true;            // no garbage in rows of members that do not own its columns
};

// The batch rows of a stitched activation: blocks of rows, each computed for a
// class of members that own the same columns (one member each, unless members
// read one shared input and have not diverged yet: their rows would be equal).
struct Rows {
  std::vector<Owners> classes;  // in row order
  std::vector<int64_t> begin, count;
  int64_t total = 0;
  void add(Owners members, int64_t rows);
  size_t classOf(int t) const;
  bool operator==(const Rows& other) const { return classes == other.classes && count == other.count; }
};

// A stitched activation: [rows, columns(, H, W)]. `clean`: every entry of a row
// in a column none of its members owns is zero.
struct Value {
  std::string name;
  Layout layout;
  bool clean = true;
  size_t rank = 4;
  Rows rows;
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
  bool restrict() const { return !netFuse() && params_.restrictRows; }
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
  void fillBlock(size_t i, const Layout& in, WeightBlock& b) const;
  void chooseRows(WeightBlock& b, const Rows& rows) const;
  Value splitRows(const Value& in, const Layout& out, const std::string& base);
  Value gatherRows(const Value& in, const Rows& to, const std::vector<size_t>& fromClass, const std::string& base);
  std::string emitWeighted(size_t i, const Value& in, const std::string& input, std::vector<WeightBlock>& blocks);
  std::string emitBlock(size_t i, const std::string& x, const WeightBlock& b, bool hasBias, int64_t groups,
                        const std::string& base);

  const std::vector<TaskNet>& nets_;
  StitchParams params_;
  Emitter em_;
  onnx::GraphProto* graph_;
  StitchStats stats_;
  std::vector<MemberIo> io_;
  std::map<std::string, Value> values_;
  std::map<std::string, std::string> masked_;
};

}  // namespace zp::mts
