// Writing a weight cache from a session: the weights of its heavy nodes, for the
// kernels it chose, and the model skeleton.
#include <algorithm>
#include <cassert>
#include <set>

#include "libplan/runtime/cache/crc32c.h"
#include "libplan/runtime/cache/skeleton.h"
#include "libplan/runtime/session_impl.h"

namespace zp::runtime {

Status Session::writeCache(const std::filesystem::path& path, bool identifyModelFile) const {
  const Impl& m = *impl_;
  // Heavy nodes, in execution order. Names key the entries: a name used twice gets none.
  std::map<std::string, int> nameCount;
  for (const auto& step : m.steps)
    if (step.op->weights() && step.op->weights()->packed) ++nameCount[step.node->name()];
  std::vector<CacheEntry> entries;
  std::map<int, const WeightInfo*> cached;  // the model's nodes with an entry, by index
  for (size_t i = 0; i < m.steps.size(); ++i) {
    const WeightInfo* w = m.steps[i].op->weights();
    if (!w || !w->packed || nameCount[m.steps[i].node->name()] != 1) continue;
    const std::string& name = m.steps[i].node->name();
    if (m.pending && m.pendingVerify[i]) {
      // Never copy a payload this session has not checked into a new file.
      std::string why;
      if (!m.cache->verify(name, &why))
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
    entries.push_back(std::move(e));
    cached[m.steps[i].source] = w;
  }

  // The skeleton: large initializers whose every reader is a node with an entry
  // made from them lose their data.
  const auto& g = m.model.graph();
  std::set<std::string> keep;
  for (int i = 0; i < g.node_size(); ++i) {
    auto it = cached.find(i);
    for (const auto& in : g.node(i).input())
      if (it == cached.end() || std::find(it->second->sources.begin(), it->second->sources.end(), in) ==
                                    it->second->sources.end())
        keep.insert(in);
  }
  for (const auto& o : g.output()) keep.insert(o.name());
  CacheModel cm;
  if (identifyModelFile) cm.identity = identity_;
  cm.skeleton = serializeSkeleton(m.model, [&](const std::string& name) { return keep.count(name) > 0; });
  return writeWeightCache(path, entries, cm);
}

}  // namespace zp::runtime
