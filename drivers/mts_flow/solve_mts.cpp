#include "drivers/mts_flow/solve_mts.h"

#include <cassert>
#include <functional>

#include <fmt/format.h>

#include "libplan/artifacts/mts_json.h"
#include "libplan/artifacts/plan_json.h"
#include "libplan/artifacts/zoo_json.h"
#include "libplan/runtime/measure.h"
#include "libplan/runtime/serve/placed_executor.h"
#include "libplan/runtime/serve/processor.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "passes/mts/unit_placement.h"

namespace zp::drivers {
namespace fs = std::filesystem;

namespace {

struct Inputs {
  fs::path manifestPath, mtsDir;
  zoo::MtsManifest manifest;
  zoo::Zoo zoo;       // the members' models and datasets
  zoo::Zoo hostZoo;   // the processors
  std::map<std::string, std::string> hashes;  // header inputs
};

Expected<std::string> hashFile(const fs::path& path, Inputs& in) {
  ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(path));
  std::string h = sha256Hex(bytes);
  in.hashes[path.generic_string()] = h;
  return h;
}

Expected<Inputs> readInputs(const SolveMtsOptions& o) {
  Inputs in;
  in.manifestPath = fs::is_directory(o.manifest) ? o.manifest / "mts.json" : o.manifest;
  in.mtsDir = in.manifestPath.parent_path();
  ZP_ASSIGN_OR_RETURN(in.manifest, artifacts::loadMtsManifest(in.manifestPath));
  ZP_TRY(hashFile(in.manifestPath, in));
  if (in.manifest.groups.empty()) return makeError("{}: no groups", in.manifestPath.string());
  const fs::path zooPath = (in.mtsDir / in.manifest.zooPath).lexically_normal();
  ZP_ASSIGN_OR_RETURN(in.zoo, artifacts::loadZoo(zooPath));
  if (in.zoo.sha256 != in.manifest.zooSha256)
    return makeError("{}: changed since zoo-mts wrote {} (run zoo-mts again)", zooPath.string(), in.manifestPath.string());
  in.hashes[zooPath.generic_string()] = in.zoo.sha256;
  if (o.zoo.empty()) {
    in.hostZoo = in.zoo;
  } else {
    ZP_ASSIGN_OR_RETURN(in.hostZoo, artifacts::loadZoo(o.zoo));
    in.hashes[o.zoo.generic_string()] = in.hostZoo.sha256;
  }
  return in;
}

Expected<std::vector<Processor>> hostProcessors(const zoo::Zoo& z) {
  for (const auto& p : z.processors) {
    if (!p.host())
      return makeError("{}: processor '{}' is profiled from '{}', not the host; MTS units are measured on host processors",
                       z.file.string(), p.name, p.source);
    if (p.cores.empty())
      return makeError("{}: processor '{}' names no cores (MTS units run pinned to a processor's cores)",
                       z.file.string(), p.name);
  }
  return z.processors;
}

// Medians of `repeat` timed runs of each model on the processor, on seeded random
// inputs, the models taking turns (the stitched graph beside its members' own).
Expected<std::vector<double>> measureModels(const std::vector<std::string>& models,
                                            const Processor& p, const SolveMtsOptions& o) {
  std::vector<std::unique_ptr<runtime::Session>> sessions;
  std::vector<runtime::Session*> ptrs;
  std::vector<runtime::TensorMap> inputs;
  for (const auto& m : models) {
    ZP_ASSIGN_OR_RETURN(auto s, runtime::Session::load(m, runtime::serve::sessionOptions(p)));
    inputs.push_back(runtime::randomInputs(*s, o.seed));
    ptrs.push_back(s.get());
    sessions.push_back(std::move(s));
  }
  ZP_ASSIGN_OR_RETURN(auto stats, runtime::serve::measureInTurnsOnProcessor(ptrs, p, inputs, o.warmup, o.repeat));
  std::vector<double> out;
  for (const auto& s : stats) out.push_back(s.medianMs);
  return out;
}

const zoo::VariantSpec* variantOf(const zoo::Zoo& z, const std::string& task, const std::string& variant) {
  for (const auto& t : z.tasks)
    if (t.name == task)
      for (const auto& v : t.variants)
        if (v.id == variant) return &v;
  return nullptr;
}

// A group of the section and the files of its units.
struct Group {
  plan::MtsUnit section;
  GroupModels models;
};

Expected<Group> unitOf(const zoo::MtsGroupEntry& g, Inputs& in) {
  Group out;
  plan::MtsUnit& u = out.section;
  u.group = g.name;
  const fs::path file = in.mtsDir / g.file;
  out.models.file = file.generic_string();
  ZP_ASSIGN_OR_RETURN(out.models.sha256, hashFile(file, in));
  if (out.models.sha256 != g.sha256)
    return makeError("{}: not the stitched graph {} records for group '{}' (run zoo-mts again)", file.string(),
                     in.manifestPath.string(), g.name);
  u.sharedInput = g.sharedInput;
  u.weightBytes = g.sharedBytes + g.exclusiveBytes + g.auxBytes;
  u.memberBytes = g.memberBytes;
  for (const auto& m : g.members) {
    const auto* v = variantOf(in.zoo, m.task, m.variant);
    if (!v) return makeError("{}: group '{}': {}/{} is not in {}", in.manifestPath.string(), g.name, m.task, m.variant,
                             in.zoo.file.string());
    const fs::path model = in.zoo.resolve(v->onnx);
    ZP_ASSIGN_OR_RETURN(std::string sha, hashFile(model, in));
    out.models.members.push_back({model.generic_string(), sha});
    u.members.push_back(plan::MtsPlanMember{{m.task, m.input, m.stitchedInput, m.outputs, m.stitchedOutputs}, {}});
  }
  return out;
}

Status measureUnit(plan::MtsUnit& u, const GroupModels& files, const std::vector<Processor>& procs,
                   const SolveMtsOptions& o) {
  for (const auto& p : procs) {
    ZP_TRY(runtime::serve::checkProcessor(p));
    std::vector<std::string> models{files.file};
    for (const auto& m : files.members) models.push_back(m.file);
    ZP_ASSIGN_OR_RETURN(auto ms, measureModels(models, p, o));
    u.stitchedMs.push_back(ms[0]);
    for (size_t k = 0; k < u.members.size(); ++k) u.members[k].ms.push_back(ms[k + 1]);
  }
  return {};
}

// How a system runs unit u on processor p: stitched or as its members.
using Mode = std::function<bool(const plan::MtsUnit& u, size_t p)>;

double costOf(const plan::MtsUnit& u, size_t p, const Mode& mode) {
  return mode(u, p) ? u.stitchedMs[p] : u.sequentialMs(p);
}

// The system that runs every unit in `mode`, placed optimally (or all on the
// first processor when `firstOnly`).
plan::MtsSystem systemOf(plan::MtsPlan& p, std::string name, std::string description, const Mode& mode,
                         bool firstOnly = false) {
  std::vector<std::vector<double>> cost;
  for (const auto& u : p.units) {
    cost.emplace_back();
    for (size_t q = 0; q < p.processors.size(); ++q) cost.back().push_back(costOf(u, q, mode));
  }
  mts::UnitPlacement placed;
  if (firstOnly) {
    placed.processor.assign(p.units.size(), 0);
    placed.makespanMs = mts::makespanOf(cost, placed.processor);
  } else {
    placed = mts::placeUnits(cost);
  }
  plan::MtsSystem s{std::move(name), std::move(description), {}, {}, placed.makespanMs};
  for (size_t u = 0; u < p.units.size(); ++u) {
    const auto q = static_cast<size_t>(placed.processor[u]);
    s.placement.push_back(p.processors[q]);
    s.stitched.push_back(mode(p.units[u], q));
  }
  if (s.name == "zooplan") {
    p.solver = placed.enumerated ? "enumeration" : "lpt";
    p.status = placed.optimal ? "optimal" : "heuristic";
    p.lowerBoundMs = placed.lowerBoundMs;
    p.assignments = placed.assignments;
  }
  return s;
}

void placeSystems(plan::MtsPlan& p) {
  const Mode faster = [](const plan::MtsUnit& u, size_t q) { return u.stitchedMs[q] <= u.sequentialMs(q); };
  const Mode stitched = [](const plan::MtsUnit&, size_t) { return true; };
  const Mode members = [](const plan::MtsUnit&, size_t) { return false; };
  p.systems.push_back(systemOf(p, "zooplan",
                               "each group as its stitched graph or as its members' own models, whichever was faster "
                               "on the processor, groups placed to minimise the makespan",
                               faster));
  p.systems.push_back(systemOf(p, "mts", "each group's stitched graph, groups placed to minimise the makespan", stitched));
  p.systems.push_back(systemOf(p, "sequential",
                               "each member's own model, one after another, groups placed to minimise the makespan",
                               members));
  p.systems.push_back(systemOf(p, "one-processor", "each group's stitched graph, every group on the first processor",
                               stitched, true));
}

std::string summaryOf(const plan::MtsPlan& p, const fs::path& output) {
  std::string s = fmt::format("{:<10} {:>7} {:>10} {:>10}", "group", "members", "weights MB", "members MB");
  for (const auto& q : p.processors) s += fmt::format(" {:>16}", q + " ms st/seq");
  s += "\n";
  for (const auto& u : p.units) {
    s += fmt::format("{:<10} {:>7} {:>10.3f} {:>10.3f}", u.group, u.members.size(), u.weightBytes / 1e6,
                     u.memberBytes / 1e6);
    for (size_t q = 0; q < p.processors.size(); ++q) s += fmt::format(" {:>7.3f} / {:>6.3f}", u.stitchedMs[q], u.sequentialMs(q));
    s += "\n";
  }
  for (const auto& sys : p.systems) {
    std::vector<std::string> at;
    for (size_t u = 0; u < p.units.size(); ++u)
      at.push_back(fmt::format("{} {} on {}", p.units[u].group, sys.stitched[u] ? "stitched" : "as members", sys.placement[u]));
    s += fmt::format("{:<14} makespan {:>8.3f} ms  [{}]\n", sys.name, sys.makespanMs, fmt::join(at, ", "));
  }
  s += fmt::format("placement: {} ({}, {} assignments evaluated, lower bound {:.3f} ms)\nwrote {}\n", p.solver,
                   p.status == "optimal" ? "proven optimal" : "not proven optimal", p.assignments, p.lowerBoundMs,
                   output.string());
  return s;
}

}  // namespace

