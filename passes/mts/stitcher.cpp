#include "passes/mts/stitcher.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "libplan/util/hash.h"

namespace zp::mts {

void Rows::add(Owners members, int64_t rows) {
  classes.push_back(members);
  begin.push_back(total);
  count.push_back(rows);
  total += rows;
}

size_t Rows::classOf(int t) const {
  for (size_t c = 0; c < classes.size(); ++c)
    if (classes[c] & (Owners{1} << t)) return c;
  assert(false && "member without rows");
  return 0;
}

Stitcher::Stitcher(const std::vector<TaskNet>& nets, const StitchParams& params, onnx::GraphProto* graph)
    : nets_(nets), params_(params), em_(graph), graph_(graph) {
  stats_.memberSharedBytes.assign(nets.size(), 0);
}

// Members in an order that keeps members sharing more leading layers next to
// each other (lexicographic by the content of each weighted layer, over the
// channels every member has, so that widened layers still sort with the layer
// they widen): then the members owning a block of columns tend to have
// contiguous rows, which restricted products need.
static std::vector<int> rowOrder(const std::vector<TaskNet>& nets) {
  std::vector<std::vector<std::string>> keys(nets.size());
  for (size_t i = 0; i < nets[0].ops.size(); ++i) {
    if (nets[0].ops[i].kind != OpKind::Weighted) continue;
    int64_t cout = nets[0].ops[i].cout, cin = nets[0].ops[i].cin;
    for (const auto& net : nets) {
      cout = std::min(cout, net.ops[i].cout);
      cin = std::min(cin, net.ops[i].cin);
    }
    for (size_t t = 0; t < nets.size(); ++t) {
      const TaskOp& op = nets[t].ops[i];
      std::string bytes;
      for (int64_t o = 0; o < cout; ++o) {
        for (int64_t c = 0; c < cin; ++c)
          bytes.append(reinterpret_cast<const char*>(op.row(o, c)), static_cast<size_t>(op.kernelSize()) * sizeof(float));
        if (!op.bias.empty()) bytes.append(reinterpret_cast<const char*>(&op.bias[static_cast<size_t>(o)]), sizeof(float));
      }
      keys[t].push_back(sha256Hex(bytes));
    }
  }
  std::vector<int> order(nets.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return keys[static_cast<size_t>(a)] < keys[static_cast<size_t>(b)]; });
  return order;
}

static void setTensorType(onnx::ValueInfoProto* v, const std::string& name, const std::vector<int64_t>& shape) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

// Mts: inputs of the same shape share columns; the others are zero-padded into
// their own columns (Eq. 4) and all are concatenated along the batch (Eq. 1, 7),
// one row block per member (or per shared input). NetFuse: every member's
// channels side by side, one batch.
Status Stitcher::inputs() {
  std::vector<Column> cols;
  std::vector<int64_t> channels;
  std::vector<std::vector<int64_t>> classes;  // distinct input shapes without the batch
  std::vector<Owners> classOwners;
  for (int t = 0; t < members(); ++t) {
    const auto& shape = nets_[static_cast<size_t>(t)].inputShape;
    channels.push_back(shape[1]);
    std::vector<int64_t> key(shape.begin() + 1, shape.end());
    auto it = std::find(classes.begin(), classes.end(), key);
    if (netFuse() || it == classes.end()) {
      classes.push_back(key);
      classOwners.push_back(0);
      it = classes.end() - 1;
    }
    classOwners[static_cast<size_t>(it - classes.begin())] |= Owners{1} << t;
  }
  std::vector<int64_t> offset;
  int64_t width = 0;
  for (size_t k = 0; k < classes.size(); ++k) {
    offset.push_back(width);
    for (int64_t c = 0; c < classes[k][0]; ++c) cols.push_back(Column{classOwners[k], c});
    width += classes[k][0];
  }
  Rows rows;
  std::vector<std::string> parts;
  const std::vector<int> order = rowOrder(nets_);
  for (size_t k = 0; k < classes.size(); ++k) {
    std::vector<int> ms;
    for (int t : order)
      if (classOwners[k] & (Owners{1} << t)) ms.push_back(t);
    const bool shared = params_.sharedInput && !netFuse() && ms.size() > 1;
    for (int t : shared ? std::vector<int>{ms.front()} : ms) {
      const TaskNet& net = nets_[static_cast<size_t>(t)];
      std::string name = shared ? fmt::format("shared{}/{}", k, net.input) : net.task + "/" + net.input;
      setTensorType(graph_->add_input(), name, net.inputShape);
      for (int u : shared ? ms : std::vector<int>{t})
        io_.push_back(MemberIo{nets_[static_cast<size_t>(u)].task, nets_[static_cast<size_t>(u)].input, name,
                               nets_[static_cast<size_t>(u)].outputs, {}});
      rows.add(shared ? classOwners[k] : Owners{1} << t, netFuse() ? 0 : net.inputShape[0]);
      if (!netFuse() && classes.size() > 1)
        name = em_.padZeros(name, net.inputShape, 1, offset[k], width - offset[k] - classes[k][0], name + "/padded");
      parts.push_back(name);
    }
  }
  std::sort(io_.begin(), io_.end(), [&](const MemberIo& a, const MemberIo& b) {
    auto index = [&](const MemberIo& m) {
      for (int t = 0; t < members(); ++t)
        if (nets_[static_cast<size_t>(t)].task == m.task) return t;
      return 0;
    };
    return index(a) < index(b);
  });
  if (netFuse()) {
    rows = Rows{};
    rows.add(all(), nets_[0].inputShape[0]);
  }
  std::string input = parts[0];
  if (parts.size() > 1) {
    auto& concat = em_.node("Concat", parts, "mts/input");
    Emitter::setInt(concat, "axis", netFuse() ? 1 : 0);
    input = concat.output(0);
  }
  values_[nets_[0].input] = Value{input, Layout(cols, channels), true, nets_[0].inputShape.size(), rows};
  return {};
}

