#include "drivers/stitch_flow/zoo_init.h"

#include <algorithm>
#include <regex>

#include <fmt/format.h>

#include "drivers/mts_flow/zoo_mts.h"
#include "drivers/stitch_flow/dataset_read.h"
#include "libplan/artifacts/multitask_group_json.h"
#include "libplan/artifacts/zoo_json.h"
#include "libplan/graph/analysis.h"
#include "libplan/graph/model_io.h"
#include "libplan/runtime/serve/processor.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/json.h"
#include "passes/mts/shared_weights.h"
#include "passes/stitch/stitch.h"

namespace zp::drivers {
namespace fs = std::filesystem;

namespace {

// What zoo.json holds as a name (schemas/zoo.schema.json).
bool validName(const std::string& s) {
  static const std::regex re("^(?!\\.\\.?$)[A-Za-z0-9_.-]{1,64}$");
  return std::regex_match(s, re);
}

struct FoundVariant {
  std::string id;
  fs::path file;
  stitch::VariantModel model;
  graph::VariantFacts facts;
};

struct FoundTask {
  std::string name;
  fs::path dir;
  std::vector<FoundVariant> variants;  // the reference first
  std::optional<zoo::DatasetSpec> dataset;
};

std::vector<fs::path> sortedEntries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The reference: the one named, "dense", else the fp32 one with the fewest zero weights.
Expected<size_t> referenceOf(const FoundTask& t, const std::string& wanted) {
  auto named = [&](const std::string& id) {
    return std::find_if(t.variants.begin(), t.variants.end(), [&](const FoundVariant& v) { return v.id == id; });
  };
  if (!wanted.empty()) {
    auto it = named(wanted);
    if (it == t.variants.end())
      return makeError("{}: --reference {}: no {}.onnx in the task's folder", t.dir.string(), wanted, wanted);
    return static_cast<size_t>(it - t.variants.begin());
  }
  if (auto it = named("dense"); it != t.variants.end()) return static_cast<size_t>(it - t.variants.begin());
  size_t best = 0;
  auto key = [](const FoundVariant& v) {
    const auto f = graph::variantFacts(v.model.model);
    return std::make_tuple(f.precision != "fp32", f.weightZeros, -f.weightElems, v.id);
  };
  for (size_t i = 1; i < t.variants.size(); ++i)
    if (key(t.variants[i]) < key(t.variants[best])) best = i;
  return best;
}

Expected<FoundTask> readTask(const fs::path& dir, const ZooInitOptions& o) {
  FoundTask t{dir.filename().string(), dir, {}, std::nullopt};
  if (!validName(t.name))
    return makeError("{}: '{}' cannot name a task (letters, digits, '_', '.', '-'; at most 64): rename the folder",
                     dir.string(), t.name);
  for (const auto& f : sortedEntries(dir)) {
    if (f.extension() != ".onnx" || !fs::is_regular_file(f)) continue;
    const std::string id = f.stem().string();
    if (!validName(id))
      return makeError("{}: '{}' cannot name a variant (letters, digits, '_', '.', '-'; at most 64): rename the file",
                       f.string(), id);
    ZP_ASSIGN_OR_RETURN(auto model, graph::loadModel(f));
    ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(f));
    t.variants.push_back({id, f, stitch::VariantModel{std::move(model), sha256Hex(bytes)}, {}});
  }
  ZP_ASSIGN_OR_RETURN(const size_t ref, referenceOf(t, o.reference));
  std::rotate(t.variants.begin(), t.variants.begin() + static_cast<std::ptrdiff_t>(ref),
              t.variants.begin() + static_cast<std::ptrdiff_t>(ref) + 1);
  for (auto& v : t.variants)
    v.facts = graph::variantFacts(v.model.model, &v == &t.variants.front() ? nullptr : &t.variants.front().model.model);
  return t;
}

// The task's dataset when both files are there: read as zoo-profile reads it
// (every sample reshaped to the reference's input), so a bad one fails here.
Status findDataset(FoundTask& t, const ZooInitOptions& o, std::vector<std::string>& notes) {
  const fs::path inputs = t.dir / o.inputs, labels = t.dir / o.labels;
  std::error_code ec;
  const bool hasInputs = fs::exists(inputs, ec), hasLabels = fs::exists(labels, ec);
  if (!hasInputs && !hasLabels) {
    notes.push_back(fmt::format("{}: no {} and {}: its accuracy cannot be measured (add them, or give each "
                                "variant's measured 'accuracy' in zoo.json)",
                                t.name, inputs.string(), labels.string()));
    return {};
  }
  if (hasInputs != hasLabels)
    return makeError("{}: found without {}: a dataset needs both (samples and their class-id labels)",
                     (hasInputs ? inputs : labels).string(), (hasInputs ? labels : inputs).string());
  graph::GraphView view(t.variants.front().model.model);
  const auto names = view.graphInputs();
  if (names.size() != 1)
    return makeError("{}: its model has {} inputs; a dataset feeds one", t.variants.front().file.string(), names.size());
  auto info = view.tensorInfo(names.front());
  std::vector<int64_t> shape = info ? info->shape : std::vector<int64_t>{};
  for (auto& d : shape) d = d < 0 ? 1 : d;
  if (!shape.empty()) shape[0] = 1;
  ZP_ASSIGN_OR_RETURN(auto data, readDataset(inputs, labels, shape));
  t.dataset = zoo::DatasetSpec{(fs::path(t.name) / o.inputs).generic_string(),
                               (fs::path(t.name) / o.labels).generic_string(), "", "top1"};
  notes.push_back(fmt::format("{}: dataset {} ({} samples)", t.name, inputs.string(), data.samples.size()));
  return {};
}

// This machine's cores as the host's processors: a dense-kernel "cpu" on the
// first, a sparse-kernel "npu" on the second (both are the runtime on CPU cores).
std::vector<Processor> hostProcessors() {
  const auto cores = runtime::serve::availableCores();
  std::vector<Processor> ps;
  ps.push_back(Processor{"cpu", "cpu", kHostSource, "default", 1, {cores.front()}, "onednn", ""});
  if (cores.size() > 1) ps.push_back(Processor{"npu", "npu", kHostSource, "sparse", 1, {cores[1]}, "blis", ""});
  return ps;
}

// The processors of `o.processors` when given, their imported profiles'
// paths rewritten against the zoo.json to write; else this machine's cores.
Expected<std::vector<Processor>> chosenProcessors(const ZooInitOptions& o, const fs::path& zooFile) {
  if (o.processors.empty()) return hostProcessors();
  ZP_ASSIGN_OR_RETURN(auto ps, artifacts::loadProcessors(o.processors));
  const fs::path from = fs::absolute(o.processors).parent_path();
  for (auto& p : ps)
    if (!p.profileFile.empty())
      p.profileFile = fs::absolute(from / p.profileFile).lexically_normal().lexically_relative(zooFile.parent_path())
                          .generic_string();
  return ps;
}

zoo::TaskSpec taskSpec(const FoundTask& t, const fs::path& zooDir, const std::vector<size_t>& kept) {
  zoo::TaskSpec spec{t.name, "", {}, t.dataset};
  for (size_t k : kept) {
    const auto& v = t.variants[k];
    const std::string rel = fs::absolute(v.file).lexically_normal().lexically_relative(zooDir).generic_string();
    spec.variants.push_back({v.id, rel, v.facts.kind, v.facts.sparsity, v.facts.precision, std::nullopt});
  }
  return spec;
}

// What to do about a variant that does not stitch, from why it does not.
std::string fixFor(const std::string& why, const FoundVariant& v) {
  if (why.find("cannot be aligned") != std::string::npos)
    return v.facts.kind == "quantized"
               ? "export it from the same model as the reference (torch.ao.quantization prepare/convert or "
                 "quantization-aware training of that model, the same torch.onnx.export options)"
               : "export it from the same model definition as the reference, with the same torch.onnx.export options "
                 "(pruning keeps the graph; a model with other layers is another task)";
  if (why.find("cut points") != std::string::npos)
    return "fewer subgraphs (zoo-init --subgraphs 1 keeps it whole), or leave the variant out (--leave-out)";
  return "check that it is a variant of the same model as the reference";
}

// A variant stitches when its task's reference and it partition at common cut
// points into the subgraphs asked for and their subgraphs chain.
std::string stitchProblem(const FoundTask& t, size_t k, const std::vector<Processor>& processors,
                          const ZooInitOptions& o, const fs::path& zooFile) {
  zoo::Zoo z;
  z.file = zooFile;
  z.name = "check";
  z.processors = processors;
  z.tasks.push_back(taskSpec(t, zooFile.parent_path(), {0, k}));
  std::vector<std::vector<stitch::VariantModel>> models{{t.variants[0].model, t.variants[k].model}};
  stitch::StitchParams params;
  params.subgraphs = o.subgraphs;
  params.dims = o.dims;
  auto r = stitch::stitchZoo(z, models, params, "zoo.json");
  if (r.ok()) return {};
  std::string why = r.error().message;
  if (auto colon = why.find(": "); colon != std::string::npos && why.rfind(zooFile.string(), 0) == 0)
    why = why.substr(colon + 2);
  return fmt::format("{}; fix: {}", why, fixFor(why, t.variants[k]));
}

// The one input's shape of a model (empty when it has none or several).
std::vector<int64_t> singleInputShape(const onnx::ModelProto& m) {
  std::vector<std::string> inits;
  for (const auto& i : m.graph().initializer()) inits.push_back(i.name());
  std::vector<int64_t> shape;
  int inputs = 0;
  for (const auto& in : m.graph().input()) {
    if (std::find(inits.begin(), inits.end(), in.name()) != inits.end()) continue;
    ++inputs;
    shape.clear();
    for (const auto& d : in.type().tensor_type().shape().dim()) shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
  }
  return inputs == 1 ? shape : std::vector<int64_t>{};
}

// Weight-shared groups: tasks whose reference models share weights by content,
// each kept when MTS stitches it (as zoo-stitch will), else named in a note.
std::vector<zoo::MultitaskGroup> sharedWeightGroups(const std::vector<FoundTask>& tasks, const zoo::Zoo& zoo,
                                                    const ZooInitOptions& o, std::vector<std::string>& notes) {
  std::vector<zoo::MultitaskGroup> groups;
  if (o.groupMinShare <= 0) return groups;
  std::vector<const onnx::ModelProto*> refs;
  for (const auto& t : tasks) refs.push_back(&t.variants[0].model.model);
  for (const auto& family : mts::sharedWeightFamilies(refs, o.groupMinShare)) {
    zoo::MultitaskGroup g;
    g.name = tasks[static_cast<size_t>(family.members.front())].name + "_group";
    if (!validName(g.name)) g.name = fmt::format("group{}", groups.size() + 1);  // a task name near the length limit
    const auto shape = singleInputShape(*refs[static_cast<size_t>(family.members.front())]);
    g.sharedInput = !shape.empty();
    std::vector<std::string> names;
    for (int m : family.members) {
      const auto& t = tasks[static_cast<size_t>(m)];
      const auto& spec = zoo.tasks[static_cast<size_t>(m)];
      g.members.push_back({t.name, spec.variants.front().id, spec.variants.front().onnx});
      g.sharedInput = g.sharedInput && singleInputShape(*refs[static_cast<size_t>(m)]) == shape;
      names.push_back(t.name);
    }
    const std::string what = fmt::format("{} share {:.0f}% of the smallest one's weights ({:.2f} MB)",
                                         fmt::join(names, ", "),
                                         100.0 * static_cast<double>(family.sharedBytes) /
                                             static_cast<double>(std::max<int64_t>(family.smallestBytes, 1)),
                                         static_cast<double>(family.sharedBytes) / 1e6);
    if (auto stitched = mts::stitchZooGroup(zoo, g, mts::StitchMode::Mts, std::nullopt, o.dims); !stitched.ok()) {
      notes.push_back(fmt::format("{} but do not stitch as one group ({}); no group written", what,
                                  stitched.error().message));
      continue;
    }
    notes.push_back(fmt::format("weight-shared group {}: {}{}", g.name, what,
                                g.sharedInput ? ", one input shape: they read one input" : ""));
    groups.push_back(std::move(g));
  }
  return groups;
}

}  // namespace

