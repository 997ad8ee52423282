// Writing a weight cache from a session: the weights of its heavy nodes, for the
// kernels it chose, and the model skeleton; and the cache a cold schedule runs from.
#include <algorithm>
#include <cassert>
#include <set>

#include "libplan/runtime/cache/crc32c.h"
#include "libplan/runtime/cache/model_extents.h"
#include "libplan/runtime/cache/skeleton.h"
#include "libplan/runtime/session_impl.h"
#include "libplan/util/file.h"

namespace zp::runtime {

namespace {

// Step i's entry: its weights for the kernel the session chose.
Expected<CacheEntry> entryOf(const Session::Impl& m, size_t i) {
  const WeightInfo* w = m.steps[i].op->weights();
  assert(w && w->packed);
  const std::string& name = m.steps[i].node->name();
  if (m.pending && m.pendingVerify[i]) {
    // Never copy a payload this session has not checked into a new file.
    std::string why;
    if (!m.cache->verify(name, w->kernel, &why))
      return makeError("{}: node '{}': {}; load the model without this cache to write a new one",
                       m.cache->path().string(), name, why);
  }
  CacheEntry e;
  e.node = name;
  e.kernel = w->kernel;
  e.transform = w->transform;
  e.sources = w->sources;
  e.zeroFraction = w->zeroFraction;
  e.packed = w->packed;
  if (w->sourceCrcKnown) {
    e.sourceCrc = w->sourceCrc;
  } else {
    // Weights used in place: chain the CRC over the source tensors now.
    uint32_t crc = 0;
    for (const auto& src : w->sources) {
      const Tensor& t = m.values.vals[static_cast<size_t>(m.values.ids.at(src))];
      assert(t.data || t.size() == 0);
      crc = crc32c(t.data, t.bytes(), crc);
    }
    e.sourceCrc = crc;
  }
  return e;
}

// The skeleton: large initializers whose every reader is a node covered by an entry
// made from them lose their data, and those in `refs` point at the model file.
// `covered`: the model's nodes (by index) with the sources of their entries.
std::string skeletonOf(const Session::Impl& m, const std::map<int, std::set<std::string>>& covered,
                       const std::map<std::string, ModelFileRef>& refs,
                       const std::map<std::string, std::string>& metadata = {}) {
  const auto& g = m.model.graph();
  std::set<std::string> keep;
  for (int i = 0; i < g.node_size(); ++i) {
    auto it = covered.find(i);
    for (const auto& in : g.node(i).input())
      if (it == covered.end() || !it->second.count(in)) keep.insert(in);
  }
  for (const auto& o : g.output()) keep.insert(o.name());
  // A reference is read only for the nodes it was made for: a weight anyone else reads keeps its data.
  std::map<std::string, ModelFileRef> usable;
  for (const auto& [name, ref] : refs)
    if (!keep.count(name)) usable.emplace(name, ref);
  return serializeSkeleton(m.model, [&](const std::string& name) { return keep.count(name) > 0; }, usable, metadata);
}

}  // namespace

Status Session::writeCache(const std::filesystem::path& path, bool identifyModelFile) const {
  const Impl& m = *impl_;
  // Heavy nodes, in execution order. Names key the entries: a name used twice gets none.
  std::map<std::string, int> nameCount;
  for (const auto& step : m.steps)
    if (step.op->weights() && step.op->weights()->packed) ++nameCount[step.node->name()];
  std::vector<CacheEntry> entries;
  std::map<int, std::set<std::string>> covered;
  for (size_t i = 0; i < m.steps.size(); ++i) {
    const WeightInfo* w = m.steps[i].op->weights();
    if (!w || !w->packed || nameCount[m.steps[i].node->name()] != 1) continue;
    ZP_ASSIGN_OR_RETURN(CacheEntry e, entryOf(m, i));
    entries.push_back(std::move(e));
    covered[m.steps[i].source].insert(w->sources.begin(), w->sources.end());
  }
  CacheModel cm;
  if (identifyModelFile) cm.identity = identity_;
  cm.skeleton = skeletonOf(m, covered, {});
  return writeWeightCache(path, entries, cm);
}

namespace {

// The model file's bytes of every large source of the nodes a schedule transforms
// (cold or warm); sources stored otherwise stay in the skeleton.
Expected<std::map<std::string, ModelFileRef>> modelRefsFor(const std::filesystem::path& model,
                                                           const std::set<std::string>& sources) {
  std::map<std::string, ModelFileRef> refs;
  if (sources.empty()) return refs;
  ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(model));
  ZP_ASSIGN_OR_RETURN(auto extents, initializerExtents(bytes, model.string()));
  for (const auto& name : sources) {
    auto it = extents.find(name);
    if (it == extents.end() || it->second.bytes <= kSkeletonStripBytes) continue;
    const ByteExtent& e = it->second;
    refs[name] = ModelFileRef{e.offset, e.bytes, crc32c(bytes.data() + e.offset, e.bytes)};
  }
  return refs;
}

// Seeded random inputs (dynamic dims 1), as measure.h's randomInputs makes them.
TensorMap randomInputsOf(const Session& s) {
  TensorMap m;
  uint64_t k = 0;
  for (const auto& io : s.inputs()) m[io.name] = randomInput(io, k++);
  return m;
}

SessionOptions optionsWith(const SessionOptions& base, const ColdSchedule& schedule, bool warm) {
  SessionOptions o = base;
  o.cache.clear();
  o.coldSchedule.reset();
  o.cacheIsForModel = false;
  o.computeSourceChecksums = true;
  o.kernels.policy = "default";
  o.kernels.perNode.clear();
  for (const auto& s : schedule.steps)
    if (!s.kernel.empty()) o.kernels.perNode[s.node] = warm && s.switchesKernel() ? s.warmKernel : s.kernel;
  return o;
}

}  // namespace

