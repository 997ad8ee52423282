// Test helper: rewrites a fixed-batch ONNX model into what torch.onnx.export
// writes for the same network, so the CLI suites can compare a zoo with its
// twins without python or torch at test time.
//
//   zp_onnx_batch_twin IN.onnx OUT.onnx fixed|dynamic|dynamic-hw
//
// Both forms replace every Flatten(axis=1) by torch's rendering of
// `x.view(x.size(0), -1)` (opset 13, do_constant_folding=False):
//   fixed:   Reshape(x, Concat(Unsqueeze(Constant 1), Unsqueeze(Constant -1)))
//   dynamic: Reshape(x, Concat(Unsqueeze(Gather(Shape(x), Constant 0)), Unsqueeze(Constant -1)))
// and `dynamic` also names the leading dim of every graph input and output
// 'batch' (dynamic_axes={'input': {0: 'batch'}, 'logits': {0: 'batch'}}) and
// drops the value_info the fixed batch was inferred with; `dynamic-hw` also
// names an NCHW input's spatial dims 'height' and 'width' (not the batch).
#include <fmt/core.h>

#include <string>

#include "libplan/graph/model_io.h"

namespace {

onnx::NodeProto constantNode(const std::string& name, const std::string& out, int64_t value, bool vector) {
  onnx::NodeProto n;
  n.set_op_type("Constant");
  n.set_name(name);
  n.add_output(out);
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(onnx::TensorProto::INT64);
  if (vector) t->add_dims(1);
  t->add_int64_data(value);
  return n;
}

onnx::NodeProto node(const std::string& op, const std::string& name, std::initializer_list<std::string> ins,
                     const std::string& out) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(name);
  for (const auto& i : ins) n.add_input(i);
  n.add_output(out);
  return n;
}

void setAxis(onnx::NodeProto& n, int64_t axis) {
  auto* a = n.add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(axis);
}

// The nodes torch writes for `x.view(x.size(0), -1)` in place of Flatten node `f`.
std::vector<onnx::NodeProto> viewNodes(const onnx::NodeProto& f, bool dynamic) {
  std::string scope = f.name();
  if (auto slash = scope.rfind('/'); slash != std::string::npos) scope.resize(slash + 1);
  else scope = "/";
  const std::string x = f.input(0);
  auto out = [&](const std::string& n) { return scope + n + "_output_0"; };
  std::vector<onnx::NodeProto> nodes;
  std::string batch;
  if (dynamic) {
    nodes.push_back(node("Shape", scope + "Shape", {x}, out("Shape")));
    nodes.push_back(constantNode(scope + "Constant", out("Constant"), 0, false));
    nodes.push_back(node("Gather", scope + "Gather", {out("Shape"), out("Constant")}, out("Gather")));
    setAxis(nodes.back(), 0);
    batch = out("Gather");
  } else {
    nodes.push_back(constantNode(scope + "Constant", out("Constant"), 1, false));
    batch = out("Constant");
  }
  nodes.push_back(constantNode(scope + "Constant_1", out("Constant_1"), -1, false));
  nodes.push_back(constantNode(scope + "Constant_2", out("Constant_2"), 0, true));
  nodes.push_back(node("Unsqueeze", scope + "Unsqueeze", {batch, out("Constant_2")}, out("Unsqueeze")));
  nodes.push_back(constantNode(scope + "Constant_3", out("Constant_3"), 0, true));
  nodes.push_back(node("Unsqueeze", scope + "Unsqueeze_1", {out("Constant_1"), out("Constant_3")}, out("Unsqueeze_1")));
  nodes.push_back(node("Concat", scope + "Concat", {out("Unsqueeze"), out("Unsqueeze_1")}, out("Concat")));
  setAxis(nodes.back(), 0);
  nodes.push_back(node("Reshape", scope + "Reshape", {x, out("Concat")}, f.output(0)));
  return nodes;
}

bool flattensToMatrix(const onnx::NodeProto& n) {
  if (n.op_type() != "Flatten") return false;
  for (const auto& a : n.attribute())
    if (a.name() == "axis" && a.i() != 1) return false;
  return true;
}

void nameDims(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values, bool spatial) {
  for (auto& vi : values) {
    auto* shape = vi.mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() > 0) shape->mutable_dim(0)->set_dim_param("batch");
    if (spatial && shape->dim_size() == 4) {
      shape->mutable_dim(2)->set_dim_param("height");
      shape->mutable_dim(3)->set_dim_param("width");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 4 ? argv[3] : "";
  if (mode != "fixed" && mode != "dynamic" && mode != "dynamic-hw") {
    fmt::print(stderr, "usage: zp_onnx_batch_twin IN.onnx OUT.onnx fixed|dynamic|dynamic-hw\n");
    return 2;
  }
  const bool dynamic = mode != "fixed";
  auto model = zp::graph::loadModel(argv[1], {.check = true, .inferShapes = false});
  if (!model.ok()) return fmt::print(stderr, "{}\n", model.error().message), 1;
  auto* g = model->mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (const auto& n : g->node()) {
    if (!flattensToMatrix(n)) {
      *nodes.Add() = n;
      continue;
    }
    for (auto& v : viewNodes(n, dynamic)) *nodes.Add() = std::move(v);
  }
  g->mutable_node()->Swap(&nodes);
  g->clear_value_info();
  if (dynamic) {
    nameDims(*g->mutable_input(), mode == "dynamic-hw");
    nameDims(*g->mutable_output(), false);
  }
  if (auto s = zp::graph::checkModel(*model, argv[2]); !s.ok()) return fmt::print(stderr, "{}\n", s.error().message), 1;
  if (auto s = zp::graph::saveModel(*model, argv[2]); !s.ok()) return fmt::print(stderr, "{}\n", s.error().message), 1;
  return 0;
}
