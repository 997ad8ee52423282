#include "drivers/stitch_flow/solve_stitch.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <numeric>

#include "drivers/stitch_flow/serving_calibration.h"
#include "drivers/stitch_flow/solve_report.h"
#include "drivers/stitch_flow/solve_stitch_cold.h"
#include "drivers/stitch_flow/stitch_space_read.h"
#include "libplan/artifacts/plan_json.h"
#include "libplan/artifacts/slo_json.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/output_dir.h"
#include "passes/select/evaluation.h"
#include "passes/select/plan_stitch.h"

namespace zp::drivers {
namespace fs = std::filesystem;
using select::StitchSpace;

namespace {

std::optional<select::SloSet> generatedSloSet(const std::string& spec) {
  if (spec == "grid") return select::SloSet::Grid;
  if (spec == "accuracy-guaranteed") return select::SloSet::AccuracyGuaranteed;
  if (spec == "latency-guaranteed") return select::SloSet::LatencyGuaranteed;
  return std::nullopt;
}

Expected<std::vector<plan::SloConfiguration>> slosFor(const std::string& spec, const StitchSpace& space) {
  if (const auto set = generatedSloSet(spec)) return generateSlos(space, *set);
  std::vector<std::string> names;
  for (const auto& t : space.tasks) names.push_back(t.name);
  return artifacts::readSloFile(spec, names);
}

// Every file plan-solve writes, checked before anything is written: not a
// directory, not one of the files it reads, no two of them the same.
Status checkOutputs(const SolveStitchOptions& params, const StitchSpace& space) {
  std::vector<GuardedPath> guarded;
  for (const char* f : {"report.json", "profile.csv", "accuracy.csv", "latency_model.json", "cold_profile.csv"})
    guarded.push_back({params.profileDir / f, "input"});
  guarded.push_back({space.stitchDir / "stitch.json", "input"});
  guarded.push_back({(space.stitchDir / space.manifest.zooPath).lexically_normal(), "input"});
  if (fs::is_regular_file(params.slo)) guarded.push_back({params.slo, "input"});
  std::error_code ec;
  if (!params.svgDir.empty() && fs::exists(params.svgDir, ec) && !fs::is_directory(params.svgDir, ec))
    return makeError("{}: exists and is not a directory", params.svgDir.string());
  std::vector<fs::path> outputs{params.output, params.trace, params.evaluation, params.stats};
  if (!params.svgDir.empty())
    for (const auto& t : space.tasks) outputs.push_back(params.svgDir / (t.name + ".svg"));
  return checkOutputFiles(outputs, guarded);
}

Status makeParentDirs(const std::vector<fs::path>& files) {
  for (const auto& f : files) {
    if (f.empty() || f.parent_path().empty()) continue;
    std::error_code ec;
    fs::create_directories(f.parent_path(), ec);
    if (ec) return makeError("{}: cannot create its directory: {}", f.string(), ec.message());
  }
  return {};
}

// The least a budget must hold for every task to run at all (its smallest
// variant's largest subgraph), with the task that needs it.
struct UnitBytes {
  int64_t leastNeeded = 0;
  std::string neededBy;
};
UnitBytes unitBytes(const StitchSpace& space) {
  UnitBytes u;
  for (const auto& ts : space.tasks) {
    int64_t smallest = INT64_MAX;
    for (const auto& v : ts.variants) {
      int64_t largest = 0;
      for (int j = 0; j < ts.positions; ++j) {
        int64_t least = INT64_MAX;
        for (const auto& p : space.processors) least = std::min(least, ts.memoryBytes(j, v, p.name));
        largest = std::max(largest, least);
      }
      smallest = std::min(smallest, largest);
    }
    if (smallest != INT64_MAX && smallest > u.leastNeeded) u.leastNeeded = smallest, u.neededBy = ts.name;
  }
  return u;
}

// The SLO file's frames as chains of the space's tasks.
Expected<std::vector<select::FrameChain>> frameChains(const std::vector<plan::FrameSpec>& frames,
                                                      const StitchSpace& space) {
  std::vector<select::FrameChain> out;
  for (const auto& f : frames) {
    ZP_ASSIGN_OR_RETURN(auto chains, plan::frameChains(f));
    for (size_t k = 0; k < chains.size(); ++k) {
      select::FrameChain c{fmt::format("{}.{}", f.name, k), f.periodMs, f.latencyMs, {}};
      for (const auto& dnn : chains[k]) {
        auto it = std::find_if(space.tasks.begin(), space.tasks.end(), [&](const auto& t) { return t.name == dnn; });
        assert(it != space.tasks.end() && "the SLO file's reader checked the frame's tasks");
        c.tasks.push_back(static_cast<int>(it - space.tasks.begin()));
      }
      out.push_back(std::move(c));
    }
  }
  return out;
}

// The device's memory budget: the choice's own units resident under it.
// `where` names the budget's source in errors. With `raisedNote` (a default budget,
// not the user's) a budget below the least a plan needs is raised to that, and the
// note says so.
Status applyMemoryBudget(const StitchSpace& space, const std::string& budget, const std::string& where,
                         select::ServingWorkload& w, std::string* raisedNote = nullptr) {
  const UnitBytes u = unitBytes(space);
  auto bytes = select::parseBudget(budget, select::allSubgraphBytes(space));
  if (!bytes.ok()) return makeError("{}: '{}': expected bytes or a percentage such as \"60%\"", where, budget);
  if (*bytes < u.leastNeeded && raisedNote) {
    *raisedNote = fmt::format("note: the default device memory budget ({} of all subgraphs' bytes, {} bytes) holds no "
                              "plan: task '{}' needs {} bytes resident; planned with that (set --memory-budget or "
                              "the workload's memory_budget)\n",
                              budget, *bytes, u.neededBy, u.leastNeeded);
    *bytes = u.leastNeeded;
  }
  if (*bytes < u.leastNeeded)
    return makeError("{}: {} bytes holds no plan: task '{}' needs {} bytes resident to run a query at all (raise the "
                     "budget to at least that)",
                     where, *bytes, u.neededBy, u.leastNeeded);
  w.budgetBytes = *bytes;
  w.residentByLoadCost = true;
  return {};
}

// A unit loaded on demand is loaded on its processor's worker, whose threads
// (a cold section's too) run on the processor's cores: its cold section is
// planned for the fewest cores a processor has, unless --cores says otherwise.
coldstart::ColdStartParams servingColdParams(coldstart::ColdStartParams params, const StitchSpace& space) {
  if (params.cores > 0) return params;
  int cores = 0;
  for (const auto& p : space.processors) {
    const int own = static_cast<int>(p.cores.size());
    if (own > 0) cores = cores == 0 ? own : std::min(cores, own);
  }
  params.cores = cores;
  return params;
}

// The SLO file's "workload" section, if the SLOs come from a file that has one.
Expected<std::optional<plan::WorkloadSpec>> sloWorkloadSpec(const std::string& slo, const StitchSpace& space) {
  if (!fs::is_regular_file(slo)) return std::optional<plan::WorkloadSpec>();
  std::vector<std::string> names;
  for (const auto& t : space.tasks) names.push_back(t.name);
  return artifacts::readSloWorkload(slo, names);
}

// The workload zooplan's choice is served at: the SLO file's "workload" (rates,
// frames, memory budget), its rates replaced by --rate for every task when given;
// none: judged in the query simulator's burst.
Expected<std::shared_ptr<const select::ServingWorkload>> servingWorkload(const SolveStitchOptions& o,
                                                                        const StitchSpace& space,
                                                                        const ColdSectionCalibration& cold,
                                                                        std::string& summary,
                                                                        std::vector<plan::FrameSpec>& frames) {
  std::optional<plan::WorkloadSpec> spec;
  if (fs::is_regular_file(o.slo)) {
    std::vector<std::string> names;
    for (const auto& t : space.tasks) names.push_back(t.name);
    ZP_ASSIGN_OR_RETURN(spec, artifacts::readSloWorkload(o.slo, names));
    if (spec && !spec->arrivals.empty())
      return makeError("{}: $.workload.arrivals: an arrivals file is served by plan-run --serve --arrivals; plan "
                       "with rate_qps or frames",
                       o.slo);
  }
  if (o.rateQps <= 0 && !spec) return std::shared_ptr<const select::ServingWorkload>();
  auto w = std::make_shared<select::ServingWorkload>();
  std::string process = spec && o.rateQps <= 0 ? spec->process : o.arrivalProcess;
  w->process = process == "periodic" ? runtime::serve::ArrivalProcess::Periodic : runtime::serve::ArrivalProcess::Poisson;
  if (o.rateQps > 0)
    for (const auto& t : space.tasks) w->rateQps[t.name] = o.rateQps;
  else
    w->rateQps = spec->rateQps;
  w->seed = o.seed;
  w->slowdownJudged = o.slowdownJudged;
  if (spec) {
    ZP_ASSIGN_OR_RETURN(w->frames, frameChains(spec->frames, space));
    frames = spec->frames;
    if (!spec->memoryBudget.empty() && o.select.only != select::SingleTechnique::SparseLoom)
      ZP_TRY(applyMemoryBudget(space, spec->memoryBudget, o.slo + ": $.workload.memory_budget", *w));
  }
  // Without a device budget in the workload, the first preload budget is the
  // device's (SparseLoom alone keeps its preload set resident instead).
  if (!w->residentByLoadCost && !o.budgets.empty() && o.select.only != select::SingleTechnique::SparseLoom) {
    std::string raised;
    ZP_TRY(applyMemoryBudget(space, o.budgets.front(), "--memory-budget (the device's, the first)", *w,
                             o.budgetsGiven ? nullptr : &raised));
    summary += raised;
  }
  if (auto trace = select::workloadTrace(space, *w); !trace.ok())
    return makeError("{}: {}", o.slo, trace.error().message);
  ZP_ASSIGN_OR_RETURN(w->calibration, measureServingCalibration(space, o.calibrationRounds, o.seed, cold));
  const auto coldChoice = select::chooseColdSectionLoads(w->calibration, o.select.only == select::SingleTechnique::Nnv12);
  std::string rateText;
  if (o.rateQps > 0) rateText = fmt::format("{} q/s per task", o.rateQps);
  else
    for (const auto& [task, rate] : w->rateQps)
      rateText += fmt::format("{}{} {} q/s", rateText.empty() ? "" : ", ", task, rate);
  for (const auto& f : w->frames)
    rateText += fmt::format("{}frames {} every {} ms", rateText.empty() ? "" : ", ", f.name, f.periodMs);
  summary += fmt::format("zooplan's choice: served at {} ({}, {:.0f} s simulated), ", rateText, process,
                         w->durationMs / 1000);
  if (w->residentByLoadCost)
    summary += fmt::format("memory budget {} bytes (units resident by load cost per byte, the rest loaded on "
                           "demand), ",
                           w->budgetBytes);
  summary += w->calibration.hotRatios.empty()
                 ? "run times as profiled\n"
                 : fmt::format("run times calibrated on this host (dispatch {:.3f} ms, hand-over {:.3f} ms, "
                               "turnaround {:.3f} ms, loads {:.2f} ms/MB)\n",
                               w->calibration.dispatchMs, w->calibration.handoffMs, w->calibration.turnaroundMs,
                               w->calibration.loadMsPerMB);
  if (coldChoice.units > 0)
    summary += fmt::format("loads by cold section (NNV12) calibrated for {} subgraph unit(s): {} load so{} (load, "
                           "first run and free summed over units and processors: {:.2f} ms by cold section, {:.2f} "
                           "ms from weight caches)\n",
                           coldChoice.units, coldChoice.chosen,
                           o.select.only == select::SingleTechnique::Nnv12 ? " (NNV12 alone: all)" : ", faster so",
                           coldChoice.coldMs, coldChoice.warmCacheMs);
  return std::shared_ptr<const select::ServingWorkload>(std::move(w));
}

// --serve-in-turn names configurations of the plan, each once, and needs a workload to judge them at.
Status checkServedInTurn(const SolveStitchOptions& o, const std::vector<plan::SloConfiguration>& slos,
                         bool workload) {
  if (o.select.servedInTurn.empty()) return {};
  if (!workload)
    return makeError("--serve-in-turn: configurations are judged served in turn at a workload: give --rate or an "
                     "SLO file with a workload");
  for (size_t i = 0; i < o.select.servedInTurn.size(); ++i) {
    const std::string& id = o.select.servedInTurn[i];
    if (std::none_of(slos.begin(), slos.end(), [&](const plan::SloConfiguration& c) { return c.id == id; }))
      return makeError("--serve-in-turn {}: no such SLO configuration in --slo {} (it has {} .. {})", id, o.slo,
                       slos.front().id, slos.back().id);
    if (std::find(o.select.servedInTurn.begin(), o.select.servedInTurn.begin() + static_cast<std::ptrdiff_t>(i), id) !=
        o.select.servedInTurn.begin() + static_cast<std::ptrdiff_t>(i))
      return makeError("--serve-in-turn {}: named twice", id);
  }
  return {};
}

// The simulated schedule of zooplan's choice for the first configuration, and the SVGs.
Status writeVisuals(const SolveStitchOptions& o, const StitchSpace& space, const plan::SloConfiguration& first,
                    const select::StitchSolution& s) {
  if (!o.trace.empty()) {
    auto q = queriesOf(space, s.chosenFirst, o.select.queriesPerTask);
    std::vector<int> arrival(space.tasks.size());
    std::iota(arrival.begin(), arrival.end(), 0);
    auto r = sim::simulateQueries(q, static_cast<int>(space.processors.size()), arrival, true);
    ZP_TRY(writeFileAtomic(o.trace, canonicalJson(queryScheduleTrace(space, r, q, "zooplan " + first.id))));
  }
  if (!o.svgDir.empty()) {
    std::error_code ec;
    fs::create_directories(o.svgDir, ec);
    if (ec) return makeError("{}: cannot create: {}", o.svgDir.string(), ec.message());
    for (size_t t = 0; t < space.tasks.size(); ++t)
      ZP_TRY(writeFileAtomic(o.svgDir / (space.tasks[t].name + ".svg"),
                             accuracyLatencySvg(space.tasks[t], s.plan.placementOrder, s.firstChosen[t])));
  }
  return {};
}

}  // namespace

// The chosen system's decisions of an earlier stitch plan, for ties to keep:
// mean latencies within the profile's own run-to-run spread are a tie.
Expected<std::shared_ptr<const select::PreviousChoices>> previousChoices(const fs::path& file,
                                                                         const select::StitchSpace& space) {
  if (file.empty()) return std::shared_ptr<const select::PreviousChoices>();
  ZP_ASSIGN_OR_RETURN(const plan::Plan previous, artifacts::readPlan(file));
  if (!previous.stitch) return makeError("--previous {}: not a stitch plan", file.string());
  auto out = std::make_shared<select::PreviousChoices>();
  if (space.latencySpread > 0) out->latencyNoise = std::clamp(space.latencySpread, 0.01, 0.25);
  for (const auto& sel : plan::chosenSystem(*previous.stitch).selections)
    for (const auto& c : sel.tasks)
      if (c.feasible) out->bySlo[sel.slo][c.task] = {c.combination, c.placement};
  return std::shared_ptr<const select::PreviousChoices>(std::move(out));
}

// How many of the plan's picks are the earlier plan's, and the noise ties were judged in.
std::string previousPicksLine(const select::PreviousChoices& previous, const plan::StitchPlan& plan) {
  int same = 0, compared = 0;
  for (const auto& sel : plan::chosenSystem(plan).selections) {
    auto bySlo = previous.bySlo.find(sel.slo);
    if (bySlo == previous.bySlo.end()) continue;
    for (const auto& c : sel.tasks) {
      auto d = bySlo->second.find(c.task);
      if (d == bySlo->second.end()) continue;
      ++compared;
      same += d->second.combination == c.combination && d->second.placement == c.placement;
    }
  }
  return fmt::format("--previous: {} of {} task picks are the earlier plan's (ties within the noise: {:.1f} points of "
                     "violations, {:.0f}% of mean latency, the profile's run-to-run spread)\n",
                     same, compared, 100 * previous.violationNoise, 100 * previous.latencyNoise);
}

// The SLO file's hash, or the generated set's name.
Expected<plan::PlanHeader> planHeader(const SolveStitchOptions& o, const StitchSpace& space) {
  plan::PlanHeader h;
  h.tool = o.tool;
  h.version = o.version;
  h.inputs = space.inputHashes;
  if (fs::exists(o.slo)) {
    ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(o.slo));
    h.inputs["slo"] = sha256Hex(bytes);
  } else {
    h.inputs["slo"] = "generated:" + o.slo;
  }
  if (!o.previousPlan.empty()) {
    ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(o.previousPlan));
    h.inputs["previous"] = sha256Hex(bytes);
  }
  return h;
}