Expected<ZooInitResult> runZooInit(const ZooInitOptions& o) {
  std::error_code ec;
  if (!fs::is_directory(o.dir, ec)) return makeError("{}: not a folder (zoo-init DIR: DIR/<task>/<variant>.onnx)", o.dir.string());
  if (fs::exists(o.out, ec) && !o.force)
    return makeError("{}: exists; zoo-init does not replace it (--force does)", o.out.string());
  ZooInitResult res;
  std::vector<FoundTask> tasks;
  for (const auto& d : sortedEntries(o.dir)) {
    if (!fs::is_directory(d) || d.filename().string().front() == '.') continue;
    bool hasOnnx = false;
    for (const auto& f : sortedEntries(d)) hasOnnx |= f.extension() == ".onnx";
    if (!hasOnnx) continue;
    ZP_ASSIGN_OR_RETURN(auto t, readTask(d, o));
    ZP_TRY(findDataset(t, o, res.notes));
    tasks.push_back(std::move(t));
  }
  if (tasks.empty())
    return makeError("{}: no task folders with ONNX files (zoo-init expects DIR/<task>/<variant>.onnx)", o.dir.string());
  const fs::path zooFile = fs::absolute(o.out).lexically_normal();
  res.zoo.file = zooFile;
  fs::path dirName = fs::absolute(o.dir).lexically_normal();
  if (dirName.filename().empty()) dirName = dirName.parent_path();  // "DIR/"
  res.zoo.name = !o.name.empty() ? o.name : dirName.filename().string();
  if (!validName(res.zoo.name))
    return makeError("--name {}: cannot name a zoo (letters, digits, '_', '.', '-'; at most 64)", res.zoo.name);
  res.zoo.description = fmt::format("written by zoo-init from {}", o.dir.string());
  ZP_ASSIGN_OR_RETURN(res.zoo.processors, chosenProcessors(o, zooFile));
  for (const auto& t : tasks) {
    std::vector<size_t> kept{0};
    res.variants.push_back({t.name, t.variants[0].id, t.variants[0].facts, true, {}});
    for (size_t k = 1; k < t.variants.size(); ++k) {
      VariantReport r{t.name, t.variants[k].id, t.variants[k].facts, false,
                      stitchProblem(t, k, res.zoo.processors, o, zooFile)};
      if (r.problem.empty()) kept.push_back(k);
      res.variants.push_back(std::move(r));
    }
    res.zoo.tasks.push_back(taskSpec(t, zooFile.parent_path(), kept));
  }
  const bool problems = std::any_of(res.variants.begin(), res.variants.end(),
                                    [](const VariantReport& v) { return !v.problem.empty(); });
  if (problems && !o.leaveOut) return res;
  res.groups = sharedWeightGroups(tasks, res.zoo, o, res.notes);
  Json zooJson = artifacts::zooToJson(res.zoo);
  if (!res.groups.empty()) zooJson["multitask_groups"] = artifacts::multitaskGroupsToJson(res.groups);
  ZP_TRY(writeFileAtomic(o.out, canonicalJson(zooJson)));
  res.written = true;
  return res;
}