Expected<Value> Stitcher::value(const std::string& tensor) const {
  auto it = values_.find(tensor);
  if (it == values_.end()) return makeError("tensor '{}' is read before it is computed", tensor);
  return it->second;
}

// Zeroes the entries of every row in the columns none of its members owns, so
// that the redundant products of the last weighted layer (P1·X2 in Eq. 6) do not
// reach the next one.
std::string Stitcher::masked(const Value& v) {
  if (v.clean || netFuse()) return v.name;
  auto it = masked_.find(v.name);
  if (it != masked_.end()) return it->second;
  const int64_t width = v.layout.size();
  std::vector<float> mask(static_cast<size_t>(v.rows.total * width), 0.f);
  for (size_t c = 0; c < v.rows.classes.size(); ++c)
    for (int64_t r = v.rows.begin[c]; r < v.rows.begin[c] + v.rows.count[c]; ++r)
      for (int64_t k = 0; k < width; ++k)
        if (v.layout.columns()[static_cast<size_t>(k)].owners & v.rows.classes[c]) mask[static_cast<size_t>(r * width + k)] = 1.f;
  std::vector<int64_t> dims{v.rows.total, width};
  dims.resize(v.rank, 1);
  std::string m = em_.floats(v.name + "/mask", dims, mask, true);
  ++stats_.masks;
  std::string out = em_.node("Mul", {v.name, m}, v.name + "/masked").output(0);
  masked_[v.name] = out;
  return out;
}

// The value with its row blocks rearranged: row block k of `to` is a copy of
// block fromClass[k] of `in`.
Value Stitcher::gatherRows(const Value& in, const Rows& to, const std::vector<size_t>& fromClass,
                           const std::string& base) {
  std::vector<int64_t> index;
  for (size_t c : fromClass)
    for (int64_t r = 0; r < in.rows.count[c]; ++r) index.push_back(in.rows.begin[c] + r);
  Value out = in;
  out.rows = to;
  out.name = em_.gather(in.name, index, base, 0);
  return out;
}

// A weighted layer at which members of one row block diverge (they come to own
// different output columns) gets a copy of the block per group of members.
Value Stitcher::splitRows(const Value& in, const Layout& out, const std::string& base) {
  Rows to;
  std::vector<size_t> from;
  for (size_t c = 0; c < in.rows.classes.size(); ++c) {
    std::vector<std::pair<std::vector<int64_t>, Owners>> parts;  // owned output columns -> members
    for (int t : membersOf(in.rows.classes[c])) {
      std::vector<int64_t> owned;
      for (int64_t ch = 0; ch < out.channels(t); ++ch) owned.push_back(out.columnOf(t, ch));
      auto it = std::find_if(parts.begin(), parts.end(), [&](const auto& p) { return p.first == owned; });
      if (it == parts.end()) parts.emplace_back(owned, Owners{1} << t);
      else it->second |= Owners{1} << t;
    }
    for (const auto& p : parts) {
      to.add(p.second, in.rows.count[c]);
      from.push_back(c);
    }
  }
  if (to.classes.size() == in.rows.classes.size()) return in;
  return gatherRows(in, to, from, base);
}

