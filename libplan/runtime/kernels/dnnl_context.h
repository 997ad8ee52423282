// What every oneDNN primitive of the runtime runs with: one CPU engine, a stream per
// thread (a primitive runs on whichever of the runtime's threads takes its piece) and
// a scratchpad per thread, ours: oneDNN's own (its default, library mode) is shared by
// the primitives of the thread that created them, which may not run on another thread
// while they run on two.
#pragma once
#include <cstddef>
#include <cstdint>

#include <oneapi/dnnl/dnnl.hpp>

namespace zp::runtime {

const dnnl::engine& dnnlEngine();
dnnl::stream& dnnlThreadStream();
uint8_t* dnnlThreadScratchpad(size_t bytes);

}  // namespace zp::runtime