std::vector<plan::Unit> mtsUnits(const plan::MtsPlan& m, const std::vector<GroupModels>& models) {
  assert(models.size() == m.units.size());
  std::vector<plan::Unit> units;
  const plan::MtsSystem* chosen = m.systems.empty() ? nullptr : &m.systems.front();
  for (size_t k = 0; k < m.units.size(); ++k) {
    const auto& g = m.units[k];
    plan::Unit u;
    u.id = plan::UnitId::group(g.group);
    u.file = models[k].file;
    u.sha256 = models[k].sha256;
    if (chosen && k < chosen->placement.size()) u.processor = chosen->placement[k];
    units.push_back(u);
    for (size_t i = 0; i < g.members.size(); ++i) {
      plan::Unit mu;
      mu.id = plan::UnitId::model(g.group + "/" + g.members[i].task);
      mu.file = models[k].members.at(i).file;
      mu.sha256 = models[k].members.at(i).sha256;
      mu.group = u.id;
      units.push_back(std::move(mu));
    }
  }
  return units;
}

Expected<SolveMtsResult> solveMts(const SolveMtsOptions& o) {
  ZP_ASSIGN_OR_RETURN(Inputs in, readInputs(o));
  plan::MtsPlan section;
  section.manifest = in.manifestPath.generic_string();
  ZP_ASSIGN_OR_RETURN(const std::vector<Processor> processors, hostProcessors(in.hostZoo));
  section.processors = plan::processorNames(processors);
  section.seed = o.seed;
  std::vector<GroupModels> models;
  for (const auto& g : in.manifest.groups) {
    ZP_ASSIGN_OR_RETURN(auto u, unitOf(g, in));
    ZP_TRY(measureUnit(u.section, u.models, processors, o));
    section.units.push_back(std::move(u.section));
    models.push_back(std::move(u.models));
  }
  placeSystems(section);
  SolveMtsResult r;
  r.plan.header = plan::PlanHeader{o.tool, o.version, in.hashes};
  r.plan.processors = processors;
  r.plan.mts = std::move(section);
  r.plan.units = mtsUnits(*r.plan.mts, models);
  ZP_TRY(createParentDirectories(o.output));
  ZP_TRY(artifacts::writePlan(r.plan, o.output));
  r.summary = summaryOf(*r.plan.mts, o.output);
  return r;
}

}  // namespace zp::drivers
