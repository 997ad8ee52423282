#include "passes/select/served_systems.h"

#include <algorithm>
#include <cassert>
#include <optional>

#include "passes/select/serving_objective.h"

namespace zp::select {
namespace {

// A shared group's answers are its members' own models' (measured by zoo-profile);
// a placed model's, its variant's.
const char* accuracySourceOf(const StitchSpace& space, const TaskSpace& ts, int64_t candidate) {
  if (sharedGroupOf(candidate)) return "measured";
  if (auto m = placedModelOf(candidate)) candidate = static_cast<int64_t>(space.placed.at(*m).original);
  return ts.accuracy->measured(static_cast<uint64_t>(candidate)) >= 0 ? "measured" : "estimated";
}

plan::SystemSelection selectionOf(const StitchSpace& space, const std::string& slo, const Choice& c) {
  plan::SystemSelection sel;
  sel.slo = slo;
  for (size_t t = 0; t < space.tasks.size(); ++t) {
    const int64_t k = c.candidate[t];
    sel.tasks.push_back(plan::SystemTaskChoice{space.tasks[t].name, decisionId(space, t, k), c.placement[t],
                                               static_cast<bool>(c.feasible[t]), decisionJudgedAccuracy(space, t, k),
                                               accuracySourceOf(space, space.tasks[t], k),
                                               decisionLatencyMs(space, t, k, c.placement[t])});
  }
  return sel;
}


// Served in turn, a configuration's choice pays for the units the others
// choose: loads at each switch, and less of the budget resident. A joint
// choice improves by moving a task's decision under one configuration to the
// one it has under another (its units then shared across the switch) while the
// whole serves better, until a round changes nothing or `maxJudged` joint
// choices in all were judged. Two starts descend so, zooplan's choices per
// configuration and the best of the other systems' served in turn; the better
// end wins (the first on a tie). Every choice reachable so takes, per task,
// one of the decisions the two starts take for it under any configuration:
// `bound` is the in-turn violation rate none of those choices goes below.
struct JointResult {
  std::vector<Choice> choices;
  Outcome outcome;
  int64_t judged = 0;
  double bound = 0;
};

void descendJointly(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                    const ServingWorkload& workload, const runtime::serve::ArrivalTrace& trace, int64_t maxJudged,
                    JointResult& r) {
  const size_t T = space.tasks.size(), K = slos.size();
  for (int round = 0; round < 3; ++round) {
    bool changed = false;
    for (size_t t = 0; t < T; ++t)
      for (size_t k = 0; k < K; ++k)
        for (size_t from = 0; from < K; ++from) {
          const int64_t candidate = r.choices[from].candidate[t];
          const std::vector<std::string> placement = r.choices[from].placement[t];
          if (candidate == r.choices[k].candidate[t] && placement == r.choices[k].placement[t]) continue;
          if (r.judged >= maxJudged) return;
          std::vector<Choice> next = r.choices;
          next[k].candidate[t] = candidate;
          next[k].placement[t] = placement;
          next[k].feasible[t] = decisionMeetsSlo(space, slos[k], t, candidate, placement);
          const Outcome o = evaluateServingInTurn(space, slos, next, workload, trace);
          ++r.judged;
          if (betterOutcome(o, r.outcome)) {
            r.choices = std::move(next);
            r.outcome = o;
            changed = true;
          }
        }
    if (!changed) return;
  }
}

JointResult chooseJointly(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                          const std::vector<std::vector<Choice>>& systems, const std::vector<Outcome>& inTurn,
                          const ServingWorkload& workload, const runtime::serve::ArrivalTrace& trace,
                          int64_t maxJudged) {
  JointResult own{systems.front(), inTurn.front(), 0};
  descendJointly(space, slos, workload, trace, maxJudged, own);
  size_t other = 1;
  for (size_t s = 2; s < systems.size(); ++s)
    if (betterOutcome(inTurn[s], inTurn[other])) other = s;
  JointResult best{systems[other], inTurn[other], own.judged};
  descendJointly(space, slos, workload, trace, maxJudged, best);
  std::vector<std::vector<TaskDecision>> reachable(space.tasks.size());
  for (const auto* start : {&systems.front(), &systems[other]})
    for (const auto& c : *start)
      for (size_t t = 0; t < space.tasks.size(); ++t) {
        TaskDecision d{c.candidate[t], c.placement[t]};
        if (std::find(reachable[t].begin(), reachable[t].end(), d) == reachable[t].end()) reachable[t].push_back(d);
      }
  JointResult& won = betterOutcome(best.outcome, own.outcome) ? best : own;
  won.judged = best.judged;
  won.bound = servingViolationBoundInTurn(space, slos, reachable, workload, trace);
  return won;
}

// The configurations served in turn, as indices into `slos` (every one when none are named).
std::vector<size_t> servedInTurn(const std::vector<plan::SloConfiguration>& slos, const SelectParams& params) {
  std::vector<size_t> out;
  if (params.servedInTurn.empty())
    for (size_t k = 0; k < slos.size(); ++k) out.push_back(k);
  for (const auto& id : params.servedInTurn) {
    auto it = std::find_if(slos.begin(), slos.end(), [&](const plan::SloConfiguration& c) { return c.id == id; });
    assert(it != slos.end() && "the driver checks the served configurations exist");
    out.push_back(static_cast<size_t>(it - slos.begin()));
  }
  return out;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& servedSystemCatalog() {
  static const std::vector<std::pair<std::string, std::string>> kCatalog = {
      {"zooplan", "the plan: best in the query simulator (violations, then accuracy SLOs met, then throughput) of "
                  "Algorithm 1 under every order, stitched variants whole on their fastest processor, and the "
                  "baselines' choices"},
      {"Algorithm-1", "SparseLoom Algorithm 1 alone: best global order, then the fastest feasible variant per task"},
      {"SV-AO-P", "SparseLoom baseline: the most accurate original variant, partitioned over the fixed "
                  "processor order"},
      {"SV-AO-NP", "SparseLoom baseline: the most accurate original variant, whole on its fastest processor"},
      {"SV-LO-P", "SparseLoom baseline: the fastest original variant, partitioned over the fixed processor order"},
      {"SV-LO-NP", "SparseLoom baseline: the fastest original variant, whole on its fastest processor"},
      {"AV-P", "SparseLoom baseline: the fastest original variant meeting both SLOs (else the closest), "
               "partitioned over the fixed processor order"},
      {"AV-NP", "SparseLoom baseline: the fastest original variant meeting both SLOs (else the closest), whole "
                "on its fastest processor"}};
  return kCatalog;
}

ServedSystems servedSystems(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                            const SelectParams& params, std::vector<std::vector<TaskSearch>>& searches) {
  ServedSystems served;
  auto& out = served.systems;
  for (const auto& [name, description] : servedSystemCatalog()) out.push_back({name, description, {}, std::nullopt});
  if (params.workload)
    out.front().description =
        "the plan: best served at the workload's arrival rates in the serving simulator (violations, then accuracy "
        "SLOs met, then throughput, then mean latency), calibrated per unit on this host, its units resident under "
        "the device budget by load cost, of Algorithm 1 under every order, stitched variants whole on their fastest "
        "processor, every task whole on each processor, the baselines' choices, and every mix of their decisions "
        "task by task; several configurations then judged together as served in turn (units shared across switches)";
  if (params.only == SingleTechnique::SparseLoom)
    out.front().description = "the plan, SparseLoom alone (plan-solve --only sparseloom): Algorithm 1's choice";
  if (params.only == SingleTechnique::Mts)
    out.front().description =
        "the plan, MTS alone (plan-solve --only mts): each task's model as given (its reference variant) whole on "
        "one processor, or its weight-shared group's unit, the best mix served at the workload";
  if (params.only == SingleTechnique::SparOA)
    out.front().description =
        "the plan, SparOA alone (plan-solve --only sparoa on a profile): each task's model as given (its reference "
        "variant) whole on one processor, or its operators placed across processors, the best mix served at the "
        "workload";
  if (params.only == SingleTechnique::HaxConn)
    out.front().description =
        "the plan, HaX-CoNN alone (plan-solve --only haxconn on a profile): each task's model as given (its "
        "reference variant) whole on one processor or, a frame's DNN, with its layer groups where the frame's "
        "contention-aware concurrent schedule maps them, the best mix served at the workload";
  if (params.only == SingleTechnique::Nnv12)
    out.front().description =
        "the plan, NNV12 alone (plan-solve --only nnv12 on a profile): each task's model as given (its reference "
        "variant) whole on one processor, the best mix served at the workload, the units the budget leaves out "
        "loaded on demand by their cold sections";
  served.choices.resize(out.size());
  std::optional<runtime::serve::ArrivalTrace> trace;
  if (params.workload) {
    auto t = workloadTrace(space, *params.workload);
    assert(t.ok() && "the driver checks the workload names every task");
    trace = std::move(*t);
  }
  // `known`: the choice's outcome when already judged at the workload (zooplan's search).
  auto add = [&](size_t system, const plan::SloConfiguration& slo, const Choice& c, const Outcome* known) {
    out[system].selections.push_back(selectionOf(space, slo.id, c));
    if (trace) {
      const Outcome o = known ? *known : evaluateServing(space, slo, c, *params.workload, *trace);
      out[system].selections.back().predicted = plan::PredictedServing{o.violationRate, o.throughputQps, 0, false, 0};
    }
    served.choices[system].push_back(c);
  };
  for (size_t c = 0; c < slos.size(); ++c) {
    const auto& slo = slos[c];
    Algorithm1Result a1;
    ZooplanSearch search;
    Choice best = zooplanChoice(space, slo, params, searches[c], &a1, &search);
    add(0, slo, best, &search.predicted);
    if (trace) {
      auto& p = *out[0].selections.back().predicted;
      p.judged = search.judged;
      p.provenBest = search.provenBest;
      p.violationBound = search.violationBound;
    }
    add(1, slo, a1.choice, nullptr);
    const auto baselines = baselineChoices(space, slo, params);
    for (size_t b = 0; b < baselines.size(); ++b) add(2 + b, slo, baselines[b], nullptr);
  }
  const std::vector<size_t> turn = servedInTurn(slos, params);
  if (trace && turn.size() > 1) {
    std::vector<plan::SloConfiguration> turnSlos;
    for (size_t k : turn) turnSlos.push_back(slos[k]);
    std::vector<std::vector<Choice>> turnChoices(out.size());
    for (size_t s = 0; s < out.size(); ++s)
      for (size_t k : turn) turnChoices[s].push_back(served.choices[s][k]);
    std::vector<Outcome> inTurn;
    for (size_t s = 0; s < out.size(); ++s) {
      inTurn.push_back(evaluateServingInTurn(space, turnSlos, turnChoices[s], *params.workload, *trace));
      out[s].predictedInTurn = plan::PredictedServing{inTurn.back().violationRate, inTurn.back().throughputQps, 0,
                                                      false, 0};
    }
    if (params.only == SingleTechnique::None) {
      const JointResult joint =
          chooseJointly(space, turnSlos, turnChoices, inTurn, *params.workload, *trace, params.maxJointJudged);
      for (size_t j = 0; j < turn.size(); ++j) {
        const size_t c = turn[j];
        if (joint.choices[j].candidate == served.choices[0][c].candidate &&
            joint.choices[j].placement == served.choices[0][c].placement)
          continue;
        // Moved for the whole: predicted alone again; its own search's proof and bound no longer apply.
        auto& sel = out[0].selections[c];
        sel = selectionOf(space, slos[c].id, joint.choices[j]);
        const Outcome alone = evaluateServing(space, slos[c], joint.choices[j], *params.workload, *trace);
        sel.predicted = plan::PredictedServing{alone.violationRate, alone.throughputQps, 0, false, 0};
        served.choices[0][c] = joint.choices[j];
      }
      // Proven best among the reachable choices only when it meets their bound; else the gap is recorded.
      out[0].predictedInTurn = plan::PredictedServing{
          joint.outcome.violationRate, joint.outcome.throughputQps, std::max<int64_t>(joint.judged, 1),
          joint.outcome.violationRate <= joint.bound + 1e-12, joint.bound};
    }
  }
  return served;
}

}  // namespace zp::select