Status Session::writeModelCache(const std::filesystem::path& model, SessionOptions options,
                                const std::filesystem::path& path) {
  options.computeSourceChecksums = true;
  ZP_ASSIGN_OR_RETURN(auto session, load(model, options));
  return session->writeCache(path);
}

Status Session::writeColdCache(const std::filesystem::path& model, const ColdSchedule& schedule,
                               const SessionOptions& options, const std::filesystem::path& path,
                               bool identifyModelFile) {
  ZP_ASSIGN_OR_RETURN(auto cold, load(model, optionsWith(options, schedule, false)));
  const Impl& m = *cold->impl_;
  ZP_TRY(checkScheduleMatches(schedule, m.steps, cold->nodeInfos_, cold->label_));
  std::unique_ptr<Session> warm;
  const auto& steps = schedule.steps;
  if (std::any_of(steps.begin(), steps.end(), [](const ColdStep& s) { return s.switchesKernel(); })) {
    ZP_ASSIGN_OR_RETURN(warm, load(model, optionsWith(options, schedule, true)));
  }
  // One run of each: the scratch memory the cold and the warm kernels need, per slot
  // the larger, allocated at load from now on (runs after the switch allocate none either).
  std::vector<size_t> need;
  for (Session* s : {cold.get(), warm.get()}) {
    if (!s) continue;
    ZP_TRY(s->run(randomInputsOf(*s)));
    const auto sizes = s->impl_->scratch.sizes();
    need.resize(std::max(need.size(), sizes.size()), 0);
    for (size_t k = 0; k < sizes.size(); ++k) need[k] = std::max(need[k], sizes[k]);
  }
  std::string scratch;
  for (size_t b : need) {
    if (!scratch.empty()) scratch += ',';
    scratch += std::to_string(b);
  }
  std::vector<CacheEntry> entries;
  std::map<int, std::set<std::string>> covered;
  std::set<std::string> transformed;  // sources of weights transformed at load, cold or warm
  auto add = [&](const Session& s, size_t i) -> Status {
    ZP_ASSIGN_OR_RETURN(CacheEntry e, entryOf(*s.impl_, i));
    covered[m.steps[i].source].insert(e.sources.begin(), e.sources.end());
    entries.push_back(std::move(e));
    return {};
  };
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].weights == ColdWeights::Cache) ZP_TRY(add(*cold, i));
    const WeightInfo* w = m.steps[i].op->weights();
    if (w && (steps[i].weights == ColdWeights::Transform ||
              (steps[i].switchesKernel() && steps[i].warmWeights == ColdWeights::Transform)))
      transformed.insert(w->sources.begin(), w->sources.end());
  }
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].switchesKernel() && steps[i].warmWeights == ColdWeights::Cache) ZP_TRY(add(*warm, i));
  ZP_ASSIGN_OR_RETURN(auto refs, modelRefsFor(model, transformed));
  // A node whose weights are transformed reads its sources: covered when each large one is referenced.
  for (size_t i = 0; i < steps.size(); ++i) {
    const WeightInfo* w = m.steps[i].op->weights();
    if (!w || steps[i].weights != ColdWeights::Transform) continue;
    for (const auto& src : w->sources)
      if (refs.count(src)) covered[m.steps[i].source].insert(src);
  }
  CacheModel cm;
  if (identifyModelFile) cm.identity = cold->identity_;
  cm.skeleton = skeletonOf(m, covered, refs, {{kSkeletonScratchKey, scratch}});
  return writeWeightCache(path, entries, cm);
}

}  // namespace zp::runtime
