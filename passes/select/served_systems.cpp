#include "passes/select/served_systems.h"

#include <algorithm>
#include <cassert>
#include <optional>

#include <fmt/format.h>

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
  bool stopped = false;  // at the search's time limit
};

void descendJointly(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                    const ServingWorkload& workload, const runtime::serve::ArrivalTrace& trace, int64_t maxJudged,
                    const SelectParams& params, JointResult& r) {
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
          if (pastStop(params)) {
            r.stopped = true;
            return;
          }
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
                          const SelectParams& params) {
  const int64_t maxJudged = params.maxJointJudged;
  JointResult own{systems.front(), inTurn.front(), 0};
  descendJointly(space, slos, workload, trace, maxJudged, params, own);
  size_t other = 1;
  for (size_t s = 2; s < systems.size(); ++s)
    if (betterOutcome(inTurn[s], inTurn[other])) other = s;
  JointResult best{systems[other], inTurn[other], own.judged};
  best.stopped = own.stopped;
  if (!own.stopped) descendJointly(space, slos, workload, trace, maxJudged, params, best);
  std::vector<std::vector<TaskDecision>> reachable(space.tasks.size());
  for (const auto* start : {&systems.front(), &systems[other]})
    for (const auto& c : *start)
      for (size_t t = 0; t < space.tasks.size(); ++t) {
        TaskDecision d{c.candidate[t], c.placement[t]};
        if (std::find(reachable[t].begin(), reachable[t].end(), d) == reachable[t].end()) reachable[t].push_back(d);
      }
  JointResult& won = betterOutcome(best.outcome, own.outcome) ? best : own;
  won.judged = best.judged;
  won.stopped = best.stopped;
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

namespace {

std::string zooplanDescription(const SelectParams& params) {
  switch (params.only) {
    case SingleTechnique::SparseLoom:
      return "the plan, SparseLoom alone (plan-solve --only sparseloom): Algorithm 1's choice";
    case SingleTechnique::Mts:
      return "the plan, MTS alone (plan-solve --only mts): each task's model as given (its reference variant) whole "
             "on one processor, or its weight-shared group's unit, the best mix served at the workload";
    case SingleTechnique::SparOA:
      return "the plan, SparOA alone (plan-solve --only sparoa on a profile): each task's model as given (its "
             "reference variant) whole on one processor, or its operators placed across processors, the best mix "
             "served at the workload";
    case SingleTechnique::HaxConn:
      return "the plan, HaX-CoNN alone (plan-solve --only haxconn on a profile): each task's model as given (its "
             "reference variant) whole on one processor or, a frame's DNN, with its layer groups where the frame's "
             "contention-aware concurrent schedule maps them, the best mix served at the workload";
    case SingleTechnique::Nnv12:
      return "the plan, NNV12 alone (plan-solve --only nnv12 on a profile): each task's model as given (its reference "
             "variant) whole on one processor, the best mix served at the workload, the units the budget leaves out "
             "loaded on demand by their cold sections";
    case SingleTechnique::None: break;
  }
  if (!params.workload) return servedSystemCatalog().front().second;
  const double slowdown = params.workload->slowdownJudged;
  const std::string violations =
      slowdown == 1.0 ? "violations"
                      : fmt::format("violations, the mean of those as calibrated and with every time x{:g}", slowdown);
  return "the plan: best served at the workload's arrival rates in the serving simulator (" + violations +
         ", then accuracy SLOs met, then throughput, then mean latency), calibrated per unit on this host, its units "
         "resident under the device budget by load cost, of Algorithm 1 under every order, stitched variants whole "
         "on their fastest processor, every task whole on each processor, the baselines' choices, and every mix of "
         "their decisions task by task; several configurations then judged together as served in turn (units shared "
         "across switches); its processors taking queued queries earliest deadline first where that predicts fewer "
         "violations than first come first served";
}

// zooplan's choices served in one order (the workload's): per configuration its
// search's, then, with several configurations served in turn, the joint choice.
struct ZooplanServed {
  std::vector<Choice> choices;                    // per configuration
  std::vector<plan::PredictedServing> predicted;  // per configuration, alone (at a workload)
  std::optional<plan::PredictedServing> inTurn;   // with several configurations served in turn
  std::vector<Outcome> alone;                     // per configuration (at a workload)
  Outcome decisive;  // what two orders are compared by: in turn, else the one configuration served
  bool stopped = false;  // a search reached the time limit (SelectParams::stopAt)
};

ZooplanServed searchEach(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                         const SelectParams& params, std::vector<std::vector<TaskSearch>>& searches,
                         std::vector<Choice>* algorithm1Out) {
  ZooplanServed z;
  for (size_t c = 0; c < slos.size(); ++c) {
    ZooplanSearch search;
    Algorithm1Result a1;
    z.choices.push_back(zooplanChoice(space, slos[c], params, searches[c], &a1, &search));
    if (algorithm1Out) algorithm1Out->push_back(a1.choice);
    z.predicted.push_back(
        predictedOf(search.predicted, search.judged, search.provenBest, search.violationBound));
    z.alone.push_back(search.predicted);
    z.stopped = z.stopped || search.stopped;
  }
  return z;
}

// Several configurations served in turn: the joint choice from zooplan's and
// the best of the other systems' (`systems`, zooplan's first) served so.
void chooseInTurn(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                  const SelectParams& params, const std::vector<std::vector<Choice>>& systems,
                  const std::vector<size_t>& turn, const runtime::serve::ArrivalTrace& trace, ZooplanServed& z) {
  std::vector<plan::SloConfiguration> turnSlos;
  for (size_t k : turn) turnSlos.push_back(slos[k]);
  std::vector<std::vector<Choice>> turnChoices(systems.size());
  for (size_t k : turn) turnChoices[0].push_back(z.choices[k]);
  for (size_t s = 1; s < systems.size(); ++s)
    for (size_t k : turn) turnChoices[s].push_back(systems[s][k]);
  std::vector<Outcome> inTurn;
  for (const auto& choices : turnChoices)
    inTurn.push_back(evaluateServingInTurn(space, turnSlos, choices, *params.workload, trace));
  const JointResult joint =
      chooseJointly(space, turnSlos, turnChoices, inTurn, *params.workload, trace, params);
  z.stopped = z.stopped || joint.stopped;
  for (size_t j = 0; j < turn.size(); ++j) {
    const size_t c = turn[j];
    if (joint.choices[j].candidate == z.choices[c].candidate && joint.choices[j].placement == z.choices[c].placement)
      continue;
    // Moved for the whole: predicted alone again; its own search's proof and bound no longer apply.
    const Outcome o = evaluateServing(space, slos[c], joint.choices[j], *params.workload, trace);
    z.predicted[c] = predictedOf(o);
    z.choices[c] = joint.choices[j];
  }
  // Proven best among the reachable choices only when it meets their bound; else the gap is recorded.
  z.inTurn = predictedOf(joint.outcome, std::max<int64_t>(joint.judged, 1),
                         joint.outcome.judgedViolationRate() <= joint.bound + 1e-12, joint.bound);
  z.decisive = joint.outcome;
}

}  // namespace

ServedSystems servedSystems(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                            const SelectParams& params, std::vector<std::vector<TaskSearch>>& searches) {
  ServedSystems served;
  auto& out = served.systems;
  for (const auto& [name, description] : servedSystemCatalog())
    out.push_back({name, description, {}, std::nullopt, ServingOrder::FirstCome, std::nullopt});
  out.front().description = zooplanDescription(params);
  served.choices.resize(out.size());
  std::optional<runtime::serve::ArrivalTrace> trace;
  if (params.workload) {
    auto t = workloadTrace(space, *params.workload);
    assert(t.ok() && "the driver checks the workload names every task");
    trace = std::move(*t);
  }
  ZooplanServed z = searchEach(space, slos, params, searches, &served.choices[1]);
  for (const auto& slo : slos) {
    const auto baselines = baselineChoices(space, slo, params);
    for (size_t b = 0; b < baselines.size(); ++b) served.choices[2 + b].push_back(baselines[b]);
  }
  const std::vector<size_t> turn = servedInTurn(slos, params);
  const bool composed = trace && params.only == SingleTechnique::None;
  if (composed) {
    z.decisive = z.alone[turn.front()];
    if (turn.size() > 1) chooseInTurn(space, slos, params, served.choices, turn, *trace, z);
  }
  // A single technique serves first come first served, as its paper's runtime
  // does; the composed plan also judges its processors taking the queued query
  // with the earliest deadline first, and serves so when that predicts fewer
  // violations (first come stays on a tie: nothing to explain; nothing to gain
  // when first come meets every bound).
  served.stopped = z.stopped;
  const bool byDeadlineSearched = composed && z.decisive.judgedViolationRate() > 0 && !pastStop(params);
  if (byDeadlineSearched) {
    SelectParams byDeadline = params;
    auto w = std::make_shared<ServingWorkload>(*params.workload);
    w->order = ServingOrder::EarliestDeadline;
    byDeadline.workload = std::move(w);
    ZooplanServed e = searchEach(space, slos, byDeadline, searches, nullptr);
    e.decisive = e.alone[turn.front()];
    if (turn.size() > 1) chooseInTurn(space, slos, byDeadline, served.choices, turn, *trace, e);
    served.stoppedEarliestDeadline = e.stopped;
    if (e.decisive.judgedViolationRate() < z.decisive.judgedViolationRate() && betterOutcome(e.decisive, z.decisive)) {
      out[0].servingOrder = ServingOrder::EarliestDeadline;
      out[0].predictedFirstCome =
          z.inTurn ? *z.inTurn : predictedOf(z.decisive);
      z = std::move(e);
    }
  }
  served.choices[0] = z.choices;
  served.earliestDeadlineSkipped = composed && z.decisive.judgedViolationRate() > 0 && !byDeadlineSearched;
  for (size_t s = 0; s < out.size(); ++s)
    for (size_t c = 0; c < slos.size(); ++c) {
      out[s].selections.push_back(selectionOf(space, slos[c].id, served.choices[s][c]));
      if (!trace) continue;
      if (s == 0) {
        out[s].selections.back().predicted = z.predicted[c];
        continue;
      }
      const Outcome o = evaluateServing(space, slos[c], served.choices[s][c], *params.workload, *trace);
      out[s].selections.back().predicted = predictedOf(o);
    }
  out[0].predictedInTurn = z.inTurn;
  if (trace && turn.size() > 1) {
    std::vector<plan::SloConfiguration> turnSlos;
    for (size_t k : turn) turnSlos.push_back(slos[k]);
    for (size_t s = 0; s < out.size(); ++s) {
      if (out[s].predictedInTurn) continue;  // zooplan's joint choice
      std::vector<Choice> choices;
      for (size_t k : turn) choices.push_back(served.choices[s][k]);
      const Outcome o = evaluateServingInTurn(space, turnSlos, choices, *params.workload, *trace);
      out[s].predictedInTurn = predictedOf(o);
    }
  }
  return served;
}

}  // namespace zp::select
