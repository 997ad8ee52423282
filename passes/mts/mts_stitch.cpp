#include "passes/mts/mts_stitch.h"

#include "libplan/graph/tensor.h"
#include "passes/mts/stitcher.h"

namespace zp::mts {

namespace {

std::string shapeText(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

std::string attributesKey(const onnx::NodeProto& n) {
  std::string key;
  for (const auto& a : n.attribute()) key += a.SerializeAsString();
  return key;
}

// The members must be the same network up to channel counts: the same nodes in
// the same order reading the same tensors, with the same attributes.
Status checkAligned(const std::vector<TaskNet>& nets) {
  const TaskNet& ref = nets[0];
  for (size_t t = 1; t < nets.size(); ++t) {
    const TaskNet& net = nets[t];
    if (net.ops.size() != ref.ops.size())
      return makeError("'{}' and '{}' are not aligned: {} and {} stitchable nodes", ref.task, net.task, ref.ops.size(),
                       net.ops.size());
    if (net.inputShape.size() != ref.inputShape.size() ||
        !std::equal(net.inputShape.begin() + 2, net.inputShape.end(), ref.inputShape.begin() + 2))
      return makeError("inputs of '{}' {} and '{}' {} differ in rank or spatial size", ref.task,
                       shapeText(ref.inputShape), net.task, shapeText(net.inputShape));
    if (net.outputs != ref.outputs) return makeError("'{}' and '{}' have different output names", ref.task, net.task);
    for (size_t i = 0; i < ref.ops.size(); ++i) {
      const TaskOp& a = ref.ops[i];
      const TaskOp& b = net.ops[i];
      if (a.name != b.name || a.opType != b.opType || a.inputs != b.inputs || a.output != b.output)
        return makeError("'{}' and '{}' are not aligned: node {} is '{}' ({}) in one and '{}' ({}) in the other",
                         ref.task, net.task, i, a.name, a.opType, b.name, b.opType);
      if (attributesKey(a.node) != attributesKey(b.node) || a.kernel != b.kernel)
        return makeError("'{}' and '{}' differ in the attributes of node '{}'", ref.task, net.task, a.name);
      const auto& sa = ref.outputShapes[i];
      const auto& sb = net.outputShapes[i];
      if (sa.size() != sb.size() || !std::equal(sa.begin() + 2, sa.end(), sb.begin() + 2))
        return makeError("'{}' and '{}' differ in the spatial size of '{}': {} and {}", ref.task, net.task, a.output,
                         shapeText(sa), shapeText(sb));
    }
  }
  return {};
}

const onnx::TensorProto* findInitializer(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& t : m.graph().initializer())
    if (t.name() == name) return &t;
  return nullptr;
}

// Declared shared initializers: present in every member with one shape and one content.
Status checkDeclaredShared(const std::vector<const onnx::ModelProto*>& models, const std::vector<std::string>& tasks,
                           const std::vector<std::string>& names) {
  for (const auto& name : names) {
    const onnx::TensorProto* first = findInitializer(*models[0], name);
    if (!first) return makeError("shared tensor '{}' is missing in '{}'", name, tasks[0]);
    for (size_t t = 1; t < models.size(); ++t) {
      const onnx::TensorProto* other = findInitializer(*models[t], name);
      if (!other) return makeError("shared tensor '{}' is missing in '{}'", name, tasks[t]);
      std::vector<int64_t> a(first->dims().begin(), first->dims().end()), b(other->dims().begin(), other->dims().end());
      if (a != b || first->data_type() != other->data_type())
        return makeError("shared tensor '{}' has shape {} in '{}' but {} in '{}'", name, shapeText(a), tasks[0],
                         shapeText(b), tasks[t]);
      if (graph::rawBytes(*first) != graph::rawBytes(*other))
        return makeError("shared tensor '{}' differs between '{}' and '{}'", name, tasks[0], tasks[t]);
    }
  }
  return {};
}

}  // namespace

Expected<StitchedGroup> stitchGroup(const std::vector<const onnx::ModelProto*>& models,
                                    const std::vector<std::string>& tasks, const StitchParams& params) {
  assert(models.size() == tasks.size());
  if (models.size() < 2) return makeError("a multitask group needs at least 2 members, got {}", models.size());
  if (models.size() > static_cast<size_t>(kMaxMembers))
    return makeError("a multitask group has at most {} members, got {}", kMaxMembers, models.size());
  ZP_TRY(checkDeclaredShared(models, tasks, params.declaredShared));
  std::vector<TaskNet> nets;
  for (size_t t = 0; t < models.size(); ++t) {
    ZP_ASSIGN_OR_RETURN(TaskNet net, buildTaskNet(*models[t], tasks[t]));
    nets.push_back(std::move(net));
  }
  ZP_TRY(checkAligned(nets));
  if (params.mode == StitchMode::NetFuse)
    for (const auto& net : nets)
      if (net.inputShape[0] != nets[0].inputShape[0])
        return makeError("NetFuse needs one batch size: '{}' has {}, '{}' {}", nets[0].task, nets[0].inputShape[0],
                         net.task, net.inputShape[0]);
  StitchedGroup out;
  out.model.set_ir_version(7);
  auto* opset = out.model.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  out.model.set_producer_name("zooplan-mts");
  auto* graph = out.model.mutable_graph();
  graph->set_name(params.graphName);
  Stitcher stitcher(nets, params, graph);
  ZP_TRY(stitcher.run());
  out.stats = stitcher.stats();
  out.members = stitcher.memberIo();
  for (const auto& net : nets) {
    out.stats.memberBytes += net.weightBytes;
    out.stats.memberFoldedBytes += net.foldedWeightBytes;
  }
  if (params.mode == StitchMode::Mts)
    for (size_t t = 0; t < nets.size(); ++t)
      if (out.stats.memberSharedBytes[t] == 0)
        return makeError("'{}' shares no weights with the other members of the group", nets[t].task);
  return out;
}

}  // namespace zp::mts