std::string zooInitSummary(const ZooInitResult& r) {
  std::string s = fmt::format("{:<12} {:<10} {:<13} {:>9} {:<9} {}\n", "task", "variant", "kind", "sparsity",
                              "precision", "read from");
  for (const auto& v : r.variants)
    s += fmt::format("{:<12} {:<10} {:<13} {:>8.1f}% {:<9} {}{}\n", v.task, v.variant, v.facts.kind,
                     100 * v.facts.sparsity, v.facts.precision, v.facts.evidence,
                     v.reference ? " (the reference)" : v.problem.empty() ? "" : " (LEFT OUT)");
  std::string procs;
  bool imported = false;
  for (const auto& p : r.zoo.processors) {
    procs += procs.empty() ? "" : ", ";
    if (!p.host()) {
      procs += fmt::format("{} ({} profile {})", p.name, p.source, p.profileFile);
      imported = true;
    } else {
      procs += fmt::format("{} (core{} {}, {} kernels, {})", p.name, p.cores.size() == 1 ? "" : "s",
                           p.cores.empty() ? std::string("any") : fmt::format("{}", fmt::join(p.cores, ",")), p.policy,
                           p.gemm);
    }
  }
  s += fmt::format("processors: {}: {}\n", procs,
                   imported ? "imported profiles and configurations of this host's CPU cores"
                            : "configurations of this host's CPU cores (a real device's costs come in through an "
                              "imported profile; see zoo.json's processors[].profile, or zoo-init --processors)");
  for (const auto& n : r.notes) s += "note: " + n + "\n";
  return s;
}

}  // namespace zp::drivers
