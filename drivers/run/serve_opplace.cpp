// An operator-placement plan served (SparOA): queries of the placed model
// arrive (periodic or Poisson, or an arrivals CSV naming it); the plan's system
// runs each through its operator-placed unit (every operator on its processor's
// pinned worker), each "<processor>-only" system through the whole model on
// that processor alone.
#include <algorithm>

#include <fmt/format.h>

#include "drivers/run/serve_system.h"
#include "libplan/util/validate.h"

namespace zp::drivers {
namespace fs = std::filesystem;
using namespace runtime::serve;

Expected<ServedPlan> opplaceServedPlan(Bundle& bundle, const ServeBundleParams& params) {
  if (!params.budget.empty() || !params.slos.empty())
    return makeError("{}: an operator-placement plan has no preload budgets or SLO configurations (--budget, --slo "
                     "apply to a stitch plan)", bundle.planFile());
  const plan::OpPlacement& o = bundle.plan().opplace.front();  // the operator-placement plan's model
  ZP_ASSIGN_OR_RETURN(const plan::Unit* unit, bundle.unit(o.unit));
  ZP_ASSIGN_OR_RETURN(const fs::path model, bundle.model(*unit));
  std::vector<std::string> warnings;
  ZP_ASSIGN_OR_RETURN(OperatorPlacement placement, operatorPlacement(bundle, *unit, o, warnings));
  for (const auto& w : warnings) bundle.note(w);
  ServedPlan out;
  out.processors = placement.processors;
  out.latencySlos = false;

  // The task: the model's queries, on its dataset when the zoo names it, else seeded random inputs.
  runtime::SessionOptions so;
  so.checkModel = false;
  ZP_ASSIGN_OR_RETURN(auto session, runtime::Session::load(model, so));
  const runtime::IoInfo in = session->inputs().at(0);
  if (session->inputs().size() != 1)
    return makeError("{}: the placed model has {} inputs; serving feeds one", model.string(), session->inputs().size());
  ZP_ASSIGN_OR_RETURN(Dataset d, bundle.samples(unit->id.name, in, params.samples, params.samples, params.seed));
  // Queries (and an arrivals CSV) name the task by a safe id: a model keyed by its
  // path in the zoo ("zoo/task/variant") is served as "zoo.task.variant".
  std::string task = unit->id.name;
  std::replace_if(task.begin(), task.end(), [](char c) { return !isSafeIdChar(c); }, '.');
  if (!isSafeId(task)) task = model.stem().string();
  if (!isSafeId(task)) task = "model";
  std::vector<runtime::TensorMap> samples;
  for (auto& x : d.samples) samples.push_back(runtime::TensorMap{{in.name, std::move(x)}});
  const int read = static_cast<int>(samples.size());
  ZP_ASSIGN_OR_RETURN(const ArrivalTrace trace,
                      userArrivals(params, {{task, read, read == params.samples
                                                              ? fmt::format("serving reads {} samples: raise --samples", read)
                                                              : ""}}));
  ZP_TRY(runtime::serve::checkTraceSize(trace));
  out.queries = trace.arrivals.size();

  std::vector<std::string> names{"zooplan"};
  for (const auto& p : placement.processors) names.push_back(p.name + "-only");
  ZP_ASSIGN_OR_RETURN(const auto run, systemsToRun(names, "zooplan", params.compare));
  const int64_t bytes = static_cast<int64_t>(fs::file_size(model));
  for (const auto& name : run) {
    SystemSetup s;
    s.name = name;
    ServedSlot slot;
    slot.unit = unit->id;
    slot.bytes = bytes;
    slot.preload = true;
    if (name == "zooplan") {
      s.description = "the plan's operator placement: each operator on its processor's pinned worker, tensors "
                      "handed over in shared memory";
      slot.processor = 0;
      slot.plannedMs = o.latencyMs;
      slot.files = {model, {}, {}, placement};
    } else {
      const auto p = static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin() - 1);
      s.description = fmt::format("the whole model on {} alone", placement.processors[p].name);
      slot.processor = static_cast<int>(p);
      auto baseline = std::find_if(o.baselines.begin(), o.baselines.end(), [&](const auto& b) { return b.name == name; });
      slot.plannedMs = baseline == o.baselines.end() ? o.latencyMs : baseline->latencyMs;
      slot.files = {model, placement.caches[p]};
    }
    s.plan = Json{{"planned_ms", slot.plannedMs}};
    s.slots.push_back(std::move(slot));
    s.tasks.push_back(ServeTask{task, {0}, kNoLatencySloMs, true, samples, d.labels, task});
    s.trace = trace;
    out.systems.push_back(std::move(s));
  }
  out.report = Json{{"model", unit->file}, {"nodes", o.nodes.size()}};
  out.queryLegend = "a query: one run of the placed model";
  return out;
}

}  // namespace zp::drivers
