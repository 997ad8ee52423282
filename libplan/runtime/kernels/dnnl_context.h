// What every oneDNN primitive of the runtime runs with: one CPU engine, a stream per
// thread (a primitive runs on whichever of the runtime's threads takes its piece) and
// a scratchpad per thread, ours: oneDNN's own (its default, library mode) is shared by
// the primitives of the thread that created them, which may not run on another thread
// while they run on two.
#pragma once
#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include <oneapi/dnnl/dnnl.hpp>

namespace zp::runtime {

const dnnl::engine& dnnlEngine();
dnnl::stream& dnnlThreadStream();
uint8_t* dnnlThreadScratchpad(size_t bytes);

// Weights of several primitives in one layout: the first call reorders `given` (raw
// weights at `data`) into `want`'s layout as *into; later calls check that `want` is
// that layout (false when it is not).
bool reorderWeightsOnce(const dnnl::memory::desc& given, const float* data, const dnnl::memory::desc& want,
                        dnnl::memory* into);
// Runs `primitive` on this thread's stream with this thread's scratchpad (`pad` its
// size) and waits for it.
void executeOnThisThread(const dnnl::primitive& primitive, std::unordered_map<int, dnnl::memory> args,
                         const dnnl::memory::desc& pad);

}  // namespace zp::runtime