// Element-wise addition (the residual join, §IV-B2/3). Row blocks are first
// brought to a common refinement; when the two branches' column layouts differ,
// each is gathered into the refinement of those: one column per distinct
// (column in a, column in b) pair of a member's channel.
Expected<Value> Stitcher::add(size_t i) {
  ZP_ASSIGN_OR_RETURN(Value a, value(op(0, i).inputs[0]));
  ZP_ASSIGN_OR_RETURN(Value b, value(op(0, i).inputs[1]));
  const std::string base = op(0, i).name;
  if (!(a.rows == b.rows)) {
    Rows to;
    std::vector<size_t> fa, fb;
    for (size_t ca = 0; ca < a.rows.classes.size(); ++ca)
      for (size_t cb = 0; cb < b.rows.classes.size(); ++cb)
        if (Owners both = a.rows.classes[ca] & b.rows.classes[cb]) {
          to.add(both, a.rows.count[ca]);
          fa.push_back(ca);
          fb.push_back(cb);
        }
    a = gatherRows(a, to, fa, base + "/rows_a");
    b = gatherRows(b, to, fb, base + "/rows_b");
  }
  if (a.layout == b.layout) {
    std::string out = em_.node("Add", {a.name, b.name}, base).output(0);
    return Value{out, a.layout, a.clean && b.clean, a.rank, a.rows};
  }
  std::map<std::pair<int64_t, int64_t>, Owners> pairs;
  std::vector<int64_t> channels;
  for (int t = 0; t < members(); ++t) {
    if (a.layout.channels(t) != b.layout.channels(t))
      return makeError("node '{}': the two inputs of {} have {} and {} channels", base, nets_[static_cast<size_t>(t)].task,
                       a.layout.channels(t), b.layout.channels(t));
    channels.push_back(a.layout.channels(t));
    for (int64_t c = 0; c < a.layout.channels(t); ++c) pairs[{a.layout.columnOf(t, c), b.layout.columnOf(t, c)}] |= Owners{1} << t;
  }
  std::vector<std::tuple<int, Owners, int64_t, int64_t, int64_t>> order;  // -popcount, owners, channel, ka, kb
  for (const auto& [p, owners] : pairs)
    order.emplace_back(-popcount(owners), owners, a.layout.columns()[static_cast<size_t>(p.first)].channel, p.first, p.second);
  std::sort(order.begin(), order.end());
  std::vector<Column> cols;
  std::vector<int64_t> ia, ib;
  bool clean = a.clean && b.clean;
  for (const auto& [neg, owners, channel, ka, kb] : order) {
    cols.push_back(Column{owners, channel});
    ia.push_back(ka);
    ib.push_back(kb);
    clean = clean && a.layout.columns()[static_cast<size_t>(ka)].owners == owners &&
            b.layout.columns()[static_cast<size_t>(kb)].owners == owners;
  }
  ++stats_.realignments;
  std::string ga = em_.selectColumns(a.name, a.layout.size(), ia, base + "/align_a");
  std::string gb = em_.selectColumns(b.name, b.layout.size(), ib, base + "/align_b");
  std::string out = em_.node("Add", {ga, gb}, base).output(0);
  return Value{out, Layout(cols, channels), clean, a.rank, a.rows};
}

// Relu, pooling and Flatten act on each element or each channel's own window:
// the layout stays, and zeros stay zeros (§IV-B3).
Expected<Value> Stitcher::unary(size_t i) {
  const TaskOp& o = op(0, i);
  ZP_ASSIGN_OR_RETURN(Value in, value(o.inputs[0]));
  if (o.kind == OpKind::Flatten) {
    for (int t = 0; t < members(); ++t) {
      const auto& shape = nets_[static_cast<size_t>(t)].outputShapes[i];
      if (shape.size() != 2 || shape[1] != in.layout.channels(t))
        return makeError("node '{}': Flatten over spatial positions is not supported (only [N,C,1,1])", o.name);
    }
  }
  auto& n = em_.node(o.opType, {in.name}, o.name);
  for (const auto& a : o.node.attribute()) *n.add_attribute() = a;
  return Value{n.output(0), in.layout, in.clean, o.kind == OpKind::Flatten ? 2 : in.rank, in.rows};
}

// Each member's outputs: its rows (Mts) and its columns, in its channel order.
Status Stitcher::outputs() {
  for (int t = 0; t < members(); ++t) {
    const TaskNet& net = nets_[static_cast<size_t>(t)];
    for (const auto& name : net.outputs) {
      ZP_ASSIGN_OR_RETURN(Value v, value(name));
      const std::string base = net.task + "/" + name;
      const size_t c = v.rows.classOf(t);
      std::string rows = v.name;
      if (v.rows.classes.size() > 1)
        rows = em_.slice(v.name, 0, v.rows.begin[c], v.rows.begin[c] + v.rows.count[c], base + "/rows");
      std::vector<int64_t> cols;
      for (int64_t ch = 0; ch < v.layout.channels(t); ++ch) cols.push_back(v.layout.columnOf(t, ch));
      std::string picked = em_.selectColumns(rows, v.layout.size(), cols, base + "/columns");
      em_.node("Identity", {picked}, base, base);
      std::vector<int64_t> shape;
      for (size_t i = 0; i < net.ops.size(); ++i)
        if (net.ops[i].output == name) shape = net.outputShapes[i];
      if (shape.empty()) return makeError("{}: output '{}' is not computed by a supported node", net.task, name);
      setTensorType(graph_->add_output(), base, shape);
      io_[static_cast<size_t>(t)].stitchedOutputs.push_back(base);
    }
  }
  return {};
}

Status Stitcher::run() {
  ZP_TRY(inputs());
  for (size_t i = 0; i < nets_[0].ops.size(); ++i) {
    Expected<Value> v = Error{};
    switch (op(0, i).kind) {
      case OpKind::Weighted: v = weighted(i); break;
      case OpKind::Add: v = add(i); break;
      default: v = unary(i); break;
    }
    if (!v.ok()) return v.error();
    values_[op(0, i).output] = std::move(*v);
  }
  ZP_TRY(outputs());
  stats_.auxBytes = em_.auxBytes();
  return {};
}

}  // namespace zp::mts