Expected<SolveStitchResult> solveStitch(const SolveStitchOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  ZP_ASSIGN_OR_RETURN(auto space, readStitchSpace(o.profileDir));
  if (!o.processors.empty()) ZP_TRY(select::restrictProcessors(space, o.processors));
  // SparseLoom alone answers every task with its own subgraphs.
  const auto only = o.select.only;
  using select::SingleTechnique;
  if (only == SingleTechnique::SparseLoom || only == SingleTechnique::SparOA || only == SingleTechnique::Nnv12 ||
      only == SingleTechnique::HaxConn)
    space.groups.clear();
  // Operator-placed variants are candidates of the composed search and of SparOA
  // alone; the frames' layer-group mappings, of the composed search and of
  // HaX-CoNN alone. Both place on node_profile.csv's costs, read once.
  const bool operatorPlacing = only == SingleTechnique::None || only == SingleTechnique::SparOA;
  const bool framesScheduling = only == SingleTechnique::None || only == SingleTechnique::HaxConn;
  std::optional<MeasuredPlacing> measured;
  if (operatorPlacing || framesScheduling) { ZP_ASSIGN_OR_RETURN(measured, readMeasuredPlacing(space)); }
  std::string placedSummary;
  if (operatorPlacing && measured) { ZP_ASSIGN_OR_RETURN(placedSummary, addPlacedModels(space, *measured, o.placed)); }
  std::string framesSummary;
  if (framesScheduling) {
    ZP_ASSIGN_OR_RETURN(const auto spec, sloWorkloadSpec(o.slo, space));
    FrameSchedulesParams fp = o.frames;
    fp.skipPlacedVariants = only == SingleTechnique::None;
    if (spec && measured) {
      ZP_ASSIGN_OR_RETURN(framesSummary, addFrameSchedules(space, *measured, spec->frames, fp));
    }
    if (only == SingleTechnique::HaxConn && (!spec || spec->frames.empty()))
      framesSummary = "--only haxconn: the workload has no frames to schedule; each task's model as given runs whole "
                      "on one processor\n";
  }
  ZP_TRY(checkOutputs(o, space));
  if (space.tasks.empty()) return makeError("{}: the profile has no tasks", o.profileDir.string());
  ZP_ASSIGN_OR_RETURN(auto slos, slosFor(o.slo, space));
  for (const auto& b : o.budgets) ZP_TRY(select::parseBudget(b, 0));  // bad input before any directory is made
  std::string servingSummary;
  select::SelectParams selectParams = o.select;
  ZP_ASSIGN_OR_RETURN(selectParams.previous, previousChoices(o.previousPlan, space));
  std::vector<plan::FrameSpec> frames;
  // Cold sections (NNV12) where the technique has them: calibrated as candidates' loads, planned for the choice.
  const bool coldSections = only == SingleTechnique::None || only == SingleTechnique::Nnv12;
  std::optional<StitchColdProfile> coldProfile;
  if (coldSections) { ZP_ASSIGN_OR_RETURN(coldProfile, readStitchColdProfile(o.profileDir)); }
  const coldstart::ColdStartParams coldParams = servingColdParams(o.cold, space);
  ZP_ASSIGN_OR_RETURN(selectParams.workload,
                      servingWorkload(o, space, {coldProfile ? &coldProfile->profile : nullptr, coldParams},
                                      servingSummary, frames));
  ZP_TRY(checkServedInTurn(o, slos, selectParams.workload != nullptr));
  ZP_TRY(makeParentDirs({o.output, o.trace, o.evaluation}));
  // SparseLoom alone holds the device's budget with its preload set (its first budget).
  std::vector<std::string> budgets = o.budgets;
  if (o.select.only == select::SingleTechnique::SparseLoom && fs::is_regular_file(o.slo)) {
    std::vector<std::string> names;
    for (const auto& t : space.tasks) names.push_back(t.name);
    ZP_ASSIGN_OR_RETURN(auto spec, artifacts::readSloWorkload(o.slo, names));
    if (spec && !spec->memoryBudget.empty()) budgets.insert(budgets.begin(), spec->memoryBudget);
  }
  // The choice search's own limit, from its start (the calibration and the frames' schedules before it have theirs).
  if (o.frames.solve.timeLimitS > 0)
    selectParams.stopAt = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(o.frames.solve.timeLimitS));
  ZP_ASSIGN_OR_RETURN(auto solution, select::planStitch(space, slos, budgets, selectParams));

  SolveStitchResult result;
  plan::Plan& plan = result.plan;
  ZP_ASSIGN_OR_RETURN(plan.header, planHeader(o, space));
  plan.processors = solution.processors;
  plan.units = solution.units;
  plan.opplace = solution.placements;
  plan.stitch = solution.plan;
  plan.stitch->batch = space.batch;
  plan.stitch->dims = space.manifest.dims;
  if (const auto& w = selectParams.workload) {
    const auto& c = w->calibration;
    const char* process = w->process == runtime::serve::ArrivalProcess::Periodic ? "periodic" : "poisson";
    plan.stitch->workload = plan::ServingWorkloadRecord{process, w->rateQps, w->durationMs, w->seed,
                                                        c.hotRatios.empty() ? 0 : o.calibrationRounds,
                                                        c.dispatchMs, c.handoffMs, c.loadMsPerMB, frames,
                                                        w->residentByLoadCost ? w->budgetBytes : 0,
                                                        o.select.servedInTurn, w->slowdownJudged};
  }
  const fs::path outDir = o.output.parent_path().empty() ? fs::path(".") : o.output.parent_path();
  auto fromPlan = [&](const fs::path& p) {
    return fs::weakly_canonical(fs::absolute(p)).lexically_relative(fs::weakly_canonical(fs::absolute(outDir))).generic_string();
  };
  plan.stitch->stitchDir = fromPlan(space.stitchDir);
  plan.stitch->profileDir = fromPlan(o.profileDir);
  plan.stitch->sloSource = fs::is_regular_file(o.slo) ? fromPlan(o.slo) : o.slo;
  if (!space.placed.empty()) {
    std::vector<std::string> taken;
    for (const auto& o : solution.placements) taken.push_back(o.unit.str());
    framesSummary += taken.empty() ? "  the plan's choices run none of these placements\n"
                                   : fmt::format("  the plan's choices run {}\n", fmt::join(taken, ", "));
  }
  result.summary = placedSummary + framesSummary + servingSummary + select::stitchSummary(solution) + predictedServingTable(*plan.stitch);
  if (const auto set = generatedSloSet(o.slo)) result.summary += select::sloSetLegend(*set) + "\n";
  if (selectParams.previous) result.summary += previousPicksLine(*selectParams.previous, *plan.stitch);
  const double dispatchMs = selectParams.workload ? selectParams.workload->calibration.dispatchMs : 0.0;
  result.warnings = select::unreachableSloWarnings(space, slos, dispatchMs);
  StitchColdPlans cold;
  if (o.select.only == select::SingleTechnique::SparseLoom) cold.summary = "--only sparseloom: no cold-start sections\n";
  else if (o.select.only == select::SingleTechnique::Mts) cold.summary = "--only mts: no cold-start sections\n";
  else if (o.select.only == select::SingleTechnique::SparOA) cold.summary = "--only sparoa: no cold-start sections\n";
  else if (o.select.only == select::SingleTechnique::HaxConn) cold.summary = "--only haxconn: no cold-start sections\n";
  else {
    // Measured both ways: cold sections only for the units whose loads follow them.
    const select::ServingCalibration* cal = selectParams.workload ? &selectParams.workload->calibration : nullptr;
    const bool measuredCold = cal && !cal->coldLoaded.empty();
    ZP_ASSIGN_OR_RETURN(cold, planStitchColdStarts(coldProfile, o.profileDir, *plan.stitch, coldParams,
                                                   measuredCold ? &cal->coldSections : nullptr));
  }
  plan.cold = std::move(cold.plans);
  if (cold.profiled) plan.header.inputs["profile/cold_profile.csv"] = cold.profileSha256;
  result.summary += cold.summary;

  // Outputs from here on: their folders are made only now, so a run refused
  // above (bad SLOs, budgets) leaves nothing behind.
  ZP_TRY(makeParentDirs({o.output, o.trace, o.evaluation, o.stats}));
  ZP_TRY(writeVisuals(o, space, slos.front(), solution));
  if (!o.evaluation.empty()) {
    result.evaluation = select::evaluateAgainstBaselines(space, o.select);
    ZP_TRY(writeFileAtomic(o.evaluation, canonicalJson(result.evaluation)));
    result.summary += "\nSLO evaluation (simulated, " + std::to_string(o.select.queriesPerTask) +
                      " queries per task, averaged over all task arrival orders):\n" +
                      result.evaluation["table"].get<std::string>();
  }
  ZP_TRY(artifacts::writePlan(plan, o.output));
  result.solveMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!o.stats.empty()) ZP_TRY(writeFileAtomic(o.stats, canonicalJson(Json{{"solve_ms", result.solveMs}})));
  return result;
}

}  // namespace zp::drivers
