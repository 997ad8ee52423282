// Stitching one Conv / Gemm of all members into block-structured weights
// (MTS §IV-A, IV-B1, IV-C: Eq. 2, 3, 5, 8).
#include <algorithm>
#include <cstring>
#include <tuple>

#include "passes/mts/stitcher.h"

namespace zp::mts {

// Members t and u may compute output channel o in one column when their weights
// agree on every input column both own, and their biases agree (positional
// sharing: channel o of t is channel o of u).
bool Stitcher::sameNeuron(size_t i, int t, int u, int64_t o, const Layout& in) const {
  const TaskOp& a = op(t, i);
  const TaskOp& b = op(u, i);
  const float ba = a.bias.empty() ? 0.f : a.bias[static_cast<size_t>(o)];
  const float bb = b.bias.empty() ? 0.f : b.bias[static_cast<size_t>(o)];
  if (std::memcmp(&ba, &bb, sizeof(float)) != 0) return false;
  const size_t bytes = static_cast<size_t>(a.kernelSize()) * sizeof(float);
  for (int64_t c = 0; c < a.cin; ++c) {
    const Column& col = in.columns()[static_cast<size_t>(in.columnOf(t, c))];
    if ((col.owners & (Owners{1} << u)) && std::memcmp(a.row(o, c), b.row(o, c), bytes) != 0) return false;
  }
  return true;
}

// Greedy, in member order: a member's channel joins the first column of that
// channel whose every owner computes it the same way, or opens a new column.
std::vector<Column> Stitcher::mergeColumns(size_t i, const Layout& in) const {
  std::vector<Column> cols;
  std::vector<std::vector<size_t>> byChannel;
  for (int t = 0; t < members(); ++t) {
    const int64_t cout = op(t, i).cout;
    if (static_cast<int64_t>(byChannel.size()) < cout) byChannel.resize(static_cast<size_t>(cout));
    for (int64_t o = 0; o < cout; ++o) {
      bool joined = false;
      for (size_t k : byChannel[static_cast<size_t>(o)]) {
        bool ok = !netFuse();
        for (int u : membersOf(cols[k].owners)) ok = ok && sameNeuron(i, t, u, o, in);
        if (ok) {
          cols[k].owners |= Owners{1} << t;
          joined = true;
          break;
        }
      }
      if (!joined) {
        byChannel[static_cast<size_t>(o)].push_back(cols.size());
        cols.push_back(Column{Owners{1} << t, o});
      }
    }
  }
  return cols;
}

// Shared / exclusive bytes of the blocks stored for `cols` (one block per input
// segment a column needs): a block is shared when two or more members own both
// its input segment and its column.
void Stitcher::account(size_t i, const std::vector<Column>& cols, const Layout& in, const std::vector<int>& need) {
  const int64_t k = op(0, i).kernelSize();
  bool hasBias = false;
  for (int t = 0; t < members(); ++t) hasBias = hasBias || !op(t, i).bias.empty();
  for (const Column& col : cols) {
    std::vector<std::pair<Owners, int64_t>> blocks;  // (owners of both, bytes)
    for (int p : need) {
      const Segment& s = in.segments()[static_cast<size_t>(p)];
      blocks.emplace_back(s.owners & col.owners, s.size * k * 4);
    }
    if (hasBias) blocks.emplace_back(col.owners, 4);
    for (const auto& [both, bytes] : blocks) {
      if (popcount(both) >= 2) {
        stats_.sharedBytes += bytes;
        for (int t : membersOf(both)) stats_.memberSharedBytes[static_cast<size_t>(t)] += bytes;
      } else {
        stats_.exclusiveBytes += bytes;
      }
    }
  }
}

// Columns needing the same input segments are adjacent and share one weight
// block row (Eq. 2: [U X1 X2]); the most-needing first.
std::vector<WeightBlock> Stitcher::planBlocks(size_t i, const Layout& in, std::vector<Column>& cols) const {
  const auto& segs = in.segments();
  std::vector<std::tuple<size_t, std::vector<int>, int, Owners, int64_t>> order;
  for (const Column& c : cols) {
    std::vector<int> need;
    for (size_t p = 0; p < segs.size(); ++p)
      if (segs[p].owners & c.owners) need.push_back(static_cast<int>(p));
    order.emplace_back(segs.size() - need.size(), need, -popcount(c.owners), c.owners, c.channel);
  }
  std::sort(order.begin(), order.end());
  cols.clear();
  std::vector<WeightBlock> blocks;
  for (const auto& [rank, need, neg, owners, channel] : order) {
    cols.push_back(Column{owners, channel});
    const bool split = !blocks.empty() && restrict() && blocks.back().cols.back().owners != owners;
    if (blocks.empty() || blocks.back().need != need || split) {
      blocks.push_back(WeightBlock{need, {}, {}, {}, {}});
      for (int p : need)
        for (int64_t c = 0; c < segs[static_cast<size_t>(p)].size; ++c) blocks.back().sel.push_back(segs[static_cast<size_t>(p)].begin + c);
    }
    blocks.back().cols.push_back(cols.back());
  }
  return blocks;
}

// The block's weights [out][sel][kernel] and biases: entry (column, input
// column) from any member owning both (they agree by construction).
void Stitcher::fillBlock(size_t i, const Layout& in, WeightBlock& b) const {
  bool& clean = b.clean;
  const int64_t k = op(0, i).kernelSize();
  for (const Column& oc : b.cols) {
    for (int64_t s : b.sel) {
      const Column& ic = in.columns()[static_cast<size_t>(s)];
      const float* src = op(lowestMember(oc.owners & ic.owners), i).row(oc.channel, ic.channel);
      b.w.insert(b.w.end(), src, src + k);
      if (ic.owners & ~oc.owners) clean = false;  // rows of other members compute garbage here
    }
    const TaskOp& owner = op(lowestMember(oc.owners), i);
    const float bv = owner.bias.empty() ? 0.f : owner.bias[static_cast<size_t>(oc.channel)];
    b.bias.push_back(bv);
    if (bv != 0.f && oc.owners != all()) clean = false;
  }
}

// All rows, or (restrictRows) only the row blocks of the members owning the
// block's columns when they are contiguous: the other rows become zeros, so
// the block leaves no garbage behind.
void Stitcher::chooseRows(WeightBlock& b, const Rows& rows) const {
  b.rowBegin = 0;
  b.rows = rows.total;
  if (!restrict()) return;
  const Owners owners = b.cols.front().owners;
  for (const Column& c : b.cols)
    if (c.owners != owners) return;
  std::vector<size_t> in;  // row blocks whose members own the columns (all or none of them do)
  for (size_t c = 0; c < rows.classes.size(); ++c)
    if (rows.classes[c] & owners) in.push_back(c);
  if (in.size() == rows.classes.size()) return;
  for (size_t k = 1; k < in.size(); ++k)
    if (in[k] != in[k - 1] + 1) return;
  b.rowBegin = rows.begin[in.front()];
  b.rows = rows.begin[in.back()] + rows.count[in.back()] - b.rowBegin;
  b.clean = true;
}

Expected<Value> Stitcher::weighted(size_t i) {
  const TaskOp& op0 = op(0, i);
  ZP_ASSIGN_OR_RETURN(Value in, value(op0.inputs[0]));
  std::vector<int64_t> couts;
  for (int t = 0; t < members(); ++t) {
    if (op(t, i).cin != in.layout.channels(t))
      return makeError("node '{}': {} reads {} channels but its input has {}", op0.name,
                       nets_[static_cast<size_t>(t)].task, op(t, i).cin, in.layout.channels(t));
    couts.push_back(op(t, i).cout);
  }
  std::vector<Column> cols = mergeColumns(i, in.layout);
  std::vector<WeightBlock> blocks = planBlocks(i, in.layout, cols);
  Layout out(cols, couts);
  if (!netFuse()) in = splitRows(in, out, op0.name + "/split");
  const std::string input = masked(in);
  int64_t spatial = 1;
  const auto& outShape = nets_[0].outputShapes[i];
  for (size_t d = 2; d < outShape.size(); ++d) spatial *= outShape[d];
  bool clean = true;
  for (WeightBlock& b : blocks) {
    fillBlock(i, in.layout, b);
    chooseRows(b, in.rows);
    clean = clean && b.clean;
    account(i, b.cols, in.layout, b.need);
    stats_.flops += 2.0 * static_cast<double>(b.rows) * static_cast<double>(b.cols.size() * b.sel.size()) *
                    op0.kernelSize() * spatial;
  }
  for (int t = 0; t < members(); ++t)
    stats_.memberFlops += 2.0 * static_cast<double>(nets_[static_cast<size_t>(t)].inputShape[0] * op(t, i).cout * op(t, i).cin) *
                          op0.kernelSize() * spatial;
  ++stats_.weightedNodes;
  std::string name = emitWeighted(i, in, input, blocks);
  return Value{name, out, clean || netFuse(), in.rank, in.rows};
}

// One Conv / Gemm per block on the input columns it needs, concatenated; a
// block-diagonal Conv (every block reads its own segment, Eq. 8 with only Z
// blocks, and NetFuse) becomes one grouped Conv.
std::string Stitcher::emitWeighted(size_t i, const Value& in, const std::string& input,
                                   std::vector<WeightBlock>& blocks) {
  const TaskOp& op0 = op(0, i);
  const int64_t width = in.layout.size();
  bool hasBias = false;
  for (int t = 0; t < members(); ++t) hasBias = hasBias || !op(t, i).bias.empty();
  bool grouped = op0.opType == "Conv" && blocks.size() > 1 && !restrict();
  for (size_t b = 0; b < blocks.size() && grouped; ++b)
    grouped = blocks[b].need.size() == 1 && blocks[b].sel.size() == blocks[0].sel.size() &&
              blocks[b].cols.size() == blocks[0].cols.size() &&
              (b == 0 ? blocks[b].sel.front() == 0 : blocks[b].sel.front() == blocks[b - 1].sel.back() + 1);
  grouped = grouped && blocks.back().sel.back() + 1 == width;
  if (grouped) {
    for (size_t b = 1; b < blocks.size(); ++b) {
      blocks[0].w.insert(blocks[0].w.end(), blocks[b].w.begin(), blocks[b].w.end());
      blocks[0].bias.insert(blocks[0].bias.end(), blocks[b].bias.begin(), blocks[b].bias.end());
      blocks[0].cols.insert(blocks[0].cols.end(), blocks[b].cols.begin(), blocks[b].cols.end());
    }
    const int64_t groups = static_cast<int64_t>(blocks.size());
    blocks.resize(1);
    return emitBlock(i, input, blocks[0], hasBias, groups, op0.name);
  }
  std::vector<std::string> parts;
  for (size_t b = 0; b < blocks.size(); ++b) {
    std::string base = blocks.size() == 1 ? op0.name : op0.name + "/block" + std::to_string(b);
    std::string x = em_.selectColumns(input, width, blocks[b].sel, base + "/in");
    const int64_t all = in.rows.total;
    const bool restricted = !netFuse() && blocks[b].rows < all;
    if (restricted) x = em_.slice(x, 0, blocks[b].rowBegin, blocks[b].rowBegin + blocks[b].rows, base + "/rows");
    std::string y = emitBlock(i, x, blocks[b], hasBias, 1, base);
    if (restricted) {
      std::vector<int64_t> dims = nets_[0].outputShapes[i];
      dims[0] = blocks[b].rows;
      dims[1] = static_cast<int64_t>(blocks[b].cols.size());
      y = em_.padZeros(y, dims, 0, blocks[b].rowBegin, all - blocks[b].rowBegin - blocks[b].rows, base + "/padded");
    }
    parts.push_back(y);
  }
  if (parts.size() == 1) return parts[0];
  auto& concat = em_.node("Concat", parts, op0.name + "/concat");
  Emitter::setInt(concat, "axis", 1);
  return concat.output(0);
}

std::string Stitcher::emitBlock(size_t i, const std::string& x, const WeightBlock& b, bool hasBias, int64_t groups,
                                const std::string& base) {
  const TaskOp& op0 = op(0, i);
  std::vector<int64_t> dims{static_cast<int64_t>(b.cols.size()), static_cast<int64_t>(b.sel.size())};
  dims.insert(dims.end(), op0.kernel.begin(), op0.kernel.end());
  std::vector<std::string> inputs{x, em_.floats(base + "/weight", dims, b.w, false)};
  if (hasBias) inputs.push_back(em_.floats(base + "/bias", {static_cast<int64_t>(b.cols.size())}, b.bias, false));
  auto& n = em_.node(op0.opType, inputs, base);
  if (op0.opType == "Gemm") {
    Emitter::setInt(n, "transB", 1);
    return n.output(0);
  }
  for (const auto& a : op0.node.attribute())
    if (a.name() != "group") *n.add_attribute() = a;
  if (groups > 1) Emitter::setInt(n, "group", groups);
  return n.output(0);
}

}  // namespace zp::mts
