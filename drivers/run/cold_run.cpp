#include "drivers/run/cold_run.h"

#include <algorithm>

#include <fmt/format.h>

#include <map>

#include "libplan/artifacts/cold_run_json.h"
#include "libplan/artifacts/plan_json.h"
#include "libplan/util/trace.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"

namespace zp::drivers {
namespace fs = std::filesystem;
using runtime::ColdTask;
using runtime::ColdWeights;

namespace {

// Per step, its tasks by kind.
using TaskIndex = std::map<std::pair<int, ColdTask::Kind>, size_t>;

TaskIndex taskIndex(const runtime::ColdRunReport& r) {
  TaskIndex idx;
  for (size_t t = 0; t < r.tasks.size(); ++t) idx[{r.tasks[t].step, r.tasks[t].kind}] = t;
  return idx;
}

std::string coreName(int core) { return core < 0 ? "reader" : fmt::format("core {}", core); }

Json taskJson(const runtime::ColdRunReport& r, size_t t) {
  const auto& rec = r.records[t];
  Json j{{"start_ms", rec.startMs}, {"end_ms", rec.endMs}, {"core", rec.core},
         {"planned_core", r.tasks[t].plannedCore}, {"stolen", rec.stolen}, {"done", rec.done}};
  if (!rec.error.empty()) j["error"] = rec.error;
  return j;
}

profile::MeasuredColdRun measuredColdRun(const runtime::ColdRunReport& r, const TaskIndex& idx,
                                         const runtime::Session& session, const plan::ColdPlan& plan) {
  auto span = [&](int step, ColdTask::Kind kind) -> std::optional<profile::Span> {
    auto it = idx.find({step, kind});
    if (it == idx.end() || !r.records[it->second].done) return std::nullopt;
    return profile::Span{r.records[it->second].startMs, r.records[it->second].endMs};
  };
  profile::MeasuredColdRun m{plan.configuration, r.cores, r.runEndMs, {}};
  m.setupMs = r.setupMs;
  for (size_t i = 0; i < r.executeMs.size(); ++i) {
    const int step = static_cast<int>(i);
    const plan::ColdNodePlan* pn = i < plan.nodes.size() ? &plan.nodes[i] : nullptr;
    profile::MeasuredColdNode n;
    n.step = step;
    n.node = session.nodes()[i].name;
    if (pn) n.kernel = pn->kernel, n.gemm = pn->gemm;
    n.weights = pn && !pn->kernel.empty() ? pn->weights : "none";
    n.read = span(step, ColdTask::Kind::Read);
    n.transform = span(step, ColdTask::Kind::Transform);
    n.execute = {r.executeMs[i].first, r.executeMs[i].second};
    m.nodes.push_back(std::move(n));
  }
  return m;
}

}  // namespace

Expected<plan::ColdPlan> readColdPlan(const fs::path& planFile, const fs::path& model) {
  ZP_ASSIGN_OR_RETURN(plan::Plan p, artifacts::readPlan(planFile));
  if (p.cold.empty()) return makeError("{}: the plan has no cold section", planFile.string());
  // A cold section names each node of the unit it was planned for: run on
  // another model it would schedule nodes that are not there, or others' kernels.
  // So the section is the one of the unit whose file has this model's hash.
  ZP_ASSIGN_OR_RETURN(const std::string bytes, readFile(model));
  const std::string sha = sha256Hex(bytes);
  const std::string label = model.stem().string();
  const plan::ColdPlan* ofThisFile = nullptr;
  bool named = false;
  for (const auto& c : p.cold) {
    const plan::Unit* u = plan::findUnit(p.units, c.unit);
    if (u && u->sha256 == sha && !ofThisFile) ofThisFile = &c;
    named = named || c.unit.profileKey() == label;
  }
  if (ofThisFile) return *ofThisFile;
  if (!named && p.cold.size() > 1) {
    std::string names;
    for (const auto& c : p.cold) names += (names.empty() ? "" : ", ") + c.unit.profileKey();
    return makeError("{}: no cold section for '{}' (it has {})", planFile.string(), label, names);
  }
  return makeError("{}: planned for another model (no unit of the plan has {}'s sha256 {}); run plan-solve --mode "
                   "cold on {}", planFile.string(), model.string(), sha.substr(0, 12), model.string());
}

Json coldRunJson(const runtime::ColdRunReport& r, const runtime::Session& session, const plan::ColdPlan& plan) {
  const auto idx = taskIndex(r);
  Json j = artifacts::coldRunReportJson(measuredColdRun(r, idx, session, plan));
  // Scheduling details beside the measured spans: cores, steals, the plan's prediction.
  for (size_t i = 0; i < r.executeMs.size(); ++i) {
    const int step = static_cast<int>(i);
    Json& n = j["nodes"][i];
    if (const plan::ColdNodePlan* pn = i < plan.nodes.size() ? &plan.nodes[i] : nullptr)
      n.update(Json{{"predicted", Json{{"read_ms", {pn->readStartMs, pn->readEndMs}},
                                       {"transform_ms", {pn->transformStartMs, pn->transformEndMs}},
                                       {"exec_ms", {pn->execStartMs, pn->execEndMs}}}},
                    {"warm_kernel", pn->warmKernel}, {"warm_gemm", pn->warmGemm}});
    for (auto [kind, key] : {std::pair{ColdTask::Kind::Read, "read"}, {ColdTask::Kind::Transform, "transform"}})
      if (auto it = idx.find({step, kind}); it != idx.end()) {  // not done: its record, which the reader skips
        if (n[key].is_object()) n[key].update(taskJson(r, it->second));
        else n[key] = taskJson(r, it->second);
      }
    for (auto [kind, key] : {std::pair{ColdTask::Kind::WarmRead, "warm_read"}, {ColdTask::Kind::WarmTransform, "warm_transform"}}) {
      auto it = idx.find({step, kind});
      n[key] = it == idx.end() ? Json(nullptr) : taskJson(r, it->second);
    }
    n["execute"]["core"] = 0;
    n["kernel_now"] = session.nodes()[i].kernel;
  }
  Json startups = Json::array();
  for (size_t t = 0; t < r.tasks.size(); ++t)
    if (r.tasks[t].kind == ColdTask::Kind::GemmStart || r.tasks[t].kind == ColdTask::Kind::WarmGemmStart) {
      Json s = taskJson(r, t);
      s["library"] = runtime::gemmLibraryKey(r.tasks[t].gemm);
      s["warm"] = r.tasks[t].warm();
      startups.push_back(std::move(s));
    }
  j.update(Json{{"pipelined", r.pipelined}, {"setup_ms", r.setupMs}, {"run_start_ms", r.runStartMs},
                {"predicted_cold_ms", plan.predictedColdMs}, {"predicted_setup_ms", plan.setupMs},
                {"steals", r.steals}, {"warm_switched", r.warmSwitched}, {"gemm_startups", startups}});
  return j;
}

std::string coldRunTable(const runtime::ColdRunReport& r, const runtime::Session& session,
                         const plan::ColdPlan& plan) {
  const auto idx = taskIndex(r);
  auto span = [&](int step, ColdTask::Kind kind) -> std::string {
    auto it = idx.find({step, kind});
    if (it == idx.end()) return "-";
    const auto& rec = r.records[it->second];
    std::string who = coreName(rec.core);
    if (rec.stolen) who += ", stolen from " + coreName(r.tasks[it->second].plannedCore);
    return fmt::format("{:.2f}-{:.2f} ({})", rec.startMs, rec.endMs, who);
  };
  std::string s = fmt::format(
      "cold run following plan {} ({} core{}, {}): setup {:.2f} ms, cold run ended at {:.2f} ms (predicted {:.2f} ms), "
      "{} steal{}; times in ms since the load began\n",
      plan.configuration, r.cores, r.cores == 1 ? "" : "s", r.pipelined ? "pipelined" : "not pipelined", r.setupMs,
      r.runEndMs, plan.predictedColdMs, r.steals, r.steals == 1 ? "" : "s");
  s += fmt::format("{:>4} {:<32} {:<16} {:<9} {:<36} {:<44} {}\n", "step", "node", "kernel (gemm)", "weights",
                   "read (by)", "transform (on)", "execute");
  for (size_t i = 0; i < r.executeMs.size(); ++i) {
    const int step = static_cast<int>(i);
    const plan::ColdNodePlan* pn = i < plan.nodes.size() ? &plan.nodes[i] : nullptr;
    std::string kernel = pn && !pn->kernel.empty() ? pn->kernel + (pn->gemm.empty() ? "" : " (" + pn->gemm + ")") : "-";
    s += fmt::format("{:>4} {:<32} {:<16} {:<9} {:<36} {:<44} {:.2f}-{:.2f}\n", step, session.nodes()[i].name, kernel,
                     pn ? pn->weights : "", span(step, ColdTask::Kind::Read), span(step, ColdTask::Kind::Transform),
                     r.executeMs[i].first, r.executeMs[i].second);
  }
  for (size_t t = 0; t < r.tasks.size(); ++t)
    if (r.tasks[t].kind == ColdTask::Kind::GemmStart)
      s += fmt::format("GEMM start-up {}: {:.2f}-{:.2f} ({}{})\n", runtime::gemmLibraryKey(r.tasks[t].gemm),
                       r.records[t].startMs, r.records[t].endMs, coreName(r.records[t].core),
                       r.records[t].stolen ? ", stolen" : "");
  return s;
}

Json coldRunTrace(const runtime::ColdRunReport& r, const runtime::Session& session, const std::string& title) {
  ChromeTrace trace;
  trace.processName(0, title);
  constexpr int kReaderTid = 1000;
  trace.threadName(0, kReaderTid, "reader");
  trace.threadSortIndex(0, kReaderTid, -1);
  const int threads = std::max(2, r.cores);
  for (int c = 0; c < threads; ++c) {
    trace.threadName(0, c, c == 0 ? "core 0 (executes)" : fmt::format("core {}", c));
    trace.threadSortIndex(0, c, c);
  }
  const auto& nodes = session.nodes();
  for (size_t t = 0; t < r.tasks.size(); ++t) {
    const auto& k = r.tasks[t];
    const auto& rec = r.records[t];
    if (!rec.done) continue;
    const std::string what = k.step >= 0 ? nodes[static_cast<size_t>(k.step)].name
                                         : std::string(runtime::gemmLibraryKey(k.gemm));
    Json args{{"step", k.step}, {"planned", coreName(k.plannedCore)}, {"stolen", rec.stolen}};
    if (!rec.error.empty()) args["error"] = rec.error;
    trace.span({fmt::format("{}{} {}", rec.stolen ? "stolen " : "", runtime::coldTaskKindName(k.kind), what),
                runtime::coldTaskKindName(k.kind), 0, rec.core < 0 ? kReaderTid : rec.core, rec.startMs,
                rec.endMs - rec.startMs, args, rec.stolen ? "bad" : ""});
  }
  for (size_t i = 0; i < r.executeMs.size(); ++i)
    trace.span({"execute " + nodes[i].name, "execute", 0, 0, r.executeMs[i].first,
                r.executeMs[i].second - r.executeMs[i].first, Json{{"step", i}, {"kernel", nodes[i].kernel}}, ""});
  return trace.json();
}

}  // namespace zp::drivers
