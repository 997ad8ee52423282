#include "drivers/concurrent_flow/executed_schedule.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <tuple>

#include "libplan/runtime/placed_program.h"
#include "libplan/runtime/serve/executor.h"
#include "libplan/runtime/serve/model_file_loader.h"
#include "libplan/runtime/serve/placed_executor.h"
#include "libplan/util/stats.h"

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

ExecutionOrder simulatedOrder(const sim::Problem& problem, const sim::Schedule& schedule) {
  const auto run = sim::simulate(problem, schedule);
  ExecutionOrder order;
  for (size_t d = 0; d < run.dnns.size(); ++d) {
    auto& slots = order.groups.emplace_back();
    for (const auto& g : run.dnns[d].groups) slots.push_back({g.accelerator, g.start});
    order.deps.push_back(problem.dnns[d].deps);
  }
  return order;
}

Expected<JoinedSchedule> joinScheduledModels(const std::vector<ScheduledModel>& models, const ExecutionOrder& order) {
  assert(!models.empty() && models.size() == order.groups.size());
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
    if (m.groupNodes.size() != order.groups[d].size())
      return makeError("{}: {} layer groups, the schedule places {}", m.name, m.groupNodes.size(), order.groups[d].size());
    auto src = m.model.graph();
    for (int n = 0; n < src.node_size(); ++n) {
      onnx::NodeProto node = src.node(n);
      ZP_TRY(renameNode(node, prefix, m.name));
      const int k = group[static_cast<size_t>(n)];
      const GroupSlot& slot = order.groups[d][static_cast<size_t>(k)];
      j.nodeAccelerator[node.name()] = slot.accelerator;
      nodes.emplace_back(slot.startMs, d, k, n, std::move(node));
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

namespace {

// The DNN of each step: the longest "<dnn>/" prefix of its name.
std::vector<int> dnnOfSteps(const std::vector<runtime::NodeInfo>& nodes, const std::vector<ScheduledModel>& models) {
  std::vector<int> dnn(nodes.size(), -1);
  for (size_t s = 0; s < nodes.size(); ++s) {
    size_t longest = 0;
    for (size_t d = 0; d < models.size(); ++d)
      if (models[d].name.size() + 1 > longest && nodes[s].name.rfind(models[d].name + "/", 0) == 0)
        dnn[s] = static_cast<int>(d), longest = models[d].name.size() + 1;
  }
  return dnn;
}

// Per DNN, one profiled round: end of its last step minus its release.
std::vector<double> dnnLatencies(const std::vector<runtime::PlacedStepTiming>& steps, const std::vector<int>& dnnOfStep,
                                 const std::vector<std::vector<int>>& deps) {
  std::vector<double> end(deps.size(), 0);
  for (const auto& t : steps) {
    const int d = dnnOfStep[static_cast<size_t>(t.step)];
    if (d >= 0) end[static_cast<size_t>(d)] = std::max(end[static_cast<size_t>(d)], t.startMs + t.durMs);
  }
  std::vector<double> latency(deps.size());
  for (size_t d = 0; d < deps.size(); ++d) {
    double release = 0;
    for (int e : deps[d]) release = std::max(release, end[static_cast<size_t>(e)]);
    latency[d] = end[d] - release;
  }
  return latency;
}

}  // namespace

namespace {

// The frame's one unit, loaded once before serving (its inputs make the query)
// and handed to the executor when it preloads.
class FrameLoader : public runtime::serve::SubgraphLoader {
 public:
  explicit FrameLoader(std::unique_ptr<runtime::serve::PlacedExecutor> exec) : exec_(std::move(exec)) {}
  Expected<runtime::serve::LoadedSubgraph> load(int, const runtime::serve::ServeSlot&,
                                                const runtime::SessionOptions&) override {
    if (!exec_) return makeError("joined schedule: loaded once, asked again");
    const int64_t bytes = runtime::serve::placedBytes(exec_->program());
    return runtime::serve::LoadedSubgraph{runtime::serve::LoadedUnit(std::move(exec_)), bytes};
  }

 private:
  std::unique_ptr<runtime::serve::PlacedExecutor> exec_;
};

}  // namespace

Expected<ExecutedSchedule> executeSchedule(const std::vector<ScheduledModel>& models, const ExecutionOrder& order,
                                           const std::vector<Processor>& processors,
                                           const ExecuteParams& ep) {
  ZP_ASSIGN_OR_RETURN(auto joined, joinScheduledModels(models, order));
  // The frame is one operator-placed unit: every node on its group's processor, a
  // DNN that follows others after them.
  runtime::serve::OperatorPlacement placement;
  placement.processors = processors;
  placement.source = "joined schedule";
  placement.placesGraphNodes = true;
  for (const auto& [node, a] : joined.nodeAccelerator) {
    if (a < 0 || a >= static_cast<int>(processors.size()))
      return makeError("joined schedule: '{}' is placed on accelerator {}, there are {}", node, a, processors.size());
    placement.nodeProcessor[node] = a;
  }
  for (size_t d = 0; d < order.deps.size(); ++d)
    for (int e : order.deps[d]) placement.partAfter.emplace_back(models[d].name, models[static_cast<size_t>(e)].name);
  ZP_ASSIGN_OR_RETURN(auto exec, runtime::serve::loadPlaced(joined.model, "joined schedule", placement));
  const runtime::Session& first = exec->program().session(0);
  const auto inputs = runtime::randomInputs(first, ep.seed);
  const std::vector<int> dnnOfStep = dnnOfSteps(first.nodes(), models);
  ExecutedSchedule out;
  out.handoffs = exec->program().handoffs();
  // Served as any unit: one query per round, one at a time, each profiled for its DNNs' ends.
  runtime::serve::ServeSetup setup{processors, {{"joined schedule", 0, 0, true}}, {}, INT64_MAX};
  setup.tasks.push_back({"frame", {0}, 1e9, true, {inputs}, {}});
  runtime::serve::ArrivalTrace trace{{"frame"}, {}};
  const int rounds = ep.warmup + std::max(1, ep.repeat);
  for (int i = 0; i < rounds; ++i) trace.arrivals.push_back({0.0, 0, 0});
  std::vector<std::vector<double>> latencies(models.size());
  std::vector<double> throughputs;
  runtime::serve::ServeParams sp;
  sp.closedLoop = true;
  sp.keepOutputs = true;
  sp.profileRuns = true;
  sp.warmPreloaded = false;
  sp.afterRun = [&](const runtime::serve::ExecSlice& run, runtime::serve::LoadedUnit& unit) {
    if (run.query < ep.warmup || !unit.placed()) return;
    const auto lat = dnnLatencies(unit.placed()->program().lastProfile(), dnnOfStep, order.deps);
    double thr = 0;
    for (size_t d = 0; d < lat.size(); ++d) {
      latencies[d].push_back(lat[d]);
      thr += lat[d] > 0 ? 1000.0 / lat[d] : 0;
    }
    throughputs.push_back(thr);
    if (run.query + 1 == rounds)
      out.trace = runtime::serve::placedRunTrace(unit.placed()->program(), processors, "executed concurrent schedule");
  };
  FrameLoader loader(std::move(exec));
  ZP_ASSIGN_OR_RETURN(auto served, runtime::serve::serve(setup, loader, trace, sp));
  std::vector<double> walls;
  for (size_t i = static_cast<size_t>(ep.warmup); i < served.queries.size(); ++i)
    walls.push_back(served.queries[i].latencyMs);
  out.wall = runtime::warmStatsOf(walls);
  out.inputs = inputs;
  out.outputs = std::move(served.outputs.back());
  for (const auto& l : latencies) out.dnnLatencyMs.push_back(median(l));
  out.throughput = median(throughputs);
  return out;
}

}  // namespace zp::drivers
