#include "drivers/concurrent_flow/executed_schedule.h"

#include <algorithm>
#include <cassert>
#include <tuple>

#include "libplan/runtime/placed_program.h"
#include "libplan/runtime/serve/placed_executor.h"

namespace zp::drivers {
namespace {

Status renameNode(onnx::NodeProto& node, const std::string& prefix, const std::string& label) {
  for (const auto& a : node.attribute())
    if (a.has_g() || a.graphs_size() > 0)
      return makeError("{}: node '{}' has a subgraph attribute; only flat graphs are joined", label, node.name());
  node.set_name(prefix + node.name());
  for (auto& s : *node.mutable_input())
    if (!s.empty()) s = prefix + s;
  for (auto& s : *node.mutable_output())
    if (!s.empty()) s = prefix + s;
  return {};
}

// The layer group of every node of `m`: its own, or for a node in no group (a
// constant) the group of the first node that reads it (the first group if none does).
Expected<std::vector<int>> groupOfNodes(const ScheduledModel& m) {
  const auto& g = m.model.graph();
  std::map<std::string, int> named;
  for (size_t k = 0; k < m.groupNodes.size(); ++k)
    for (const auto& n : m.groupNodes[k]) named[n] = static_cast<int>(k);
  std::vector<int> group(static_cast<size_t>(g.node_size()), -1);
  size_t found = 0;
  for (int n = 0; n < g.node_size(); ++n) {
    if (g.node(n).name().empty()) return makeError("{}: node {} has no name", m.name, n);
    if (auto it = named.find(g.node(n).name()); it != named.end()) group[static_cast<size_t>(n)] = it->second, ++found;
  }
  if (found != named.size()) return makeError("{}: a layer group names a node the model does not have", m.name);
  std::map<std::string, int> firstReaderGroup;  // filled back to front: ends as the first reader's
  for (int n = g.node_size() - 1; n >= 0; --n) {
    auto& own = group[static_cast<size_t>(n)];
    if (own < 0) {
      own = 0;
      for (const auto& out : g.node(n).output())
        if (auto it = firstReaderGroup.find(out); it != firstReaderGroup.end()) own = it->second;
    }
    for (const auto& in : g.node(n).input()) firstReaderGroup[in] = own;
  }
  return group;
}

void renameValues(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* values, const std::string& prefix) {
  for (auto& v : *values) v.set_name(prefix + v.name());
}

}  // namespace

Expected<JoinedSchedule> joinScheduledModels(const std::vector<ScheduledModel>& models, const sim::Schedule& schedule,
                                             const sim::SimResult& run) {
  assert(!models.empty() && models.size() == run.dnns.size());
  JoinedSchedule j;
  const auto& first = models.front().model;
  j.model.set_ir_version(first.ir_version());
  *j.model.mutable_opset_import() = first.opset_import();
  auto& graph = *j.model.mutable_graph();
  graph.set_name("joined_schedule");
  // (group start, DNN, group, node index) orders the joined graph's nodes.
  std::vector<std::tuple<double, size_t, int, int, onnx::NodeProto>> nodes;
  for (size_t d = 0; d < models.size(); ++d) {
    const auto& m = models[d];
    const std::string prefix = m.name + "/";
    if (m.model.opset_import().size() != first.opset_import().size() ||
        !std::equal(first.opset_import().begin(), first.opset_import().end(), m.model.opset_import().begin(),
                    [](const auto& a, const auto& b) { return a.domain() == b.domain() && a.version() == b.version(); }))
      return makeError("{}: its opsets differ from {}'s; the joined graph takes one", m.name, models.front().name);
    ZP_ASSIGN_OR_RETURN(auto group, groupOfNodes(m));
    auto src = m.model.graph();
    for (int n = 0; n < src.node_size(); ++n) {
      onnx::NodeProto node = src.node(n);
      ZP_TRY(renameNode(node, prefix, m.name));
      const int k = group[static_cast<size_t>(n)];
      j.nodeAccelerator[node.name()] = schedule.assign[d][static_cast<size_t>(k)];
      nodes.emplace_back(run.dnns[d].groups[static_cast<size_t>(k)].start, d, k, n, std::move(node));
    }
    renameValues(src.mutable_input(), prefix);
    renameValues(src.mutable_output(), prefix);
    renameValues(src.mutable_value_info(), prefix);
    for (auto& t : *src.mutable_initializer()) t.set_name(prefix + t.name());
    for (auto& v : src.input()) *graph.add_input() = v;
    for (auto& v : src.output()) *graph.add_output() = v;
    for (auto& v : src.value_info()) *graph.add_value_info() = v;
    for (auto& t : *src.mutable_initializer()) *graph.add_initializer() = std::move(t);
  }
  std::stable_sort(nodes.begin(), nodes.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(a), std::get<3>(a)) <
           std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(b), std::get<3>(b));
  });
  for (auto& n : nodes) *graph.add_node() = std::move(std::get<4>(n));
  return j;
}

Expected<ExecutedSchedule> executeSchedule(const std::vector<ScheduledModel>& models, const sim::Problem& problem,
                                           const sim::Schedule& schedule,
                                           const std::vector<runtime::serve::ProcessorConfig>& processors, int warmup,
                                           int repeat, uint64_t seed) {
  assert(static_cast<int>(processors.size()) == problem.numAccelerators());
  const auto simulated = sim::simulate(problem, schedule);
  ZP_ASSIGN_OR_RETURN(auto joined, joinScheduledModels(models, schedule, simulated));
  std::vector<std::unique_ptr<runtime::Session>> sessions;
  for (const auto& p : processors) {
    ZP_ASSIGN_OR_RETURN(auto s, runtime::Session::fromModel(joined.model, "joined schedule",
                                                             runtime::serve::sessionOptions(p)));
    sessions.push_back(std::move(s));
  }
  std::vector<int> placement;
  for (const auto& n : sessions.front()->nodes()) {
    auto it = joined.nodeAccelerator.find(n.name);
    if (it == joined.nodeAccelerator.end()) return makeError("joined schedule: the runtime runs '{}', no group's node", n.name);
    placement.push_back(it->second);
  }
  const auto inputs = runtime::randomInputs(*sessions.front(), seed);
  runtime::PlacedProgramParams params;
  params.exclusive = runtime::serve::sharedCorePairs(processors);
  ZP_ASSIGN_OR_RETURN(auto program, runtime::PlacedProgram::create(std::move(sessions), placement, params));
  ExecutedSchedule out;
  out.handoffs = program->handoffs();
  ZP_ASSIGN_OR_RETURN(auto exec, runtime::serve::PlacedExecutor::start(std::move(program), processors));
  ZP_ASSIGN_OR_RETURN(out.wall, exec->measure(inputs, warmup, repeat));
  ZP_ASSIGN_OR_RETURN(auto profiled, exec->run(inputs, true));
  (void)profiled;
  out.trace = runtime::serve::placedRunTrace(exec->program(), processors, "executed concurrent schedule");
  return out;
}

}  // namespace zp::drivers
