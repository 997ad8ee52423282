#include "libplan/artifacts/plan_pb.h"

#include "libplan/artifacts/plan_json.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

namespace zp::artifacts {

namespace {

template <class T>
std::vector<T> vec(const google::protobuf::RepeatedField<T>& r) { return std::vector<T>(r.begin(), r.end()); }
std::vector<std::string> vec(const google::protobuf::RepeatedPtrField<std::string>& r) {
  return std::vector<std::string>(r.begin(), r.end());
}


using namespace zp::plan;

void put(const Processor& p, planpb::Processor* m) {
  m->set_name(p.name);
  m->set_kind(p.kind);
  m->set_source(p.source);
  m->set_policy(p.policy);
  m->set_threads(p.threads);
  for (int c : p.cores) m->add_cores(c);
  m->set_gemm(p.gemm);
  m->set_profile_file(p.profileFile);
}

Processor get(const planpb::Processor& p) {
  Processor out;
  out.name = p.name();
  out.kind = p.kind();
  out.source = p.source();
  out.profileFile = p.profile_file();
  out.policy = p.policy();
  out.threads = p.threads();
  out.cores.assign(p.cores().begin(), p.cores().end());
  out.gemm = p.gemm().empty() ? "onednn" : p.gemm();
  return out;
}

void put(const PredictedServing& p, planpb::PredictedServing* pm) {
  pm->set_violation_rate(p.violationRate);
  pm->set_throughput_qps(p.throughputQps);
  pm->set_judged(p.judged);
  pm->set_proven_best(p.provenBest);
  pm->set_violation_bound(p.violationBound);
  if (p.slowedViolationRate >= 0) pm->set_slowed_violation_rate(p.slowedViolationRate);
}

PredictedServing get(const planpb::PredictedServing& pm) {
  return PredictedServing{pm.violation_rate(), pm.throughput_qps(), pm.judged(), pm.proven_best(), pm.violation_bound(),
                          pm.has_slowed_violation_rate() ? pm.slowed_violation_rate() : -1.0};
}

void put(const ServedSystem& s, planpb::ServedSystem* m) {
  m->set_name(s.name);
  m->set_description(s.description);
  if (s.predictedInTurn) put(*s.predictedInTurn, m->mutable_predicted_in_turn());
  if (s.servingOrder != ServingOrder::FirstCome) m->set_serving_order(std::string(servingOrderName(s.servingOrder)));
  if (s.predictedFirstCome) put(*s.predictedFirstCome, m->mutable_predicted_first_come());
  for (const auto& sel : s.selections) {
    auto* sm = m->add_selections();
    sm->set_slo(sel.slo);
    if (sel.predicted) put(*sel.predicted, sm->mutable_predicted());
    for (const auto& c : sel.tasks) {
      auto* cm = sm->add_tasks();
      cm->set_task(c.task);
      cm->set_combination(c.combination);
      for (const auto& p : c.placement) cm->add_placement(p);
      cm->set_feasible(c.feasible);
      cm->set_accuracy(c.accuracy);
      cm->set_accuracy_source(c.accuracySource);
      cm->set_latency_ms(c.latencyMs);
      if (c.miss) {
        auto* mm = cm->mutable_miss();
        mm->set_combination(c.miss->combination);
        mm->set_accuracy_short(c.miss->accuracyShort);
        mm->set_latency_over_ms(c.miss->latencyOverMs);
      }
    }
  }
}

ServedSystem get(const planpb::ServedSystem& m) {
  ServedSystem s{m.name(), m.description(), {}, std::nullopt, ServingOrder::FirstCome, std::nullopt};
  if (m.has_predicted_in_turn()) s.predictedInTurn = get(m.predicted_in_turn());
  if (m.has_predicted_first_come()) s.predictedFirstCome = get(m.predicted_first_come());
  // fromProto checks the name first.
  if (!m.serving_order().empty())
    s.servingOrder = parseServingOrder(m.serving_order()).value_or(ServingOrder::FirstCome);
  for (const auto& sm : m.selections()) {
    SystemSelection sel{sm.slo(), {}, {}};
    if (sm.has_predicted()) sel.predicted = get(sm.predicted());
    for (const auto& cm : sm.tasks()) {
      SystemTaskChoice c{cm.task(), cm.combination(),
                         std::vector<std::string>(cm.placement().begin(), cm.placement().end()),
                         cm.feasible(), cm.accuracy(), cm.accuracy_source(), cm.latency_ms(), std::nullopt};
      if (cm.has_miss()) c.miss = SloMiss{cm.miss().combination(), cm.miss().accuracy_short(), cm.miss().latency_over_ms()};
      sel.tasks.push_back(std::move(c));
    }
    s.selections.push_back(std::move(sel));
  }
  return s;
}

void put(const StitchPlan& s, planpb::StitchPlan* m) {
  m->set_stitch_dir(s.stitchDir);
  m->set_profile_dir(s.profileDir);
  m->set_slo_source(s.sloSource);
  m->set_accuracy_source(s.accuracySource);
  for (const auto& p : s.processors) m->add_processors(p);
  for (const auto& o : s.placementOrder) m->add_placement_order(o);
  m->set_orders_evaluated(s.ordersEvaluated);
  m->set_mean_latency_ms(s.meanLatencyMs);
  m->set_batch(s.batch);
  for (const auto& [name, value] : s.dims) (*m->mutable_dims())[name] = value;
  for (const auto& c : s.slos) {
    auto* cm = m->add_slo_configurations();
    cm->set_id(c.id);
    for (const auto& [task, slo] : c.tasks) {  // std::map: sorted by task
      auto* tm = cm->add_tasks();
      tm->set_task(task);
      tm->set_accuracy(slo.accuracy);
      tm->set_latency_ms(slo.latencyMs);
    }
  }
  for (const auto& t : s.tasks) {
    auto* tm = m->add_tasks();
    tm->set_name(t.name);
    tm->set_positions(t.positions);
    for (const auto& g : t.subgraphs) {
      auto* gm = tm->add_subgraphs();
      gm->set_position(g.position);
      gm->set_variant(g.variant);
      gm->set_processor(g.processor);
      gm->set_memory_bytes(g.memoryBytes);
      gm->set_latency_ms(g.latencyMs);
    }
  }
  for (const auto& g : s.groups) {
    auto* gm = m->add_groups();
    gm->set_name(g.name);
    gm->set_shared_input(g.sharedInput);
    for (const auto& b : g.members) {
      auto* bm = gm->add_members();
      bm->set_task(b.task);
      bm->set_input(b.input);
      bm->set_stitched_input(b.stitchedInput);
      for (const auto& o : b.outputs) bm->add_outputs(o);
      for (const auto& o : b.stitchedOutputs) bm->add_stitched_outputs(o);
    }
    for (const auto& r : g.runs) {
      auto* rm = gm->add_runs();
      rm->set_processor(r.processor);
      rm->set_memory_bytes(r.memoryBytes);
      rm->set_latency_ms(r.latencyMs);
    }
  }
  m->set_chosen_system(s.chosenSystem);
  for (const auto& sys : s.systems) put(sys, m->add_systems());
  if (s.workload) {
    auto* w = m->mutable_workload();
    w->set_process(s.workload->process);
    for (const auto& [task, rate] : s.workload->rateQps) (*w->mutable_rate_qps())[task] = rate;
    w->set_duration_ms(s.workload->durationMs);
    w->set_seed(s.workload->seed);
    w->set_calibration_rounds(s.workload->calibrationRounds);
    w->set_dispatch_ms(s.workload->dispatchMs);
    w->set_handoff_ms(s.workload->handoffMs);
    w->set_load_ms_per_mb(s.workload->loadMsPerMB);
    for (const auto& f : s.workload->frames) {
      auto* fm = w->add_frames();
      fm->set_name(f.name);
      fm->set_period_ms(f.periodMs);
      fm->set_latency_ms(f.latencyMs);
      for (const auto& d : f.dnns) fm->add_dnns(d);
      for (const auto& [dnn, after] : f.dependsOn) {
        auto* dep = fm->add_depends_on();
        dep->set_dnn(dnn);
        dep->set_after(after);
      }
    }
    w->set_memory_budget_bytes(s.workload->memoryBudgetBytes);
    for (const auto& id : s.workload->servedInTurn) w->add_served_in_turn(id);
    if (s.workload->slowdownJudged != 1.0) w->set_slowdown_judged(s.workload->slowdownJudged);
  }
  for (const auto& p : s.preload) {
    auto* pm = m->add_preload();
    pm->set_budget(p.budget);
    pm->set_budget_bytes(p.budgetBytes);
    auto* g = pm->mutable_greedy();
    for (const auto& x : p.greedy) g->add_subgraphs(x);
    g->set_bytes(p.greedyBytes);
    g->set_hotness(p.greedyHotness);
    auto* e = pm->mutable_exact();
    for (const auto& x : p.exact) e->add_subgraphs(x);
    e->set_bytes(p.exactBytes);
    e->set_hotness(p.exactHotness);
    pm->set_exact_optimal(p.exactOptimal);
    pm->set_gap(p.gap);
  }
}

void put(const SolverReport& r, planpb::SolverReport* s) {
  s->set_solver(r.solver);
  s->set_status(r.status);
  s->set_search_space(r.searchSpace);
  s->set_max_transitions_per_dnn(r.maxTransitionsPerDnn);
  s->set_objective(r.objective);
  s->set_bound(r.bound);
  s->set_gap(r.gap);
  s->set_time_limit_s(r.timeLimitS);
  s->set_seed(r.seed);
  s->set_nodes(r.nodes);
  s->set_simulations(r.simulations);
  s->set_cross_check(r.crossCheck);
}

SolverReport get(const planpb::SolverReport& s) {
  return SolverReport{s.solver(), s.status(), s.search_space(), s.max_transitions_per_dnn(),
                      s.objective(), s.bound(), s.gap(), s.time_limit_s(), s.seed(), s.nodes(),
                      s.simulations(), s.cross_check()};
}

void put(const ConcurrentDnn& d, planpb::ConcurrentDnn* dm) {
  dm->set_name(d.name);
  if (d.unit) dm->set_unit(d.unit->str());
  for (const auto& e : d.dependsOn) dm->add_depends_on(e);
  dm->set_release_ms(d.releaseMs);
  dm->set_end_ms(d.endMs);
  for (const auto& g : d.groups) {
    auto* gm = dm->add_groups();
    gm->set_name(g.name);
    gm->set_accelerator(g.accelerator);
    gm->set_start_ms(g.startMs);
    gm->set_end_ms(g.endMs);
    gm->set_standalone_ms(g.standaloneMs);
    for (const auto& n : g.nodes) gm->add_nodes(n);
  }
  for (const auto& t : d.transitions) {
    auto* tm = dm->add_transitions();
    tm->set_after_group(t.afterGroup);
    tm->set_from(t.from);
    tm->set_to(t.to);
    tm->set_start_ms(t.startMs);
    tm->set_end_ms(t.endMs);
  }
}

Expected<ConcurrentDnn> get(const planpb::ConcurrentDnn& dm) {
  ConcurrentDnn d;
  d.name = dm.name();
  if (!dm.unit().empty()) { ZP_ASSIGN_OR_RETURN(d.unit, parseUnitId(dm.unit())); }
  d.dependsOn.assign(dm.depends_on().begin(), dm.depends_on().end());
  d.releaseMs = dm.release_ms();
  d.endMs = dm.end_ms();
  for (const auto& g : dm.groups())
    d.groups.push_back(ConcurrentGroup{g.name(), g.accelerator(), g.start_ms(), g.end_ms(), g.standalone_ms(),
                                       {g.nodes().begin(), g.nodes().end()}});
  for (const auto& t : dm.transitions())
    d.transitions.push_back(ConcurrentTransition{t.after_group(), t.from(), t.to(), t.start_ms(), t.end_ms()});
  return d;
}

void put(const ScheduleResult& b, planpb::ScheduleResult* bm) {
  bm->set_name(b.name);
  bm->set_latency_ms(b.latencyMs);
  bm->set_throughput(b.throughput);
  bm->set_transitions(b.transitions);
  for (const auto& d : b.dnns) put(d, bm->add_dnns());
}

Expected<ScheduleResult> get(const planpb::ScheduleResult& b) {
  ScheduleResult r{b.name(), b.latency_ms(), b.throughput(), b.transitions(), {}};
  for (const auto& d : b.dnns()) {
    ZP_ASSIGN_OR_RETURN(auto dnn, get(d));
    r.dnns.push_back(std::move(dnn));
  }
  return r;
}

void put(const OpPlacement& o, planpb::OpPlacement* m) {
  m->set_unit(o.unit.str());
  m->set_cost_source(o.costSource);
  for (const auto& p : o.processors) m->add_processors(p);
  m->set_latency_ms(o.latencyMs);
  put(o.solver, m->mutable_solver());
  m->set_min_mix_gain(o.minMixGain);
  m->set_min_mix_gain_ms(o.minMixGainMs);
  m->set_mixed_latency_ms(o.mixedLatencyMs);
  m->set_memory_bytes(o.memoryBytes);
  for (const auto& n : o.nodes) {
    auto* nm = m->add_nodes();
    nm->set_node(n.node);
    nm->set_processor(n.processor);
    nm->set_start_ms(n.startMs);
    nm->set_end_ms(n.endMs);
  }
  for (const auto& b : o.baselines) put(b, m->add_baselines());
}

Expected<OpPlacement> get(const planpb::OpPlacement& m) {
  OpPlacement o;
  ZP_ASSIGN_OR_RETURN(o.unit, parseUnitId(m.unit()));
  o.costSource = m.cost_source();
  o.processors.assign(m.processors().begin(), m.processors().end());
  o.latencyMs = m.latency_ms();
  o.solver = get(m.solver());
  o.minMixGain = m.min_mix_gain();
  o.minMixGainMs = m.min_mix_gain_ms();
  o.mixedLatencyMs = m.mixed_latency_ms();
  if (m.memory_bytes() < 0) return makeError("opplace {}: memory_bytes {} < 0", o.unit.str(), m.memory_bytes());
  o.memoryBytes = m.memory_bytes();
  for (const auto& n : m.nodes()) o.nodes.push_back(OpPlacementNode{n.node(), n.processor(), n.start_ms(), n.end_ms()});
  for (const auto& b : m.baselines()) {
    ZP_ASSIGN_OR_RETURN(auto r, get(b));
    o.baselines.push_back(std::move(r));
  }
  return o;
}

void put(const ConcurrentSchedule& c, planpb::ConcurrentSchedule* m) {
  m->set_workload(c.workload);
  m->set_objective(c.objective);
  for (const auto& a : c.accelerators) m->add_accelerators(a);
  m->set_source(c.source);
  m->set_objective_value(c.objectiveValue);
  m->set_latency_ms(c.latencyMs);
  m->set_throughput(c.throughput);
  put(c.solver, m->mutable_solver());
  for (const auto& d : c.dnns) put(d, m->add_dnns());
  for (const auto& b : c.baselines) put(b, m->add_baselines());
}

StitchPlan get(const planpb::StitchPlan& m) {
  StitchPlan s;
  s.stitchDir = m.stitch_dir();
  s.profileDir = m.profile_dir();
  s.sloSource = m.slo_source();
  s.accuracySource = m.accuracy_source();
  s.processors.assign(m.processors().begin(), m.processors().end());
  s.placementOrder.assign(m.placement_order().begin(), m.placement_order().end());
  s.ordersEvaluated = m.orders_evaluated();
  s.meanLatencyMs = m.mean_latency_ms();
  s.batch = m.batch() > 0 ? m.batch() : 1;
  for (const auto& [name, value] : m.dims()) s.dims[name] = value;
  for (const auto& cm : m.slo_configurations()) {
    SloConfiguration c;
    c.id = cm.id();
    for (const auto& tm : cm.tasks()) c.tasks[tm.task()] = TaskSlo{tm.accuracy(), tm.latency_ms()};
    s.slos.push_back(std::move(c));
  }
  for (const auto& tm : m.tasks()) {
    TaskPlan t;
    t.name = tm.name();
    t.positions = tm.positions();
    for (const auto& g : tm.subgraphs())
      t.subgraphs.push_back(
          PlannedSubgraph{g.position(), g.variant(), g.processor(), g.memory_bytes(), g.latency_ms()});
    s.tasks.push_back(std::move(t));
  }
  for (const auto& gm : m.groups()) {
    PlannedGroup g{gm.name(), gm.shared_input(), {}, {}};
    for (const auto& b : gm.members())
      g.members.push_back(GroupMember{b.task(), b.input(), b.stitched_input(), vec(b.outputs()), vec(b.stitched_outputs())});
    for (const auto& r : gm.runs()) g.runs.push_back(PlannedGroupRun{r.processor(), r.memory_bytes(), r.latency_ms()});
    s.groups.push_back(std::move(g));
  }
  for (const auto& pm : m.preload()) {
    PreloadSet p;
    p.budget = pm.budget();
    p.budgetBytes = pm.budget_bytes();
    p.greedy.assign(pm.greedy().subgraphs().begin(), pm.greedy().subgraphs().end());
    p.greedyBytes = pm.greedy().bytes();
    p.greedyHotness = pm.greedy().hotness();
    p.exact.assign(pm.exact().subgraphs().begin(), pm.exact().subgraphs().end());
    p.exactBytes = pm.exact().bytes();
    p.exactHotness = pm.exact().hotness();
    p.exactOptimal = pm.exact_optimal();
    p.gap = pm.gap();
    s.preload.push_back(std::move(p));
  }
  s.chosenSystem = m.chosen_system();
  for (const auto& sm : m.systems()) s.systems.push_back(get(sm));
  if (m.has_workload()) {
    const auto& w = m.workload();
    ServingWorkloadRecord r{w.process(), {}, w.duration_ms(), w.seed(), w.calibration_rounds(),
                            w.dispatch_ms(), w.handoff_ms(), w.load_ms_per_mb()};
    for (const auto& [task, rate] : w.rate_qps()) r.rateQps[task] = rate;
    for (const auto& fm : w.frames()) {
      FrameSpec f{fm.name(), fm.period_ms(), fm.latency_ms(), {fm.dnns().begin(), fm.dnns().end()}, {}};
      for (const auto& dep : fm.depends_on()) f.dependsOn.emplace_back(dep.dnn(), dep.after());
      r.frames.push_back(std::move(f));
    }
    r.memoryBudgetBytes = w.memory_budget_bytes();
    r.servedInTurn.assign(w.served_in_turn().begin(), w.served_in_turn().end());
    if (w.has_slowdown_judged()) r.slowdownJudged = w.slowdown_judged();
    s.workload = std::move(r);
  }
  return s;
}

Expected<ConcurrentSchedule> get(const planpb::ConcurrentSchedule& m) {
  ConcurrentSchedule c;
  c.workload = m.workload();
  c.objective = m.objective();
  c.accelerators.assign(m.accelerators().begin(), m.accelerators().end());
  c.source = m.source();
  c.objectiveValue = m.objective_value();
  c.latencyMs = m.latency_ms();
  c.throughput = m.throughput();
  c.solver = get(m.solver());
  for (const auto& dm : m.dnns()) {
    ZP_ASSIGN_OR_RETURN(auto dnn, get(dm));
    c.dnns.push_back(std::move(dnn));
  }
  for (const auto& b : m.baselines()) {
    ZP_ASSIGN_OR_RETURN(auto r, get(b));
    c.baselines.push_back(std::move(r));
  }
  return c;
}

}  // namespace

namespace {

void put(const ColdPlan& c, planpb::ColdPlan* m) {
  m->set_unit(c.unit.str());
  m->set_configuration(c.configuration);
  m->set_pipelined(c.pipelined);
  m->set_gemm(c.gemm);
  m->set_gemm_startup(c.gemmStartup);
  m->set_cores(c.cores);
  m->set_storage_mb_per_s(c.storageMBps);
  m->set_calibration_runs(c.calibrationRuns);
  if (c.calibrationRuns > 0) {
    m->set_execute_factor(c.executeFactor);
    m->set_transform_factor(c.transformFactor);
    m->set_transform_overhead_ms(c.transformOverheadMs);
    m->set_read_latency_ms(c.readLatencyMs);
    m->set_startup_factor(c.startupFactor);
    m->set_setup_factor(c.setupFactor);
    for (const auto& [kernel, f] : c.kernelExecuteFactors) (*m->mutable_kernel_execute_factors())[kernel] = f;
  }
  m->set_setup_ms(c.setupMs);
  m->set_predicted_cold_ms(c.predictedColdMs);
  m->set_predicted_warm_ready_ms(c.predictedWarmReadyMs);
  m->set_predicted_warm_ms(c.predictedWarmMs);
  m->set_solver(c.solver);
  m->set_status(c.status);
  m->set_search_space(c.searchSpace);
  m->set_lower_bound_ms(c.lowerBoundMs);
  m->set_states(c.states);
  for (const auto& n : c.nodes) {
    auto* o = m->add_nodes();
    o->set_step(n.step);
    o->set_node(n.node);
    o->set_kernel(n.kernel);
    o->set_gemm(n.gemm);
    o->set_weights(n.weights);
    o->set_transform_core(n.transformCore);
    o->set_read_start_ms(n.readStartMs);
    o->set_read_end_ms(n.readEndMs);
    o->set_transform_start_ms(n.transformStartMs);
    o->set_transform_end_ms(n.transformEndMs);
    o->set_exec_start_ms(n.execStartMs);
    o->set_exec_end_ms(n.execEndMs);
    o->set_warm_kernel(n.warmKernel);
    o->set_warm_gemm(n.warmGemm);
    o->set_warm_weights(n.warmWeights);
    o->set_warm_core(n.warmCore);
    o->set_warm_ready_ms(n.warmReadyMs);
  }
  for (const auto& k : c.configurations) {
    auto* o = m->add_configurations();
    o->set_name(k.name);
    o->set_kernel_selection(k.kernelSelection);
    o->set_caching(k.caching);
    o->set_pipelining(k.pipelining);
    o->set_gemm(k.gemm);
    o->set_predicted_ms(k.predictedMs);
    o->set_status(k.status);
  }
}

Expected<ColdPlan> get(const planpb::ColdPlan& m) {
  ColdPlan c;
  ZP_ASSIGN_OR_RETURN(c.unit, parseUnitId(m.unit()));
  c.configuration = m.configuration();
  c.pipelined = m.pipelined();
  c.gemm = m.gemm();
  c.gemmStartup = m.gemm_startup();
  c.cores = m.cores();
  c.storageMBps = m.storage_mb_per_s();
  c.calibrationRuns = m.calibration_runs();
  if (c.calibrationRuns > 0) {
    c.executeFactor = m.execute_factor();
    c.transformFactor = m.transform_factor();
    c.transformOverheadMs = m.transform_overhead_ms();
    c.readLatencyMs = m.read_latency_ms();
    c.startupFactor = m.has_startup_factor() ? m.startup_factor() : 1.0;
    c.setupFactor = m.has_setup_factor() ? m.setup_factor() : 1.0;
    for (const auto& [kernel, f] : m.kernel_execute_factors()) c.kernelExecuteFactors[kernel] = f;
  }
  c.setupMs = m.setup_ms();
  c.predictedColdMs = m.predicted_cold_ms();
  c.predictedWarmReadyMs = m.predicted_warm_ready_ms();
  c.predictedWarmMs = m.predicted_warm_ms();
  c.solver = m.solver();
  c.status = m.status();
  c.searchSpace = m.search_space();
  c.lowerBoundMs = m.lower_bound_ms();
  c.states = m.states();
  for (const auto& o : m.nodes())
    c.nodes.push_back(ColdNodePlan{o.step(), o.node(), o.kernel(), o.gemm(), o.weights(), o.transform_core(),
                                   o.read_start_ms(), o.read_end_ms(), o.transform_start_ms(), o.transform_end_ms(),
                                   o.exec_start_ms(), o.exec_end_ms(), o.warm_kernel(), o.warm_gemm(),
                                   o.warm_weights(), o.warm_core(), o.warm_ready_ms()});
  for (const auto& o : m.configurations())
    c.configurations.push_back(ColdConfiguration{o.name(), o.kernel_selection(), o.caching(), o.pipelining(),
                                                 o.gemm(), o.predicted_ms(), o.status()});
  return c;
}

void put(const MtsUnit& u, planpb::MtsUnit* m) {
  m->set_group(u.group);
  m->set_shared_input(u.sharedInput);
  for (const auto& b : u.members) {
    auto* bm = m->add_members();
    bm->set_task(b.task);
    bm->set_input(b.input);
    bm->set_stitched_input(b.stitchedInput);
    for (const auto& o : b.outputs) bm->add_outputs(o);
    for (const auto& o : b.stitchedOutputs) bm->add_stitched_outputs(o);
    for (double v : b.ms) bm->add_ms(v);
  }
  m->set_weight_bytes(u.weightBytes);
  m->set_member_bytes(u.memberBytes);
  for (double v : u.stitchedMs) m->add_stitched_ms(v);
}

MtsUnit get(const planpb::MtsUnit& m) {
  MtsUnit u{m.group(), m.shared_input(), {}, m.weight_bytes(), m.member_bytes(),
            vec(m.stitched_ms())};
  for (const auto& b : m.members())
    u.members.push_back(MtsPlanMember{{b.task(), b.input(), b.stitched_input(), vec(b.outputs()),
                                      vec(b.stitched_outputs())}, vec(b.ms())});
  return u;
}

void put(const MtsPlan& p, planpb::MtsPlan* m) {
  m->set_manifest(p.manifest);
  for (const auto& q : p.processors) m->add_processors(q);
  m->set_cost_source(p.costSource);
  for (const auto& u : p.units) put(u, m->add_units());
  m->set_solver(p.solver);
  m->set_status(p.status);
  m->set_lower_bound_ms(p.lowerBoundMs);
  m->set_assignments(p.assignments);
  m->set_seed(p.seed);
  for (const auto& s : p.systems) {
    auto* sm = m->add_systems();
    sm->set_name(s.name);
    sm->set_description(s.description);
    for (bool b : s.stitched) sm->add_stitched(b);
    for (const auto& q : s.placement) sm->add_placement(q);
    sm->set_makespan_ms(s.makespanMs);
  }
}

MtsPlan get(const planpb::MtsPlan& m) {
  MtsPlan p;
  p.manifest = m.manifest();
  p.processors.assign(m.processors().begin(), m.processors().end());
  p.costSource = m.cost_source();
  for (const auto& u : m.units()) p.units.push_back(get(u));
  p.solver = m.solver();
  p.status = m.status();
  p.lowerBoundMs = m.lower_bound_ms();
  p.assignments = m.assignments();
  p.seed = m.seed();
  for (const auto& s : m.systems())
    p.systems.push_back(MtsSystem{s.name(), s.description(), vec(s.placement()), vec(s.stitched()), s.makespan_ms()});
  return p;
}

void put(const Unit& u, planpb::Unit* m) {
  m->set_id(u.id.str());
  m->set_file(u.file);
  m->set_sha256(u.sha256);
  m->set_processor(u.processor);
  m->set_operator_placed(u.operatorPlaced);
  m->set_residency(u.residency);
  if (u.group) m->set_group(u.group->str());
}

Expected<Unit> get(const planpb::Unit& m) {
  Unit u;
  ZP_ASSIGN_OR_RETURN(u.id, parseUnitId(m.id()));
  u.file = m.file();
  u.sha256 = m.sha256();
  u.processor = m.processor();
  u.operatorPlaced = m.operator_placed();
  u.residency = m.residency();
  if (!m.group().empty()) { ZP_ASSIGN_OR_RETURN(u.group, parseUnitId(m.group())); }
  return u;
}

}  // namespace

planpb::Plan toProto(const plan::Plan& p) {
  planpb::Plan m;
  auto* h = m.mutable_header();
  h->set_tool(p.header.tool);
  h->set_version(p.header.version);
  for (const auto& [path, sha] : p.header.inputs) {  // std::map: sorted by path
    auto* in = h->add_inputs();
    in->set_path(path);
    in->set_sha256(sha);
  }
  for (const auto& q : p.processors) put(q, m.add_processors());
  for (const auto& u : p.units) put(u, m.add_units());
  if (p.stitch) put(*p.stitch, m.mutable_stitch());
  if (p.concurrent) put(*p.concurrent, m.mutable_concurrent());
  for (const auto& o : p.opplace) put(o, m.add_opplace());
  for (const auto& c : p.cold) put(c, m.add_cold());
  if (p.mts) put(*p.mts, m.mutable_mts());
  return m;
}

Expected<plan::Plan> fromProto(const planpb::Plan& m, const std::string& label) {
  plan::Plan p;
  if (!m.has_header()) return makeError("{}: plan has no header", label);
  p.header.tool = m.header().tool();
  p.header.version = m.header().version();
  for (const auto& in : m.header().inputs()) {
    if (!p.header.inputs.emplace(in.path(), in.sha256()).second)
      return makeError("{}: header.inputs: duplicate path '{}'", label, in.path());
  }
  for (const auto& q : m.processors()) p.processors.push_back(get(q));
  if (p.processors.empty() && (m.has_stitch() || m.opplace_size() > 0 || m.has_mts()))
    return makeError("{}: processors: none: written by an older plan-solve (a plan lists its processors once); "
                     "re-run plan-solve and plan-emit", label);
  for (int i = 0; i < m.units_size(); ++i) {
    auto u = get(m.units(i));
    if (!u.ok()) return makeError("{}: units[{}]: {}", label, i, u.error().message);
    p.units.push_back(std::move(*u));
  }
  if (m.has_stitch()) p.stitch = get(m.stitch());
  if (m.has_concurrent()) {
    auto c = get(m.concurrent());
    if (!c.ok()) return makeError("{}: concurrent: {}", label, c.error().message);
    p.concurrent = std::move(*c);
  }
  for (int i = 0; i < m.opplace_size(); ++i) {
    auto o = get(m.opplace(i));
    if (!o.ok()) return makeError("{}: opplace[{}]: {}", label, i, o.error().message);
    p.opplace.push_back(std::move(*o));
  }
  for (int i = 0; i < m.cold_size(); ++i) {
    auto c = get(m.cold(i));
    if (!c.ok()) return makeError("{}: cold[{}]: {}", label, i, c.error().message);
    p.cold.push_back(std::move(*c));
  }
  if (m.has_mts()) p.mts = get(m.mts());
  if (m.has_stitch()) {
    for (const auto& sys : m.stitch().systems())
      if (!sys.serving_order().empty() && !parseServingOrder(sys.serving_order()))
        return makeError("{}: stitch.systems '{}': serving_order '{}' is not first-come or earliest-deadline", label,
                         sys.name(), sys.serving_order());
    for (const auto& c : m.stitch().slo_configurations()) {
      std::map<std::string, int> seen;
      for (const auto& t : c.tasks())
        if (seen[t.task()]++)
          return makeError("{}: stitch.slo_configurations '{}': duplicate task '{}'", label, c.id(), t.task());
    }
  }
  // The same checks as plan.json (types, ranges, ids, thread counts), on the
  // plan's JSON form: paths in errors are JSON paths of that form.
  ZP_TRY(planFromJson(toJson(p), label));
  return p;
}

std::string serializePlanPb(const plan::Plan& p) {
  planpb::Plan m = toProto(p);
  std::string out;
  {
    google::protobuf::io::StringOutputStream raw(&out);
    google::protobuf::io::CodedOutputStream coded(&raw);
    coded.SetSerializationDeterministic(true);
    m.SerializeToCodedStream(&coded);
    assert(!coded.HadError());
  }
  return out;
}

Expected<plan::Plan> parsePlanPb(std::string_view bytes, const std::string& label) {
  planpb::Plan m;
  if (!m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return makeError("{}: not a valid zooplan plan protobuf", label);
  return fromProto(m, label);
}

}  // namespace zp::artifacts
